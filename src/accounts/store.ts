/** Users and their API tokens. */
import type { Database, Queryable } from '../storage/db.ts';
import { hashesEqual, newSecretKey, newTokenSecret, parseBearer, sha256Hex } from './secrets.ts';
import { PRODUCTS, type Product } from '../credits/products.ts';

/** Laravel's `unique` rule on an e-mail, as every front end answers it. */
export const EMAIL_TAKEN_MESSAGE = 'The email has already been taken.';

export class EmailTakenError extends Error {
  constructor(email: string) {
    super(`The e-mail ${email} is already taken.`);
  }
}

export interface AuthenticatedUser {
  id: number;
  tokenId: number;
}

export interface UserView {
  id: number;
  name: string;
  email: string;
  credits: number;
  created_at: string;
  updated_at: string;
  balances: Record<Product, number>;
}

/** ISO 8601 UTC with microseconds and Z, as Laravel 8 serialises dates. */
export const ISO_MICROS = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;
export const isoColumn = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', ${ISO_MICROS})`;

interface CachedToken {
  userId: number;
  tokenId: number;
  expiresAt: number;
}

/** Most token look-ups kept in memory; the oldest go first. */
const TOKEN_CACHE_ENTRIES = 10_000;
/** NOTIFY channel on which a revoked token's id is announced to every server process. */
export const TOKEN_REVOKED_CHANNEL = 'gleaner_token_revoked';

export class AccountStore {
  readonly db: Database;
  /**
   * How long a successful token look-up is reused, sparing the database one query per request.
   * A revocation through this store evicts at once; one made by another process sharing the
   * database (the CLI against PostgreSQL, a second server) takes effect here within this time.
   */
  readonly tokenCacheMs: number;
  /** Sanctum updates last_used_at on every request; we write it at most once a minute per token. */
  private readonly lastTouched = new Map<number, number>();
  /** Keyed by the SHA-256 hex of the token secret, which is what the database stores too. */
  private readonly tokenCache = new Map<string, CachedToken>();
  /** Bumped by every revocation: a look-up that raced one is not cached. */
  private revocations = 0;
  /** Set while revocations from other processes cannot arrive: nothing is cached then. */
  private cachingPaused = false;

  constructor(db: Database, options: { tokenCacheMs?: number } = {}) {
    this.db = db;
    this.tokenCacheMs = options.tokenCacheMs ?? 2_000;
  }

  /** Resolves a bearer value to its user, or null (unknown, malformed or revoked). */
  async authenticate(bearer: string): Promise<AuthenticatedUser | null> {
    const parsed = parseBearer(bearer);
    if (!parsed) return null;
    const hash = sha256Hex(parsed.secret);
    const cached = this.tokenCache.get(hash);
    if (cached) {
      // A secret sent under another token's id is refused by the database path below.
      if (cached.expiresAt > Date.now() && (parsed.id === null || parsed.id === cached.tokenId)) {
        this.touch(cached.tokenId);
        return { id: cached.userId, tokenId: cached.tokenId };
      }
      if (cached.expiresAt <= Date.now()) this.tokenCache.delete(hash);
    }
    const revocationsBefore = this.revocations;
    const rows =
      parsed.id === null
        ? await this.db.query<{ id: number; user_id: number; token_hash: string }>(
            'SELECT id, user_id, token_hash FROM api_tokens WHERE token_hash = $1 AND revoked_at IS NULL',
            [hash],
          )
        : await this.db.query<{ id: number; user_id: number; token_hash: string }>(
            'SELECT id, user_id, token_hash FROM api_tokens WHERE id = $1 AND revoked_at IS NULL',
            [parsed.id],
          );
    const row = rows[0];
    if (!row || !hashesEqual(row.token_hash, hash)) return null;
    const user = { id: Number(row.user_id), tokenId: Number(row.id) };
    if (this.tokenCacheMs > 0 && !this.cachingPaused && revocationsBefore === this.revocations) this.remember(hash, user);
    this.touch(user.tokenId);
    return user;
  }

  private remember(hash: string, user: AuthenticatedUser): void {
    if (this.tokenCache.size >= TOKEN_CACHE_ENTRIES) this.tokenCache.delete(this.tokenCache.keys().next().value!);
    this.tokenCache.set(hash, { userId: user.id, tokenId: user.tokenId, expiresAt: Date.now() + this.tokenCacheMs });
  }

