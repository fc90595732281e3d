/**
 * Delivering monitors' events: in order per monitor, at least once, signed, retried for 24 hours
 * (docs/webhooks.md's rules, docs/blockchain.md "Monitors").
 *
 * Order is kept by delivering one monitor's events one at a time, oldest first: a failed event
 * waits for its retry and holds the ones after it back (head-of-line), as a stream should. One
 * process delivers a monitor at a time (a lease on its row); any process may take it over when
 * that process dies and its lease lapses.
 *
 * Money follows the pipeline's rule, event by event: a `chain.transfer` holds its price before the
 * attempt, is captured on a 2xx and only then marked delivered (a try after a process died in
 * between finds the capture, and delivers the event again free); any other outcome releases it.
 * Each attempt holds under its own id (`chain-event:<event>:<try>`), and the next try releases the
 * one before it, so an attempt that died with its hold gives it back at once. A hold the balance
 * cannot pay pauses the monitor (`chain.monitor_paused`, free) until its owner resumes it.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../storage/db.ts';
import type { CreditLedger } from '../credits/ledger.ts';
import { price, type Prices } from '../credits/prices.ts';
import type { OutboundClient } from '../outbound/types.ts';
import { deliverWebhook, nextDelaySeconds, WEBHOOK_RETRY_WINDOW_SECONDS } from '../webhooks/delivery.ts';
import type { WebhookEventStore } from '../webhooks/events.ts';
import type { WebhookSecrets } from '../webhooks/secrets.ts';
import { pauseForCredits } from './pause.ts';

export interface DeliveryDeps {
  db: Database;
  ledger: CreditLedger;
  prices: Prices;
  outbound: OutboundClient;
  secrets: WebhookSecrets;
  events: WebhookEventStore;
  /** This process's name in leases. */
  owner: string;
  /** How long a monitor stays leased without a renewal: past one delivery's deadline. */
  leaseMs: number;
  retryBaseSeconds: number;
  /** Monitors delivered at once by this process. */
  concurrency: number;
  logger?: FastifyBaseLogger;
}

export type DeliveryOutcome = 'delivered' | 'retry' | 'refused' | 'expired';

/** One attempt's outcome, and the chain of the monitor it was for (metrics count per chain). */
export interface DeliveryEvent {
  chain: string;
  outcome: DeliveryOutcome;
}

export class MonitorDelivery {
  readonly #deps: DeliveryDeps;
  readonly #listeners = new Set<(event: DeliveryEvent) => void>();

  constructor(deps: DeliveryDeps) {
    this.#deps = deps;
  }

