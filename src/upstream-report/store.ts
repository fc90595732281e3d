/**
 * The upstream drift report's store: which upstream parser drifted (`changed`) and which upstream
 * is refusing us (`blocked`, an open circuit), across every server process.
 *
 * Each process is told every upstream call and circuit change (`record`), aggregates them in
 * memory and merges them into the database in one statement every few seconds and on close
 * (`flush`): never a statement per call. Processes sharing a PostgreSQL database merge into the
 * same rows. What is kept, per upstream and operation: the last 20 verdicts, calls per verdict in
 * 5-minute buckets for 25 hours (the report's last hour and last day), and the time and HTTP status
 * of the last `changed` and the last `blocked` call; per upstream, its circuit as of the last change.
 *
 * Only names, verdicts, statuses, durations and times are stored: never a query, a body, a reason
 * (it may hold a URL) or a credential. A failed flush is logged and its data kept for the next one;
 * memory stays bounded while the database is away (20 verdicts and 25 hours of buckets per
 * operation, at most `MAX_OPERATIONS` operations).
 */
import type { Queryable } from '../storage/db.ts';
import type { RuntimeEvent } from '../core/upstream-events.ts';

export type CircuitState = Extract<RuntimeEvent, { type: 'circuit' }>['state'];

/** Where flush failures are reported (a pino logger fits). */
export interface ReportLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

/** Verdicts kept per upstream and operation. */
export const RECENT_VERDICTS = 20;
/** Width of a counting bucket. */
export const BUCKET_MS = 5 * 60_000;
/** Buckets older than this are deleted: the report needs 24 hours, plus one of slack. */
export const BUCKET_RETENTION_MS = 25 * 3_600_000;
/** An operation (or an upstream's circuit) neither called nor changed for this long leaves the report. */
export const ROW_RETENTION_MS = 7 * 24 * 3_600_000;
/** Upstream operations aggregated in memory at once; calls of others are dropped (and logged) meanwhile. */
export const MAX_OPERATIONS = 500;
/** Default time between flushes. */
export const FLUSH_INTERVAL_MS = 5_000;
/** While flushes keep failing, one warning per this interval. */
const FAILURE_LOG_INTERVAL_MS = 60_000;
/** Names are the adapters' own; cut anything longer so a bad one cannot grow the rows. */
const MAX_NAME = 100;

interface RecentCall {
  at: number;
  verdict: string;
  status: number | null;
  durationMs: number;
}

interface Mark {
  at: number;
  status: number | null;
}

interface PendingOperation {
  upstream: string;
  operation: string;
  /** Unsorted; trimmed to the newest RECENT_VERDICTS when it grows past twice that. */
  recent: RecentCall[];
  /** bucket start → verdict → calls */
  counts: Map<number, Map<string, number>>;
  lastChanged: Mark | null;
  lastBlocked: Mark | null;
  lastSeen: number;
}

interface PendingCircuit {
  upstream: string;
  state: CircuitState;
  openUntil: number | null;
  trips: number;
  at: number;
}

export interface UpstreamReportOptions {
  logger?: ReportLogger;
  /** Time between flushes; 0 leaves flushing to the caller (`flush`, `close`). Default 5 s. */
  flushIntervalMs?: number;
  /** The clock (ms since the epoch), for pruning. */
  now?: () => number;
}

const newer = (a: Mark | null, b: Mark | null): Mark | null => (a === null ? b : b === null ? a : b.at >= a.at ? b : a);
const name = (value: string) => value.slice(0, MAX_NAME);
const iso = (ms: number) => new Date(ms).toISOString();
const statusOf = (status: unknown): number | null => (typeof status === 'number' && Number.isInteger(status) && status >= 0 && status < 1000 ? status : null);
const bucketOf = (at: number) => Math.floor(at / BUCKET_MS) * BUCKET_MS;
/** A time a Date can hold (ms since the epoch). */
const isTime = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= 8.64e15;

function newestCalls(calls: RecentCall[]): RecentCall[] {
  return calls.sort((a, b) => b.at - a.at).slice(0, RECENT_VERDICTS);
}

export class UpstreamReportStore {
  readonly #db: Queryable;
  readonly #logger: ReportLogger | undefined;
  readonly #now: () => number;
  readonly #timer: NodeJS.Timeout | undefined;
  #operations = new Map<string, PendingOperation>();
  #circuits = new Map<string, PendingCircuit>();
  /** Flushes run one after the other. */
  #chain: Promise<unknown> = Promise.resolve();
  #writing = false;
  #closed: Promise<void> | null = null;
  #dropped = 0;
  #failures = 0;
  #lastFailureLog = -Infinity;

