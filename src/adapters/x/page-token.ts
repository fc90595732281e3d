/**
 * Page tokens of /v1/mb/search and /v1/mb/user-tweets: opaque to clients, valid only for the
 * query or user they came from, and unforgeable. A token is base64url JSON `{c, s, d}` (X's
 * cursor, a hash of the scope, the direction) followed by an HMAC-SHA256 of it under the server's
 * secret (PAGE_TOKEN_SECRET, or one generated once and kept in the database, so every replica
 * signs and checks with the same one).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export type PageDirection = 'next' | 'previous';

export type PageTokenCheck = { ok: true; cursor: string } | { ok: false; reason: 'invalid' | 'other_scope' };

/** The scope a token is bound to: `search:<product>:<query>` or `user:<lowercased username>`. */
export const searchScope = (query: string, product: string) => `search:${product}:${query}`;
export const userScope = (username: string) => `user:${username.toLowerCase()}`;

function scopeHash(scope: string): string {
  return createHash('sha256').update(scope).digest('base64url').slice(0, 22);
}

export class PageTokens {
  readonly #secret: () => Promise<Buffer>;

  /** `secret` is asked for at each use (it may come from the database the first time). */
  constructor(secret: () => Promise<Buffer>) {
    this.#secret = secret;
  }

  async sign(cursor: string, scope: string, direction: PageDirection): Promise<string> {
    const payload = Buffer.from(JSON.stringify({ c: cursor, s: scopeHash(scope), d: direction })).toString('base64url');
    return `${payload}.${this.#mac(await this.#secret(), payload)}`;
  }

  async verify(token: string, scope: string, direction: PageDirection): Promise<PageTokenCheck> {
    const match = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!match) return { ok: false, reason: 'invalid' };
    const [, payload, mac] = match;
    const expected = Buffer.from(this.#mac(await this.#secret(), payload));
    if (!timingSafeEqual(expected, Buffer.from(mac))) return { ok: false, reason: 'invalid' };
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return { ok: false, reason: 'invalid' };
    }
    const { c, s, d } = (decoded ?? {}) as Record<string, unknown>;
    if (typeof c !== 'string' || typeof s !== 'string' || d !== direction) return { ok: false, reason: 'invalid' };
    if (s !== scopeHash(scope)) return { ok: false, reason: 'other_scope' };
    return { ok: true, cursor: c };
  }

  #mac(secret: Buffer, payload: string): string {
    return createHmac('sha256', secret).update(payload).digest('base64url');
  }
}
