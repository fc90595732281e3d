/**
 * Each user's webhook signing secret (table webhook_secrets). Stored as written, not hashed: the
 * service needs it to sign, and the user reads it back on request, as Stripe's are shown.
 */
import { randomString } from '../accounts/secrets.ts';
import type { Queryable } from '../storage/db.ts';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
const WEBHOOK_SECRET_RANDOM_LENGTH = 32;

export function newWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomString(WEBHOOK_SECRET_RANDOM_LENGTH);
}

export class WebhookSecrets {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  /** The user's secret, created on first use. Two first uses at once agree on one secret. */
  async get(userId: number): Promise<string> {
    const existing = await this.#read(userId);
    if (existing !== null) return existing;
    // A concurrent first use may insert between the read and here: its secret then stays, and
    // the read below returns it to both callers.
    await this.#db.query('INSERT INTO webhook_secrets (user_id, secret) VALUES ($1, $2) ON CONFLICT (user_id) DO NOTHING', [userId, newWebhookSecret()]);
    const created = await this.#read(userId);
    if (created === null) throw new Error(`No webhook secret could be stored for user ${userId}.`);
    return created;
  }

  /** Replaces the user's secret with a new one, which signs every delivery from now on, retries included. */
  async rotate(userId: number): Promise<string> {
    const [row] = await this.#db.query<{ secret: string }>(
      `INSERT INTO webhook_secrets (user_id, secret) VALUES ($1, $2)
       ON CONFLICT (user_id) DO UPDATE SET secret = EXCLUDED.secret, rotated_at = clock_timestamp()
       RETURNING secret`,
      [userId, newWebhookSecret()],
    );
    return row.secret;
  }

  async #read(userId: number): Promise<string | null> {
    const [row] = await this.#db.query<{ secret: string }>('SELECT secret FROM webhook_secrets WHERE user_id = $1', [userId]);
    return row?.secret ?? null;
  }
}