  constructor(db: Queryable, options: UpstreamReportOptions = {}) {
    this.#db = db;
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
    const interval = options.flushIntervalMs ?? FLUSH_INTERVAL_MS;
    if (interval > 0) {
      this.#timer = setInterval(() => {
        // flush never rejects (failures are logged), and the next tick finds it running or done.
        if (!this.#writing) void this.flush();
      }, interval);
      this.#timer.unref();
    }
  }

  /** Takes one event. Never throws and never waits: it runs inside every upstream call's path. */
  record(event: RuntimeEvent): void {
    if (this.#closed) return;
    try {
      if (event.type === 'call') this.#recordCall(event);
      else if (event.type === 'circuit') this.#recordCircuit(event);
    } catch {
      // A malformed event is not worth failing an upstream call over.
    }
  }

  /** Operations and circuits waiting for the next flush (for tests and diagnostics). */
  get pending(): { operations: number; circuits: number } {
    return { operations: this.#operations.size, circuits: this.#circuits.size };
  }

  /**
   * Writes what was recorded since the last flush, after any flush already running. Never
   * rejects: resolves false when the database refused (logged; the data is kept for the next one).
   */
  flush(): Promise<boolean> {
    const run = this.#chain.then(() => this.#write());
    this.#chain = run;
    return run;
  }

  /** Stops the timer and writes what is left; later events are ignored. Call before the database closes. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      clearInterval(this.#timer);
      await this.flush();
    })();
    return this.#closed;
  }

  #recordCall(event: Extract<RuntimeEvent, { type: 'call' }>): void {
    if (event.verdict === 'aborted' || typeof event.upstream !== 'string' || typeof event.operation !== 'string' || typeof event.verdict !== 'string') return;
    const at = isTime(event.at) ? event.at : this.#now();
    const status = statusOf(event.status);
    const verdict = name(event.verdict);
    const pending = this.#operation(name(event.upstream), name(event.operation));
    if (!pending) return;
    pending.recent.push({ at, verdict, status, durationMs: Number.isFinite(event.durationMs) ? Math.min(Math.max(0, Math.round(event.durationMs)), 2 ** 31 - 1) : 0 });
    if (pending.recent.length > 2 * RECENT_VERDICTS) pending.recent = newestCalls(pending.recent);
    const bucket = bucketOf(at);
    let verdicts = pending.counts.get(bucket);
    if (!verdicts) pending.counts.set(bucket, (verdicts = new Map()));
    verdicts.set(verdict, (verdicts.get(verdict) ?? 0) + 1);
    if (verdict === 'changed') pending.lastChanged = newer(pending.lastChanged, { at, status });
    if (verdict === 'blocked') pending.lastBlocked = newer(pending.lastBlocked, { at, status });
    pending.lastSeen = Math.max(pending.lastSeen, at);
  }

  #recordCircuit(event: Extract<RuntimeEvent, { type: 'circuit' }>): void {
    if (typeof event.upstream !== 'string' || !['open', 'half_open', 'closed'].includes(event.state)) return;
    const circuit: PendingCircuit = {
      upstream: name(event.upstream),
      state: event.state,
      openUntil: event.state === 'open' && isTime(event.openUntil) ? event.openUntil : null,
      trips: Number.isInteger(event.trips) && event.trips >= 0 ? Math.min(event.trips, 2 ** 31 - 1) : 0,
      at: isTime(event.at) ? event.at : this.#now(),
    };
    this.#keepCircuit(circuit);
  }

  #keepCircuit(circuit: PendingCircuit): void {
    const current = this.#circuits.get(circuit.upstream);
    if (!current || circuit.at >= current.at) this.#circuits.set(circuit.upstream, circuit);
  }

  /** The pending entry of an operation, or null when MAX_OPERATIONS are pending already. */
  #operation(upstream: string, operation: string): PendingOperation | null {
    const key = `${upstream}\u0000${operation}`;
    let pending = this.#operations.get(key);
    if (!pending) {
      if (this.#operations.size >= MAX_OPERATIONS) {
        this.#dropped++;
        return null;
      }
      pending = { upstream, operation, recent: [], counts: new Map(), lastChanged: null, lastBlocked: null, lastSeen: -Infinity };
      this.#operations.set(key, pending);
    }
    return pending;
  }

  async #write(): Promise<boolean> {
    const operations = this.#operations;
    const circuits = this.#circuits;
    const dropped = this.#dropped;
    this.#operations = new Map();
    this.#circuits = new Map();
    this.#dropped = 0;
    if (dropped > 0) this.#logger?.warn({ dropped, limit: MAX_OPERATIONS }, 'upstream report: calls of too many operations at once, some were not counted');
    if (operations.size === 0 && circuits.size === 0) return true;
    const now = this.#now();
    const bucketCutoff = bucketOf(now - BUCKET_RETENTION_MS);
    this.#writing = true;
    try {
      const document = JSON.stringify(flushDocument(operations, circuits, bucketCutoff));
      await this.#db.query(FLUSH_SQL, [document, iso(bucketCutoff), iso(now - ROW_RETENTION_MS), RECENT_VERDICTS]);
      if (this.#failures > 0) this.#logger?.warn({ failures: this.#failures }, 'upstream report: written again after failed flushes');
      this.#failures = 0;
      return true;
    } catch (error) {
      this.#failures++;
      this.#restore(operations, circuits, bucketCutoff);
      if (now - this.#lastFailureLog >= FAILURE_LOG_INTERVAL_MS) {
        this.#lastFailureLog = now;
        this.#logger?.warn(
          { err: error, failures: this.#failures },
          'upstream report: writing to the database failed; kept in memory for the next flush',
        );
      }
      return false;
    } finally {
      this.#writing = false;
    }
  }

  /** Puts back what a failed flush took, merged with what was recorded meanwhile. */
  #restore(operations: Map<string, PendingOperation>, circuits: Map<string, PendingCircuit>, bucketCutoff: number): void {
    for (const old of operations.values()) {
      const pending = this.#operation(old.upstream, old.operation);
      if (!pending) continue;
      pending.recent = newestCalls([...old.recent, ...pending.recent]);
      for (const [bucket, verdicts] of old.counts) {
        if (bucket < bucketCutoff) continue;
        let into = pending.counts.get(bucket);
        if (!into) pending.counts.set(bucket, (into = new Map()));
        for (const [verdict, calls] of verdicts) into.set(verdict, (into.get(verdict) ?? 0) + calls);
      }
      pending.lastChanged = newer(old.lastChanged, pending.lastChanged);
      pending.lastBlocked = newer(old.lastBlocked, pending.lastBlocked);
      pending.lastSeen = Math.max(old.lastSeen, pending.lastSeen);
    }
    for (const circuit of circuits.values()) this.#keepCircuit(circuit);
    // Failed flushes must not hold on to buckets the report no longer shows.
    for (const pending of this.#operations.values()) {
      for (const bucket of pending.counts.keys()) if (bucket < bucketCutoff) pending.counts.delete(bucket);
    }
  }
}