  /** Drops a token from the cache: no request authenticates with it from now on. */
  forget(tokenId: number): void {
    this.revocations += 1;
    for (const [hash, entry] of this.tokenCache) if (entry.tokenId === tokenId) this.tokenCache.delete(hash);
  }

  /**
   * Turns the token cache off while revocations made elsewhere cannot reach this process (its
   * listening connection is lost), and back on, empty, once they can again.
   */
  setCaching(enabled: boolean): void {
    this.cachingPaused = !enabled;
    this.revocations += 1;
    this.tokenCache.clear();
  }

  private touch(tokenId: number): void {
    const now = Date.now();
    if (now - (this.lastTouched.get(tokenId) ?? 0) < 60_000) return;
    this.lastTouched.set(tokenId, now);
    this.db.query('UPDATE api_tokens SET last_used_at = clock_timestamp() WHERE id = $1', [tokenId]).catch(() => {});
  }

  /** Throws EmailTakenError when another user has the address (checked by the unique index). */
  async createUser(input: { name: string; email: string; isOwner?: boolean }): Promise<{ id: number; token: string; secret_key: string }> {
    const secretKey = newSecretKey();
    return this.db.transaction(async (tx) => {
      const [user] = await tx.query<{ id: number }>(
        'INSERT INTO users (name, email, secret_key_hash, is_owner) VALUES ($1, $2, $3, $4) RETURNING id',
        [input.name, input.email, sha256Hex(secretKey), input.isOwner ?? false],
      );
      for (const product of PRODUCTS) {
        await tx.query('INSERT INTO balances (user_id, product, balance) VALUES ($1, $2, 0)', [user.id, product]);
      }
      const token = await insertToken(tx, user.id, 'default');
      return { id: Number(user.id), token, secret_key: secretKey };
    }).catch((error: unknown) => {
      // Two creations of one address at once: the index refuses the second.
      if ((error as { code?: string }).code === '23505' && String((error as { constraint?: string }).constraint ?? (error as Error).message).includes('users_email_unique')) {
        throw new EmailTakenError(input.email);
      }
      throw error;
    });
  }

  async userCount(): Promise<number> {
    const [row] = await this.db.query<{ n: number }>('SELECT count(*)::int AS n FROM users');
    return row.n;
  }

  /** Read on every operator call: taking the owner flag away takes effect at once. */
  async isOwner(userId: number): Promise<boolean> {
    const [row] = await this.db.query<{ is_owner: boolean }>('SELECT is_owner FROM users WHERE id = $1', [userId]);
    return row?.is_owner === true;
  }

  async userExists(userId: number): Promise<boolean> {
    return (await this.db.query('SELECT 1 FROM users WHERE id = $1', [userId])).length > 0;
  }

  async emailTaken(email: string, exceptUserId?: number): Promise<boolean> {
    const rows = await this.db.query('SELECT 1 FROM users WHERE lower(email) = lower($1) AND id <> $2', [email, exceptUserId ?? 0]);
    return rows.length > 0;
  }

  async checkSecretKey(userId: number, secretKey: string): Promise<boolean> {
    const [row] = await this.db.query<{ secret_key_hash: string }>('SELECT secret_key_hash FROM users WHERE id = $1', [userId]);
    return !!row && hashesEqual(row.secret_key_hash, sha256Hex(secretKey));
  }

  async updateEmail(userId: number, email: string): Promise<void> {
    await this.db.query('UPDATE users SET email = $2, updated_at = clock_timestamp() WHERE id = $1', [userId, email]);
  }

  async view(userId: number): Promise<UserView | null> {
    const rows = await this.db.query<{
      id: number;
      name: string;
      email: string;
      created_at: string;
      updated_at: string;
      product: Product;
      balance: number;
    }>(
      `SELECT u.id, u.name, u.email, ${isoColumn('u.created_at')} AS created_at, ${isoColumn('u.updated_at')} AS updated_at,
              b.product, b.balance
         FROM users u LEFT JOIN balances b ON b.user_id = u.id
        WHERE u.id = $1`,
      [userId],
    );
    if (rows.length === 0) return null;
    const balances = Object.fromEntries(PRODUCTS.map((p) => [p, 0])) as Record<Product, number>;
    for (const row of rows) if (row.product) balances[row.product] = Number(row.balance);
    const first = rows[0];
    return {
      id: Number(first.id),
      name: first.name,
      email: first.email,
      credits: balances.scraping,
      created_at: first.created_at,
      updated_at: first.updated_at,
      balances,
    };
  }

