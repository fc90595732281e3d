/**
 * The monitors' tables (migration 0009): the monitors, their watched addresses, and their events.
 * Events are webhook_events rows (source `monitor`) plus a chain_monitor_events row giving their
 * order and billing; both are written in the caller's transaction.
 */
import { randomUUID } from 'node:crypto';
import { isoColumn } from '../accounts/store.ts';
import type { Queryable } from '../storage/db.ts';
import { isoMicros } from '../core/time.ts';
import { isUuid } from '../core/uuid.ts';
import { WEBHOOK_EVENT_TTL_DAYS, type DeliveryAttempts, type WebhookEventState } from '../webhooks/events.ts';
import type { MonitorAsset } from './matching.ts';

/**
 * `active`; `paused_no_credits`: its owner's balance could not pay (the owner resumes it);
 * `paused`: stopped by the operator (`gleaner monitors pause`), resumed only by the operator.
 */
export const MONITOR_STATUSES = ['active', 'paused_no_credits', 'paused'] as const;
export type MonitorStatus = (typeof MONITOR_STATUSES)[number];

export interface MonitorRow {
  id: string;
  user_id: number;
  chain: string;
  addresses: string[];
  webhook_url: string;
  asset: MonitorAsset;
  /** Base units, as a decimal string. */
  min_value: string;
  confirmations: number;
  status: MonitorStatus;
  from_block: number;
  created_at: string;
  updated_at: string;
}

export interface NewMonitor {
  userId: number;
  chain: string;
  addresses: string[];
  /** The matching form of each address, in the same order. */
  keys: string[];
  webhookUrl: string;
  asset: MonitorAsset;
  minValue: bigint;
  confirmations: number;
  fromBlock: number;
}

/** One delivery of a monitor, as `GET /v1/chain/monitors/{id}/events` shows it. */
export interface MonitorEventView extends DeliveryAttempts {
  id: string;
  type: string;
  status: WebhookEventState;
}


const MONITOR_COLUMNS = `id, user_id::int AS user_id, chain, addresses, webhook_url, asset, min_value::text AS min_value, confirmations, status,
  from_block::int AS from_block, ${isoColumn('created_at')} AS created_at, ${isoColumn('updated_at')} AS updated_at`;

export class MonitorStore {
  readonly #db: Queryable;

  constructor(db: Queryable) {
    this.#db = db;
  }

  async create(tx: Queryable, monitor: NewMonitor): Promise<MonitorRow> {
    const id = randomUUID();
    const [row] = await tx.query<MonitorRow>(
      `INSERT INTO chain_monitors (id, user_id, chain, addresses, webhook_url, asset, min_value, confirmations, from_block)
       VALUES ($1, $2, $3, $4::text[], $5, $6, $7::numeric, $8, $9) RETURNING ${MONITOR_COLUMNS}`,
      [id, monitor.userId, monitor.chain, monitor.addresses, monitor.webhookUrl, monitor.asset, monitor.minValue.toString(), monitor.confirmations, monitor.fromBlock],
    );
    await tx.query(
      `INSERT INTO chain_monitor_addresses (monitor_id, chain, address) SELECT $1, $2, a FROM unnest($3::text[]) AS a ON CONFLICT DO NOTHING`,
      [id, monitor.chain, [...new Set(monitor.keys)]],
    );
    return row;
  }