/** The one parameter of a flush: rows sorted by key, so that processes writing at once lock rows in the same order. */
function flushDocument(operations: Map<string, PendingOperation>, circuits: Map<string, PendingCircuit>, bucketCutoff: number) {
  const byKey = <T extends { upstream: string; operation?: string }>(a: T, b: T) =>
    a.upstream < b.upstream ? -1 : a.upstream > b.upstream ? 1 : (a.operation ?? '') < (b.operation ?? '') ? -1 : (a.operation ?? '') > (b.operation ?? '') ? 1 : 0;
  const sorted = [...operations.values()].sort(byKey);
  return {
    operations: sorted.map((o) => ({
      upstream: o.upstream,
      operation: o.operation,
      recent: newestCalls(o.recent).map((c) => ({ at: c.at, verdict: c.verdict, status: c.status, duration_ms: c.durationMs })),
      last_changed_at: o.lastChanged ? iso(o.lastChanged.at) : null,
      last_changed_status: o.lastChanged?.status ?? null,
      last_blocked_at: o.lastBlocked ? iso(o.lastBlocked.at) : null,
      last_blocked_status: o.lastBlocked?.status ?? null,
      last_seen_at: iso(o.lastSeen),
    })),
    counts: sorted.flatMap((o) =>
      [...o.counts.entries()]
        .filter(([bucket]) => bucket >= bucketCutoff)
        .sort(([a], [b]) => a - b)
        .flatMap(([bucket, verdicts]) =>
          [...verdicts.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([verdict, calls]) => ({ upstream: o.upstream, operation: o.operation, bucket: iso(bucket), verdict, calls })),
        ),
    ),
    circuits: [...circuits.values()].sort(byKey).map((c) => ({
      upstream: c.upstream,
      state: c.state,
      open_until: c.openUntil === null ? null : iso(c.openUntil),
      trips: c.trips,
      since: iso(c.at),
    })),
  };
}

