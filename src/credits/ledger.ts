/**
 * Credit balances, holds and the ledger (docs/spec/contract.md §3).
 *
 * A request first HOLDS its maximum cost: under the balance row's lock, the credits leave the
 * available balance only if enough are there, so concurrent requests can never overdraw (the
 * CHECK (balance >= 0) constraint is the backstop). Holds and settlements that arrive together
 * are carried by one statement (group commit: the SQL functions of migration 0003). After the work the hold is SETTLED exactly
 * once: the hold row is deleted, the actual cost is kept and the rest goes back. A process that
 * dies leaves its hold behind; the sweeper returns it once `expires_at` passes.
 * Every movement is a ledger row with a unique (reference, kind), so the balance can always be
 * recomputed from the ledger and a retried settlement never charges twice.
 */
import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../storage/db.ts';
import { GroupCommit } from '../storage/group-commit.ts';
import { jsonbText } from '../storage/jsonb.ts';
import type { Product } from './products.ts';

export interface HoldRequest {
  requestId: string;
  userId: number;
  product: Product;
  /** Fewest credits the request may need: below this the hold is refused (403). */
  min: number;
  /** Most credits it may need: held when the balance allows, else the whole balance. */
  max: number;
}

export interface HistoryRecord {
  userId: number;
  requestId: string;
  method: string;
  endpoint: string;
  product: Product | null;
  status: number;
  durationMs: number;
  params: Record<string, unknown>;
}

/** One settlement and/or one history row, as a settle batch carries them. */
interface SettleItem {
  settle?: { requestId: string; charge: number };
  history?: HistoryRecord;
}

export interface CreditLedgerOptions {
  holdTtlSeconds: number;
  /**
   * Hold (and settle) statements running at once; calls arriving meanwhile share the next
   * statement (group commit). Default: 1 on PGlite (one connection anyway), 2 on PostgreSQL.
   */
  maxStatementsInFlight?: number;
}

/** Most requests one batched statement carries. */
const MAX_BATCH = 200;

export class CreditLedger {
  readonly db: Database;
  readonly holdTtlSeconds: number;
  readonly #holds: GroupCommit<HoldRequest, number>;
  readonly #settlements: GroupCommit<SettleItem, number>;
  /** Requests of this process holding credits: their holds are renewed, so only a dead process's expire. */
  readonly #live = new Set<string>();
  /** Requests this process holds credits for (or is taking a hold for), until they settle. */
  readonly #holding = new Set<string>();
  #renewal: NodeJS.Timeout | undefined;

  constructor(db: Database, options: CreditLedgerOptions) {
    this.db = db;
    this.holdTtlSeconds = options.holdTtlSeconds;
    const maxInFlight = options.maxStatementsInFlight ?? (db.kind === 'pglite' ? 1 : 2);
    this.#holds = new GroupCommit((items) => this.#holdBatch(items), { maxInFlight, maxBatch: MAX_BATCH });
    this.#settlements = new GroupCommit((items) => this.#settleBatch(items), { maxInFlight, maxBatch: MAX_BATCH });
  }