  async createToken(userId: number, name = 'default'): Promise<{ id: number; token: string }> {
    const token = await insertToken(this.db, userId, name);
    return { id: Number(token.split('|')[0]), token };
  }

  async revokeToken(tokenId: number): Promise<boolean> {
    try {
      // Other server processes drop the token from their caches when this commits.
      const rows = await this.db.query(
        `WITH revoked AS (UPDATE api_tokens SET revoked_at = clock_timestamp() WHERE id = $1 AND revoked_at IS NULL RETURNING id)
         SELECT id, pg_notify('${TOKEN_REVOKED_CHANNEL}', id::text) FROM revoked`,
        [tokenId],
      );
      return rows.length > 0;
    } finally {
      // After the update: a look-up that read the token before it committed is not kept.
      this.forget(tokenId);
    }
  }

  /**
   * Replaces an active token with a new one of the same user and name, in one transaction: the
   * old token stops working as the new one starts. Null when there is no such active token.
   */
  async rotateToken(tokenId: number): Promise<{ id: number; user: number; token: string; replaced: number } | null> {
    try {
      return await this.db.transaction(async (tx) => {
        const [old] = await tx.query<{ user_id: number; name: string }>(
          'UPDATE api_tokens SET revoked_at = clock_timestamp() WHERE id = $1 AND revoked_at IS NULL RETURNING user_id, name',
          [tokenId],
        );
        if (!old) return null;
        await tx.query(`SELECT pg_notify('${TOKEN_REVOKED_CHANNEL}', $1::text)`, [String(tokenId)]);
        const token = await insertToken(tx, Number(old.user_id), old.name);
        return { id: Number(token.split('|')[0]), user: Number(old.user_id), token, replaced: tokenId };
      });
    } finally {
      this.forget(tokenId);
    }
  }

  async listTokens(userId: number) {
    return this.db.query<{ id: number; name: string; created_at: string; last_used_at: string | null; revoked_at: string | null }>(
      `SELECT id, name, ${isoColumn('created_at')} AS created_at, ${isoColumn('last_used_at')} AS last_used_at,
              ${isoColumn('revoked_at')} AS revoked_at
         FROM api_tokens WHERE user_id = $1 ORDER BY id`,
      [userId],
    );
  }

  async listUsers() {
    return this.db.query<{ id: number; name: string; email: string; stripe_customer: string | null; created_at: string }>(
      `SELECT id, name, email, stripe_customer_id AS stripe_customer, ${isoColumn('created_at')} AS created_at FROM users ORDER BY id`,
    );
  }

  /**
   * Links a Stripe customer to the user (replacing the user's previous one): its paid invoices
   * renew this user's plans. Refused when another user already has that customer.
   */
  async linkStripeCustomer(userId: number, customerId: string): Promise<{ ok: true } | { ok: false; userId: number }> {
    const owner = async () => {
      const [row] = await this.db.query<{ id: number }>('SELECT id FROM users WHERE stripe_customer_id = $1 AND id <> $2', [customerId, userId]);
      return row ? { ok: false as const, userId: Number(row.id) } : null;
    };
    const taken = await owner();
    if (taken) return taken;
    try {
      await this.db.query('UPDATE users SET stripe_customer_id = $2, updated_at = clock_timestamp() WHERE id = $1', [userId, customerId]);
      return { ok: true };
    } catch (error) {
      // Linked to someone else between the check and the update (unique index).
      if ((error as { code?: string }).code === '23505') {
        const raced = await owner();
        if (raced) return raced;
      }
      throw error;
    }
  }

  /** Removes the user's Stripe customer; returns the one it had (null when none). */
  async unlinkStripeCustomer(userId: number): Promise<string | null> {
    const [row] = await this.db.query<{ previous: string | null }>(
      `UPDATE users u SET stripe_customer_id = NULL, updated_at = clock_timestamp()
         FROM (SELECT id, stripe_customer_id FROM users WHERE id = $1) prior
        WHERE u.id = prior.id RETURNING prior.stripe_customer_id AS previous`,
      [userId],
    );
    return row?.previous ?? null;
  }
}

async function insertToken(db: Queryable, userId: number, name: string): Promise<string> {
  const secret = newTokenSecret();
  const [row] = await db.query<{ id: number }>(
    'INSERT INTO api_tokens (user_id, name, token_hash) VALUES ($1, $2, $3) RETURNING id',
    [userId, name, sha256Hex(secret)],
  );
  return `${row.id}|${secret}`;
}