/**
 * One flush, one statement: the merges into the three tables and the pruning, as data-modifying
 * CTEs. $1 the document (flushDocument), $2 the oldest bucket kept, $3 the oldest row kept,
 * $4 the verdicts kept per operation. Merges are commutative, so processes may flush in any order:
 * counts add up, the last verdicts are the newest of both, the last `changed`/`blocked` and a
 * circuit are replaced only by a later one. Pruning never touches a row this flush writes.
 */
const FLUSH_SQL = `
WITH doc AS (SELECT $1::jsonb AS d),
incoming_operations AS (
  SELECT o.* FROM doc, jsonb_to_recordset(doc.d->'operations') AS o(
    upstream text, operation text, recent jsonb, last_changed_at timestamptz, last_changed_status integer,
    last_blocked_at timestamptz, last_blocked_status integer, last_seen_at timestamptz)
),
incoming_counts AS (
  SELECT c.* FROM doc, jsonb_to_recordset(doc.d->'counts') AS c(upstream text, operation text, bucket timestamptz, verdict text, calls integer)
),
incoming_circuits AS (
  SELECT c.* FROM doc, jsonb_to_recordset(doc.d->'circuits') AS c(upstream text, state text, open_until timestamptz, trips integer, since timestamptz)
),
written_operations AS (
  INSERT INTO upstream_operations AS t (upstream, operation, recent, last_changed_at, last_changed_status, last_blocked_at, last_blocked_status, last_seen_at)
  SELECT upstream, operation, recent, last_changed_at, last_changed_status, last_blocked_at, last_blocked_status, last_seen_at
    FROM incoming_operations ORDER BY upstream, operation
  ON CONFLICT (upstream, operation) DO UPDATE SET
    recent = (SELECT coalesce(jsonb_agg(newest.e ORDER BY (newest.e->>'at')::float8 DESC), '[]'::jsonb)
                FROM (SELECT e FROM jsonb_array_elements(t.recent || excluded.recent) AS e
                       ORDER BY (e->>'at')::float8 DESC LIMIT $4::int) AS newest),
    last_changed_at = GREATEST(t.last_changed_at, excluded.last_changed_at),
    last_changed_status = CASE WHEN t.last_changed_at IS NULL OR excluded.last_changed_at >= t.last_changed_at
                               THEN excluded.last_changed_status ELSE t.last_changed_status END,
    last_blocked_at = GREATEST(t.last_blocked_at, excluded.last_blocked_at),
    last_blocked_status = CASE WHEN t.last_blocked_at IS NULL OR excluded.last_blocked_at >= t.last_blocked_at
                               THEN excluded.last_blocked_status ELSE t.last_blocked_status END,
    last_seen_at = GREATEST(t.last_seen_at, excluded.last_seen_at)
  RETURNING 1
),
written_counts AS (
  INSERT INTO upstream_verdict_counts AS t (upstream, operation, bucket, verdict, calls)
  SELECT upstream, operation, bucket, verdict, calls FROM incoming_counts ORDER BY upstream, operation, bucket, verdict
  ON CONFLICT (upstream, operation, bucket, verdict) DO UPDATE SET calls = t.calls + excluded.calls
  RETURNING 1
),
written_circuits AS (
  INSERT INTO upstream_circuits AS t (upstream, state, open_until, trips, since)
  SELECT upstream, state, open_until, trips, since FROM incoming_circuits ORDER BY upstream
  ON CONFLICT (upstream) DO UPDATE SET state = excluded.state, open_until = excluded.open_until, trips = excluded.trips, since = excluded.since
    WHERE excluded.since >= t.since
  RETURNING 1
),
pruned_counts AS (
  DELETE FROM upstream_verdict_counts WHERE bucket < $2::timestamptz RETURNING 1
),
pruned_operations AS (
  DELETE FROM upstream_operations AS t
   WHERE t.last_seen_at < $3::timestamptz
     AND NOT EXISTS (SELECT 1 FROM incoming_operations i WHERE i.upstream = t.upstream AND i.operation = t.operation)
  RETURNING 1
),
pruned_circuits AS (
  DELETE FROM upstream_circuits AS t
   WHERE t.since < $3::timestamptz
     AND NOT EXISTS (SELECT 1 FROM incoming_circuits i WHERE i.upstream = t.upstream)
     AND NOT EXISTS (SELECT 1 FROM incoming_operations i WHERE i.upstream = t.upstream)
     AND NOT EXISTS (SELECT 1 FROM upstream_operations o WHERE o.upstream = t.upstream AND o.last_seen_at >= $3::timestamptz)
  RETURNING 1
)
SELECT (SELECT count(*) FROM written_operations) AS operations,
       (SELECT count(*) FROM written_counts) AS counts,
       (SELECT count(*) FROM written_circuits) AS circuits,
       (SELECT count(*) FROM pruned_counts) + (SELECT count(*) FROM pruned_operations) + (SELECT count(*) FROM pruned_circuits) AS pruned`;