  /**
   * Holds up to `max` credits (at least `min`); returns the amount held, or 0 when refused.
   * Holds arriving together share one statement (gleaner_hold_batch), served in arrival order
   * exactly as if they ran one by one.
   *
   * The hold commits without waiting for its WAL flush (synchronous_commit off for its
   * transaction): otherwise every request of a user queues on that user's balance row for a whole
   * disk flush. The settlement commits synchronously, and a flush covers all earlier WAL, so a
   * settled hold is always durable. Only a database crash can lose a hold: one acknowledged in
   * the last moments before it (PostgreSQL flushes within 3 × wal_writer_delay, 600 ms by
   * default). Its request then settles against no hold and is charged nothing: never overcharged,
   * never overdrawn, and the ledger still adds up.
   */
  async hold(request: HoldRequest): Promise<number> {
    // A request is held once; only the answer of this very call may be recovered below.
    if (this.#holding.has(request.requestId)) throw new Error(`Request ${request.requestId} already holds credits.`);
    this.#holding.add(request.requestId);
    let amount: number;
    try {
      amount = await this.#holds.submit(request);
    } catch (error) {
      // The statement may have committed before its answer was lost (a connection dropped after
      // the commit; the one-by-one retry then hits the hold's primary key): the row tells.
      const existing = await this.heldFor(request.requestId).catch(() => undefined);
      if (existing === undefined) {
        this.#holding.delete(request.requestId);
        throw error;
      }
      amount = existing;
    }
    if (amount > 0) this.#keepAlive(request.requestId);
    else this.#holding.delete(request.requestId);
    return amount;
  }

  /** The credits held for a request right now, or undefined when it holds nothing. */
  async heldFor(requestId: string): Promise<number | undefined> {
    const rows = await this.db.query<{ amount: number }>('SELECT amount FROM credit_holds WHERE request_id = $1', [requestId]);
    return rows.length ? Number(rows[0].amount) : undefined;
  }

  /** What a request's settlement charged, or undefined when it has not settled (capture or release row). */
  async settledCharge(requestId: string): Promise<number | undefined> {
    const rows = await this.db.query<{ charged: number }>(
      "SELECT charged FROM credit_ledger WHERE reference = $1 AND kind IN ('capture', 'release')",
      [requestId],
    );
    return rows.length ? Number(rows[0].charged ?? 0) : undefined;
  }

  /**
   * A request may outlive the hold TTL (a long queue for the PDF threads): while this process
   * lives, its holds' expiry is pushed forward every third of the TTL, in one statement for all.
   * The sweeper then only ever returns holds of a process that stopped.
   */
  #keepAlive(requestId: string): void {
    this.#live.add(requestId);
    if (this.#renewal) return;
    this.#renewal = setInterval(() => {
      if (this.#live.size === 0) return;
      this.db
        .query('UPDATE credit_holds SET expires_at = clock_timestamp() + make_interval(secs => $2) WHERE request_id = ANY($1::text[])', [
          [...this.#live],
          this.holdTtlSeconds,
        ])
        .catch(() => {
          // The next round tries again; a hold that expires meanwhile is returned, never lost.
        });
    }, Math.max(100, (this.holdTtlSeconds * 1000) / 3));
    this.#renewal.unref();
  }

  /** Stops renewing holds (the process is closing). */
  stop(): void {
    clearInterval(this.#renewal);
    this.#renewal = undefined;
  }

  async #holdBatch(items: HoldRequest[]): Promise<number[]> {
    const rows = await this.db.query<{ hold_request_id: string; hold_amount: number }>(
      'SELECT hold_request_id, hold_amount FROM gleaner_hold_batch($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint[], $6::float8)',
      [
        items.map((i) => i.requestId),
        items.map((i) => i.userId),
        items.map((i) => i.product),
        items.map((i) => i.min),
        items.map((i) => i.max),
        this.holdTtlSeconds,
      ],
    );
    const held = new Map(rows.map((r) => [r.hold_request_id, Number(r.hold_amount)]));
    return items.map((i) => held.get(i.requestId) ?? 0);
  }

  /**
   * Grows a request's hold by `amount` when the balance allows (once per request: a handler that
   * learns its real cost during the work, such as a PDF's page count). Returns the new total held,
   * or 0 when the balance is short (the existing hold stays as it was).
   */
  async extend(requestId: string, amount: number): Promise<number> {
    const rows = await this.db.query<{ amount: number }>(
      // The hold row is locked first, as the sweeper locks it (hold, then balance): a hold swept
      // meanwhile is not found, and nothing is taken from the balance for it.
      `WITH h0 AS (SELECT user_id, product FROM credit_holds WHERE request_id = $1 FOR UPDATE),
       taken AS (
         UPDATE balances b SET balance = b.balance - $2::bigint
           FROM h0 WHERE b.user_id = h0.user_id AND b.product = h0.product AND b.balance >= $2::bigint
         RETURNING b.user_id, b.product),
       h AS (
         UPDATE credit_holds SET amount = amount + $2::bigint
           FROM taken WHERE request_id = $1 RETURNING amount),
       l AS (
         INSERT INTO credit_ledger (user_id, product, kind, delta, reference)
         SELECT user_id, product, 'extend', -$2::bigint, $1 FROM taken)
       SELECT amount FROM h`,
      [requestId, amount],
    );
    return rows.length ? Number(rows[0].amount) : 0;
  }

  /**
   * Settles a hold: keeps `charge` credits (capped at the amount held) and returns the rest.
   * `charge` 0 is a full release. When `history` is given it is recorded in the same transaction.
   * Returns the credits charged (0 if the hold was already settled or swept).
   * Settlements and history rows arriving together share one statement (gleaner_settle_batch)
   * and one synchronous commit. A full capture leaves the balance row alone: the user's row lock
   * is then taken once per request (by the hold) instead of twice.
   */
  async settle(requestId: string, charge: number, history?: HistoryRecord): Promise<number> {
    this.#live.delete(requestId);
    this.#holding.delete(requestId);
    try {
      return await this.#settlements.submit({ settle: { requestId, charge }, history });
    } catch (error) {
      // Both the batch and its retry reported a failure, yet one of them may have committed
      // (an answer lost after the commit): the settlement row, written in the same statement as
      // the history row, tells what was really charged.
      const charged = await this.settledCharge(requestId).catch(() => undefined);
      if (charged === undefined) throw error;
      return charged;
    }
  }

  /**
   * Captures a hold inside the caller's transaction, so that what it pays for and the charge
   * commit together (a crawl page stored as delivered): a crash can leave neither or both, never a
   * delivered page whose hold the sweeper then returns. Returns the credits charged (less than
   * `charge` when the hold was gone). If the transaction rolls back, the hold is still held, and
   * still settled by its owner's later `settle` or by the sweeper.
   */
  async captureIn(tx: Queryable, requestId: string, charge: number): Promise<number> {
    const rows = await tx.query<{ settled_request_id: string; settled_charge: number }>(
      `SELECT settled_request_id, settled_charge FROM gleaner_settle_batch(
         ARRAY[$1]::text[], ARRAY[$2]::bigint[], '{}'::bigint[], '{}'::text[], '{}'::text[], '{}'::text[], '{}'::text[], '{}'::int[], '{}'::int[], '{}'::jsonb[])`,
      [requestId, charge],
    );
    return rows.length ? Number(rows[0].settled_charge) : 0;
  }

  /** The hold of `requestId` is settled (by `captureIn`, whose transaction committed): stop renewing it. */
  settledElsewhere(requestId: string): void {
    this.#live.delete(requestId);
    this.#holding.delete(requestId);
  }

  /** Records a history row for a request that held nothing (422, 403, 429...). */
  async record(history: HistoryRecord): Promise<void> {
    await this.#settlements.submit({ history });
  }

  async #settleBatch(items: SettleItem[]): Promise<number[]> {
    const settles = items.flatMap((i) => (i.settle ? [i.settle] : []));
    const history = items.flatMap((i) => (i.history ? [i.history] : []));
    const rows = await this.db.query<{ settled_request_id: string; settled_charge: number }>(
      `SELECT settled_request_id, settled_charge FROM gleaner_settle_batch(
         $1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::int[], $10::jsonb[])`,
      [
        settles.map((s) => s.requestId),
        settles.map((s) => s.charge),
        history.map((h) => h.userId),
        history.map((h) => h.requestId),
        history.map((h) => h.method),
        history.map((h) => h.endpoint),
        history.map((h) => h.product),
        history.map((h) => h.status),
        history.map((h) => h.durationMs),
        history.map((h) => jsonbText(h.params)),
      ],
    );
    const charged = new Map(rows.map((r) => [r.settled_request_id, Number(r.settled_charge)]));
    // A hold settles once: a second settlement of it in the same batch is told 0, as it would be alone.
    return items.map((i) => {
      if (!i.settle) return 0;
      const amount = charged.get(i.settle.requestId) ?? 0;
      charged.delete(i.settle.requestId);
      return amount;
    });
  }

