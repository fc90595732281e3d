/**
 * Webhook events (table webhook_events): what happened, to whom it is sent, and how its delivery
 * went. The body is built once, when the event is recorded, so every attempt sends the same bytes
 * under the same id and a receiver can drop the duplicates that at-least-once delivery brings.
 */
import { randomUUID } from 'node:crypto';
import { isoColumn } from '../accounts/store.ts';
import type { Database, Queryable } from '../storage/db.ts';
import { isoMicros } from '../core/time.ts';
import { isUuid } from '../core/uuid.ts';

/** Events, delivered or not, are kept as long as the job they belong to. */
export const WEBHOOK_EVENT_TTL_DAYS = 7;

export type WebhookEventState = 'pending' | 'delivered' | 'failed';

/** ISO 8601 UTC with microseconds, as every timestamp on the wire (contract §1). */

/** The exact JSON body of an event (contract §9). */
export function webhookEventBody(event: { id: string; type: string; jobId: string | null; createdAt: Date; data: unknown }): string {
  return JSON.stringify({ id: event.id, type: event.type, job_id: event.jobId, created_at: isoMicros(event.createdAt), data: event.data ?? {} });
}

/** An event as the delivery worker needs it. Times are ISO 8601 with microseconds. */
export interface StoredWebhookEvent {
  id: string;
  userId: number;
  jobId: string | null;
  source: string;
  url: string;
  type: string;
  body: string;
  state: WebhookEventState;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
  expiresAt: string;
}

/** How an event's delivery went, as the answers that list deliveries show it. */
export interface DeliveryAttempts {
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

/** One line of a job's deliveries, as the operator's job view shows it. */
export interface WebhookEventSummary extends DeliveryAttempts {
  id: string;
  type: string;
  state: WebhookEventState;
}

/** Longest error text stored with an event. */
const MAX_ERROR_LENGTH = 500;
const storedError = (error: string) => error.slice(0, MAX_ERROR_LENGTH);

export class WebhookEventStore {
  readonly #db: Database;
  readonly #now: () => number;

  constructor(db: Database, options: { now?: () => number } = {}) {
    this.#db = db;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Records an event in the caller's transaction, so it exists exactly when what caused it does
   * (and the task that delivers it can be enqueued in the same transaction).
   */
  async record(tx: Queryable, event: { userId: number; jobId: string | null; source: string; url: string; type: string; data: unknown }): Promise<{ id: string }> {
    const id = randomUUID();
    const createdAt = new Date(this.#now());
    const body = webhookEventBody({ id, type: event.type, jobId: event.jobId, createdAt, data: event.data });
    await tx.query(
      `INSERT INTO webhook_events (id, user_id, job_id, source, url, type, body, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::timestamptz, $8::timestamptz + make_interval(days => $9))`,
      [id, event.userId, event.jobId, event.source, event.url, event.type, body, createdAt.toISOString(), WEBHOOK_EVENT_TTL_DAYS],
    );
    return { id };
  }

  async load(id: string): Promise<StoredWebhookEvent | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.#db.query<StoredWebhookEvent>(
      `SELECT id, user_id AS "userId", job_id AS "jobId", source, url, type, body, state, attempts,
              last_status AS "lastStatus", last_error AS "lastError",
              ${isoColumn('created_at')} AS "createdAt", ${isoColumn('delivered_at')} AS "deliveredAt", ${isoColumn('expires_at')} AS "expiresAt"
         FROM webhook_events WHERE id = $1`,
      [id],
    );
    return row ?? null;
  }

  /**
   * An attempt was answered 2xx: counted, and the event is done. False when the event is unknown
   * or already delivered (a duplicate attempt).
   */
  async markDelivered(id: string, status: number): Promise<boolean> {
    return this.#update(
      id,
      `UPDATE webhook_events
          SET state = 'delivered', attempts = attempts + 1, last_status = $2, last_error = NULL, delivered_at = clock_timestamp()
        WHERE id = $1 AND state <> 'delivered'`,
      [status],
    );
  }

  /** An attempt failed and will be tried again: counted, with its status (when answered) and why. False unless pending. */
  async markAttempt(id: string, attempt: { status?: number; error: string }): Promise<boolean> {
    return this.#update(
      id,
      `UPDATE webhook_events SET attempts = attempts + 1, last_status = $2, last_error = $3
        WHERE id = $1 AND state = 'pending'`,
      [attempt.status ?? null, storedError(attempt.error)],
    );
  }

  /**
   * Gives the event up: refused (a private address), or out of retries. Not an attempt of its own:
   * record the last attempt with `markAttempt` first when one was made. False unless pending.
   */
  async markFailed(id: string, error: string): Promise<boolean> {
    return this.#update(id, `UPDATE webhook_events SET state = 'failed', last_error = $2 WHERE id = $1 AND state = 'pending'`, [storedError(error)]);
  }

  /** A job's events, oldest first. */
  async listForJob(jobId: string): Promise<WebhookEventSummary[]> {
    if (!isUuid(jobId)) return [];
    return this.#db.query<WebhookEventSummary>(
      `SELECT id, type, state, attempts, last_status, last_error,
              ${isoColumn('created_at')} AS created_at, ${isoColumn('delivered_at')} AS delivered_at
         FROM webhook_events WHERE job_id = $1 ORDER BY created_at, id`,
      [jobId],
    );
  }

  async #update(id: string, sql: string, params: unknown[]): Promise<boolean> {
    if (!isUuid(id)) return false;
    const rows = await this.#db.query<{ id: string }>(`${sql} RETURNING id`, [id, ...params]);
    return rows.length > 0;
  }
}