/** What the report reads, times in ms since the epoch. */
export interface StoredOperation {
  upstream: string;
  operation: string;
  /** Newest first. */
  recent: Array<{ at: number; verdict: string; status: number | null; durationMs: number }>;
  lastChanged: Mark | null;
  lastBlocked: Mark | null;
  lastSeen: number;
}

export interface StoredCounts {
  upstream: string;
  operation: string;
  verdict: string;
  lastHour: number;
  lastDay: number;
}

export interface StoredCircuit {
  upstream: string;
  state: CircuitState;
  openUntil: number | null;
  trips: number;
  since: number;
}

export interface StoredReport {
  operations: StoredOperation[];
  counts: StoredCounts[];
  circuits: StoredCircuit[];
}

const ms = (value: unknown): number => (value instanceof Date ? value.getTime() : new Date(String(value)).getTime());
const msOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : ms(value));
const mark = (at: unknown, status: unknown): Mark | null => (at === null || at === undefined ? null : { at: ms(at), status: statusOf(status) });

/**
 * What every process has flushed, as of `now`: the operations seen within ROW_RETENTION_MS, their
 * calls per verdict in the buckets that started within the last hour and the last day, and the
 * circuits. Three reads, no writes.
 */
export async function readUpstreamReport(db: Queryable, now: number): Promise<StoredReport> {
  const [operations, counts, circuits] = await Promise.all([
    db.query<Record<string, unknown>>(
      `SELECT upstream, operation, recent, last_changed_at, last_changed_status, last_blocked_at, last_blocked_status, last_seen_at
         FROM upstream_operations WHERE last_seen_at >= $1::timestamptz ORDER BY upstream, operation`,
      [iso(now - ROW_RETENTION_MS)],
    ),
    db.query<Record<string, unknown>>(
      `SELECT upstream, operation, verdict,
              coalesce(sum(calls) FILTER (WHERE bucket > $1::timestamptz), 0)::float8 AS last_hour,
              sum(calls)::float8 AS last_day
         FROM upstream_verdict_counts WHERE bucket > $2::timestamptz
        GROUP BY upstream, operation, verdict ORDER BY upstream, operation, verdict`,
      [iso(now - 3_600_000), iso(now - 24 * 3_600_000)],
    ),
    db.query<Record<string, unknown>>('SELECT upstream, state, open_until, trips, since FROM upstream_circuits ORDER BY upstream'),
  ]);
  return {
    operations: operations.map((r) => {
      const recent = (typeof r.recent === 'string' ? JSON.parse(r.recent) : r.recent) as Array<Record<string, unknown>>;
      return {
        upstream: String(r.upstream),
        operation: String(r.operation),
        recent: (Array.isArray(recent) ? recent : []).map((c) => ({
          at: Number(c.at),
          verdict: String(c.verdict),
          status: statusOf(c.status),
          durationMs: Number(c.duration_ms) || 0,
        })),
        lastChanged: mark(r.last_changed_at, r.last_changed_status),
        lastBlocked: mark(r.last_blocked_at, r.last_blocked_status),
        lastSeen: ms(r.last_seen_at),
      };
    }),
    counts: counts.map((r) => ({
      upstream: String(r.upstream),
      operation: String(r.operation),
      verdict: String(r.verdict),
      lastHour: Number(r.last_hour),
      lastDay: Number(r.last_day),
    })),
    circuits: circuits.map((r) => ({
      upstream: String(r.upstream),
      state: r.state as CircuitState,
      openUntil: msOrNull(r.open_until),
      trips: Number(r.trips),
      since: ms(r.since),
    })),
  };
}