  /** Watches attempts (metrics, tests). */
  observe(listener: (event: DeliveryEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** One pass: every monitor with an event due, `concurrency` at a time. Answers the monitors served. */
  async pass(signal: AbortSignal): Promise<number> {
    const due = await this.#deps.db.query<{ monitor_id: string }>(
      `SELECT DISTINCT e.monitor_id FROM chain_monitor_events e
         JOIN webhook_events w ON w.id = e.event_id AND w.state = 'pending'
         JOIN chain_monitors m ON m.id = e.monitor_id
        WHERE e.next_attempt_at <= clock_timestamp() AND (m.status = 'active' OR NOT e.billable)
          AND (m.deliver_owner IS NULL OR m.deliver_owner = $1 OR m.deliver_until < clock_timestamp())
        LIMIT 200`,
      [this.#deps.owner],
    );
    const queue = due.map((row) => row.monitor_id);
    const run = async () => {
      for (let id = queue.shift(); id !== undefined && !signal.aborted; id = queue.shift()) {
        await this.deliverMonitor(id, signal).catch((error: unknown) => this.#deps.logger?.error({ err: error, monitorId: id }, 'monitor delivery failed'));
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#deps.concurrency, queue.length) }, run));
    return due.length;
  }

  /** Delivers a monitor's due events in order, until none is due or one fails. */
  async deliverMonitor(monitorId: string, signal: AbortSignal): Promise<void> {
    if (!(await this.#lease(monitorId))) return;
    try {
      while (!signal.aborted) {
        const [next] = await this.#deps.db.query<{ event_id: string; billable: boolean; due: boolean; user_id: number; chain: string }>(
          `SELECT e.event_id, e.billable, e.next_attempt_at <= clock_timestamp() AS due, m.user_id::int AS user_id, m.chain
             FROM chain_monitor_events e
             JOIN webhook_events w ON w.id = e.event_id AND w.state = 'pending'
             JOIN chain_monitors m ON m.id = e.monitor_id
            WHERE e.monitor_id = $1 AND (m.status = 'active' OR NOT e.billable)
            ORDER BY e.seq LIMIT 1`,
          [monitorId],
        );
        if (!next || !next.due) return;
        if (!(await this.#lease(monitorId))) return;
        const outcome = await this.#attempt(monitorId, next, signal);
        if (outcome === 'stop') return;
      }
    } finally {
      await this.#deps.db
        .query('UPDATE chain_monitors SET deliver_owner = NULL, deliver_until = NULL WHERE id = $1 AND deliver_owner = $2', [monitorId, this.#deps.owner])
        .catch(() => {});
    }
  }

  /** One attempt of one event: 'next' when the monitor's following event may go now, 'stop' otherwise. */
  async #attempt(monitorId: string, next: { event_id: string; billable: boolean; user_id: number; chain: string }, signal: AbortSignal): Promise<'next' | 'stop'> {
    const tell = (outcome: DeliveryOutcome) => this.#tell({ chain: next.chain, outcome });
    const { db, ledger, events, secrets, outbound } = this.#deps;
    const event = await events.load(next.event_id);
    if (!event || event.state !== 'pending') return 'next';
    if (Date.now() - new Date(event.createdAt).getTime() > WEBHOOK_RETRY_WINDOW_SECONDS * 1000) {
      await events.markFailed(event.id, 'not delivered within 24 hours');
      tell('expired');
      return 'next';
    }
    let requestId: string | undefined;
    let held = 0;
    if (next.billable) {
      const [{ tries }] = await db.query<{ tries: number }>('UPDATE chain_monitor_events SET tries = tries + 1 WHERE event_id = $1 RETURNING tries', [event.id]);
      if (tries > 1) await ledger.settle(eventRequestId(event.id, tries - 1), 0);
      // An event is paid before it is marked delivered: a try that died in between left a
      // capture, and this try delivers it again (at least once) without charging it again.
      const earlier = Array.from({ length: tries - 1 }, (_, index) => eventRequestId(event.id, index + 1));
      const [{ paid }] = earlier.length === 0 ? [{ paid: false }] : await db.query<{ paid: boolean }>("SELECT EXISTS (SELECT 1 FROM credit_ledger WHERE reference = ANY($1::text[]) AND kind = 'capture') AS paid", [earlier]);
      const unitPrice = paid ? 0 : price(await this.#deps.prices.current(), 'chain_event');
      if (unitPrice > 0) {
        requestId = eventRequestId(event.id, tries);
        held = await ledger.hold({ requestId, userId: next.user_id, product: 'blockchain', min: unitPrice, max: unitPrice });
        if (held === 0) {
          await pauseForCredits(db, monitorId, `The balance cannot pay for an event (${unitPrice} credits).`);
          // The pause event (free) is now the next one this monitor may deliver.
          return 'next';
        }
      }
    }
    try {
      const result = await deliverWebhook(outbound, { id: event.id, url: event.url, body: event.body }, await secrets.get(event.userId), { signal });
      if (result.kind === 'delivered') {
        // Paid before it is marked: a process dying in between leaves a capture the next try finds.
        if (requestId) await ledger.settle(requestId, held);
        held = 0;
        await events.markDelivered(event.id, result.status);
        tell('delivered');
        return 'next';
      }
      if (requestId) await ledger.settle(requestId, 0);
      held = 0;
      if (result.kind === 'refused') {
        await events.markFailed(event.id, result.error);
        tell('refused');
        return 'next';
      }
      await events.markAttempt(event.id, { status: result.status, error: result.error });
      const delay = nextDelaySeconds(event.attempts + 1, { baseSeconds: this.#deps.retryBaseSeconds });
      await db.query('UPDATE chain_monitor_events SET next_attempt_at = clock_timestamp() + make_interval(secs => $2) WHERE event_id = $1', [event.id, delay]);
      tell('retry');
      return 'stop';
    } catch (error) {
      if (requestId && held) await ledger.settle(requestId, 0).catch(() => {});
      throw error;
    }
  }

  /** Takes or renews the monitor's delivery lease. */
  async #lease(monitorId: string): Promise<boolean> {
    const rows = await this.#deps.db.query(
      `UPDATE chain_monitors SET deliver_owner = $2, deliver_until = clock_timestamp() + make_interval(secs => $3)
        WHERE id = $1 AND (deliver_owner IS NULL OR deliver_owner = $2 OR deliver_until < clock_timestamp()) RETURNING id`,
      [monitorId, this.#deps.owner, this.#deps.leaseMs / 1000],
    );
    return rows.length > 0;
  }

  #tell(event: DeliveryEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {
        // A watcher's failure is not the delivery's.
      }
    }
  }
}

/** The hold id of one attempt of one event. */
export function eventRequestId(eventId: string, attempt: number): string {
  return `chain-event:${eventId}:${attempt}`;
}