  /** The monitor, when it exists and (given a user) belongs to that user. */
  async get(id: string, userId?: number): Promise<MonitorRow | undefined> {
    if (!isUuid(id)) return undefined;
    const [row] = await this.#db.query<MonitorRow>(
      `SELECT ${MONITOR_COLUMNS} FROM chain_monitors WHERE id = $1 AND ($2::bigint IS NULL OR user_id = $2)`,
      [id, userId ?? null],
    );
    return row;
  }

  /** A user's monitors, oldest first. */
  list(userId: number): Promise<MonitorRow[]> {
    return this.#db.query<MonitorRow>(`SELECT ${MONITOR_COLUMNS} FROM chain_monitors WHERE user_id = $1 ORDER BY created_at, id`, [userId]);
  }

  /** Deletes a monitor with its events, pending ones included (nothing more is sent). */
  async delete(tx: Queryable, id: string, userId: number): Promise<boolean> {
    if (!isUuid(id)) return false;
    await tx.query(
      `DELETE FROM webhook_events WHERE id IN (SELECT e.event_id FROM chain_monitor_events e JOIN chain_monitors m ON m.id = e.monitor_id WHERE m.id = $1 AND m.user_id = $2)`,
      [id, userId],
    );
    const rows = await tx.query('DELETE FROM chain_monitors WHERE id = $1 AND user_id = $2 RETURNING id', [id, userId]);
    return rows.length > 0;
  }

  /**
   * A monitor paused for want of credits becomes active again; answers it as it is now. One the
   * operator paused stays paused: only the operator resumes it.
   */
  async resume(id: string, userId: number): Promise<MonitorRow | undefined> {
    if (!isUuid(id)) return undefined;
    await this.#db.query(
      `UPDATE chain_monitors SET status = 'active', updated_at = clock_timestamp() WHERE id = $1 AND user_id = $2 AND status = 'paused_no_credits'`,
      [id, userId],
    );
    return this.get(id, userId);
  }

  /** Every user's monitors, newest first; `userId`, `chain` and `status` narrow the list. */
  listAll(filter: { userId?: number; chain?: string; status?: MonitorStatus; limit: number }): Promise<MonitorRow[]> {
    return this.#db.query<MonitorRow>(
      `SELECT ${MONITOR_COLUMNS} FROM chain_monitors
        WHERE ($1::bigint IS NULL OR user_id = $1) AND ($2::text IS NULL OR chain = $2) AND ($3::text IS NULL OR status = $3)
        ORDER BY created_at DESC, id LIMIT $4`,
      [filter.userId ?? null, filter.chain ?? null, filter.status ?? null, filter.limit],
    );
  }

  /** Monitors per chain and status (every process's: the database's count). */
  countByStatus(): Promise<Array<{ chain: string; status: string; monitors: number }>> {
    return this.#db.query<{ chain: string; status: string; monitors: number }>(
      'SELECT chain, status, count(*)::int AS monitors FROM chain_monitors GROUP BY chain, status ORDER BY chain, status',
    );
  }

  /** A monitor's events by delivery state, and where its chain's follower is. */
  async summary(id: string): Promise<{ events: Record<'pending' | 'delivered' | 'failed', number>; processed_block: number | null }> {
    const rows = await this.#db.query<{ state: 'pending' | 'delivered' | 'failed'; events: number }>(
      `SELECT w.state, count(*)::int AS events FROM chain_monitor_events e JOIN webhook_events w ON w.id = e.event_id WHERE e.monitor_id = $1 GROUP BY w.state`,
      [id],
    );
    const events = { pending: 0, delivered: 0, failed: 0 };
    for (const row of rows) events[row.state] = row.events;
    const [cursor] = await this.#db.query<{ block_number: number | null }>(
      'SELECT c.block_number::int AS block_number FROM chain_cursors c JOIN chain_monitors m ON m.chain = c.chain WHERE m.id = $1',
      [id],
    );
    return { events, processed_block: cursor?.block_number ?? null };
  }

  /**
   * The operator pauses a monitor (`paused`): new blocks are not matched for it and its paid
   * events wait. Answers the row when this call paused it.
   */
  async pauseByOperator(tx: Queryable, id: string): Promise<MonitorRow | undefined> {
    if (!isUuid(id)) return undefined;
    const [row] = await tx.query<MonitorRow>(
      `UPDATE chain_monitors SET status = 'paused', updated_at = clock_timestamp() WHERE id = $1 AND status <> 'paused' RETURNING ${MONITOR_COLUMNS}`,
      [id],
    );
    return row;
  }

  /** The operator resumes a paused monitor, whichever way it was paused; answers the row when this call resumed it. */
  async resumeByOperator(id: string): Promise<MonitorRow | undefined> {
    if (!isUuid(id)) return undefined;
    const [row] = await this.#db.query<MonitorRow>(
      `UPDATE chain_monitors SET status = 'active', updated_at = clock_timestamp() WHERE id = $1 AND status <> 'active' RETURNING ${MONITOR_COLUMNS}`,
      [id],
    );
    return row;
  }

  /** Pauses an active monitor (its balance ran out); true when this call paused it. */
  async pause(tx: Queryable, id: string): Promise<MonitorRow | undefined> {
    const [row] = await tx.query<MonitorRow>(
      `UPDATE chain_monitors SET status = 'paused_no_credits', updated_at = clock_timestamp() WHERE id = $1 AND status = 'active' RETURNING ${MONITOR_COLUMNS}`,
      [id],
    );
    return row;
  }

  /** A monitor's deliveries, newest first. */
  events(monitorId: string, skip: number, limit: number): Promise<MonitorEventView[]> {
    return this.#db.query<MonitorEventView>(
      `SELECT w.id, w.type, w.state AS status, w.attempts, w.last_status, w.last_error,
              ${isoColumn('w.created_at')} AS created_at, ${isoColumn('w.delivered_at')} AS delivered_at
         FROM chain_monitor_events e JOIN webhook_events w ON w.id = e.event_id
        WHERE e.monitor_id = $1 ORDER BY e.seq DESC OFFSET $2 LIMIT $3`,
      [monitorId, skip, limit],
    );
  }
}

/** A monitor's event as the receiver gets it (docs/blockchain.md): the same bytes on every attempt. */
export function monitorEventBody(event: { id: string; type: string; monitorId: string; createdAt: Date; data: unknown }): string {
  return JSON.stringify({ id: event.id, type: event.type, monitor_id: event.monitorId, created_at: isoMicros(event.createdAt), data: event.data });
}

/**
 * Records one event of a monitor in the caller's transaction. An event whose id is already there
 * (the same transfer seen again) is not recorded twice; answers whether it was recorded now.
 */
export async function recordMonitorEvent(
  tx: Queryable,
  event: { id?: string; monitor: Pick<MonitorRow, 'id' | 'user_id' | 'webhook_url'>; type: string; data: unknown; billable: boolean },
): Promise<boolean> {
  const id = event.id ?? randomUUID();
  const createdAt = new Date();
  const body = monitorEventBody({ id, type: event.type, monitorId: event.monitor.id, createdAt, data: event.data });
  const inserted = await tx.query(
    `INSERT INTO webhook_events (id, user_id, job_id, source, url, type, body, created_at, expires_at)
     VALUES ($1, $2, NULL, 'monitor', $3, $4, $5, $6::timestamptz, $6::timestamptz + make_interval(days => $7))
     ON CONFLICT (id) DO NOTHING RETURNING id`,
    [id, event.monitor.user_id, event.monitor.webhook_url, event.type, body, createdAt.toISOString(), WEBHOOK_EVENT_TTL_DAYS],
  );
  if (inserted.length === 0) return false;
  await tx.query('INSERT INTO chain_monitor_events (event_id, monitor_id, type, billable) VALUES ($1, $2, $3, $4)', [id, event.monitor.id, event.type, event.billable]);
  return true;
}