  /**
   * Gives back what a request was charged when its answer could not be delivered (the client hung
   * up while the capture committed), and records the request as 499 with no credits. Once per
   * request: the ledger's unique (reference, kind) refuses a second refund, and nothing changes.
   */
  async refund(requestId: string, userId: number, product: Product, amount: number, status = 499): Promise<void> {
    await this.db.query(
      `WITH l AS (
         INSERT INTO credit_ledger (user_id, product, kind, delta, reference) VALUES ($2, $3, 'refund', $4::bigint, $1)
         ON CONFLICT (reference, kind) DO NOTHING RETURNING delta),
       b AS (UPDATE balances SET balance = balances.balance + l.delta FROM l WHERE user_id = $2 AND product = $3),
       h AS (UPDATE request_history SET status = $5, credits = 0 FROM l WHERE request_id = $1)
       SELECT count(*) FROM l`,
      [requestId, userId, product, amount, status],
    );
  }

  /** Corrects the status of a request's history row (a success that could not be charged is a 500). */
  async correctStatus(requestId: string, status: number): Promise<void> {
    await this.db.query('UPDATE request_history SET status = $2 WHERE request_id = $1', [requestId, status]);
  }

  /** Returns holds whose process never settled them. Returns how many were released. */
  async sweepExpiredHolds(): Promise<number> {
    // Never this process's own live holds: after a stall longer than the TTL (a starved machine),
    // the sweep can run before the renewal catches up, and would return a hold whose work is about
    // to be captured (a page or answer given away). Another process's sweep still returns them.
    const rows = await this.db.query(
      `WITH h AS (
         DELETE FROM credit_holds WHERE expires_at < clock_timestamp() AND NOT (request_id = ANY($1::text[]))
         RETURNING request_id, user_id, product, amount),
       b AS (
         UPDATE balances SET balance = balances.balance + s.amount
           FROM (SELECT user_id, product, sum(amount) AS amount FROM h GROUP BY user_id, product) s
          WHERE balances.user_id = s.user_id AND balances.product = s.product),
       l AS (
         INSERT INTO credit_ledger (user_id, product, kind, delta, reference)
         SELECT user_id, product, 'expire', amount, request_id FROM h)
       SELECT request_id FROM h`,
      [[...this.#live]],
    );
    return rows.length;
  }

  async balance(userId: number, product: Product): Promise<number | null> {
    const [row] = await this.db.query<{ balance: number }>('SELECT balance FROM balances WHERE user_id = $1 AND product = $2', [userId, product]);
    return row ? Number(row.balance) : null;
  }

  async balances(userId: number): Promise<Array<{ product: Product; balance: number; held: number; plan: string | null }>> {
    const rows = await this.db.query<{ product: Product; balance: number; held: number; plan: string | null }>(
      `SELECT b.product, b.balance, COALESCE(sum(h.amount), 0)::bigint AS held, b.plan
         FROM balances b LEFT JOIN credit_holds h ON h.user_id = b.user_id AND h.product = b.product
        WHERE b.user_id = $1 GROUP BY b.product, b.balance, b.plan ORDER BY b.product`,
      [userId],
    );
    return rows.map((r) => ({ product: r.product, balance: Number(r.balance), held: Number(r.held), plan: r.plan }));
  }

  /** Adds credits (operator grant). Returns the new balance. */
  async grant(userId: number, product: Product, amount: number, note = 'operator grant'): Promise<number> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx.query<{ balance: number }>(
        'UPDATE balances SET balance = balance + $3 WHERE user_id = $1 AND product = $2 RETURNING balance',
        [userId, product, amount],
      );
      await tx.query(
        `INSERT INTO credit_ledger (user_id, product, kind, delta, reference, note) VALUES ($1, $2, 'grant', $3, $4, $5)`,
        [userId, product, amount, randomUUID(), note],
      );
      return Number(row.balance);
    });
  }

  /**
   * Sets what the user may spend to `amount` (operator `credits set`, plan renewal: no roll-over).
   * Credits held by requests in flight count against it, so that when they settle the user has
   * spent at most `amount` since the reset.
   */
  async setTo(userId: number, product: Product, amount: number, kind: 'set' | 'renew', plan?: string | null, tx?: Queryable): Promise<number> {
    const run = async (q: Queryable) => {
      // Lock the balance row first, then sum the holds in a statement of its own. In one statement
      // the sum would come from the snapshot taken before waiting for the lock, and miss the holds
      // of the batch that held it (on PostgreSQL's READ COMMITTED, each statement sees what was
      // committed when it starts; holds are only taken under this row's lock).
      const [cur] = await q.query<{ balance: number }>('SELECT balance FROM balances WHERE user_id = $1 AND product = $2 FOR UPDATE', [userId, product]);
      const [holds] = await q.query<{ held: number }>(
        'SELECT COALESCE(sum(amount), 0)::bigint AS held FROM credit_holds WHERE user_id = $1 AND product = $2',
        [userId, product],
      );
      const target = Math.max(0, amount - Number(holds.held));
      const delta = target - Number(cur.balance);
      await q.query(
        `UPDATE balances SET balance = $3${plan !== undefined ? ', plan = $4' : ''} WHERE user_id = $1 AND product = $2`,
        plan !== undefined ? [userId, product, target, plan] : [userId, product, target],
      );
      await q.query(
        `INSERT INTO credit_ledger (user_id, product, kind, delta, reference, note) VALUES ($1, $2, $3, $4, $5, $6)`,
        [userId, product, kind, delta, randomUUID(), plan ? `plan ${plan}` : null],
      );
      return target;
    };
    return tx ? run(tx) : this.db.transaction(run);
  }

  /** Recomputes balances from the ledger: the audit that must always match `balances`. */
  async recompute(userId?: number): Promise<Array<{ user_id: number; product: Product; stored: number; ledger: number }>> {
    const rows = await this.db.query<{ user_id: number; product: Product; stored: number; ledger: number }>(
      `SELECT b.user_id, b.product, b.balance AS stored, COALESCE(sum(l.delta), 0)::bigint AS ledger
         FROM balances b LEFT JOIN credit_ledger l ON l.user_id = b.user_id AND l.product = b.product
        WHERE $1::bigint IS NULL OR b.user_id = $1
        GROUP BY b.user_id, b.product, b.balance ORDER BY b.user_id, b.product`,
      [userId ?? null],
    );
    return rows.map((r) => ({ user_id: Number(r.user_id), product: r.product, stored: Number(r.stored), ledger: Number(r.ledger) }));
  }
}
