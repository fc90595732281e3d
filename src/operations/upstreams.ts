/**
 * The upstream drift report (GET /admin/upstreams, `gleaner upstreams`): per upstream, its circuit
 * breaker, and per operation on it the last verdicts, the calls per verdict over the last hour and
 * the last day, and when it last came back `changed` (the parser cannot read the answer: the
 * upstream changed its markup or schema) or `blocked` (refused, rate-limited, a captcha). Read from
 * what every server process has flushed (src/upstream-report/), so it lags by a few seconds.
 */
import { readUpstreamReport, type CircuitState, type StoredOperation } from '../upstream-report/store.ts';
import type { OperationStores } from './stores.ts';
import { isoMicros } from '../core/time.ts';

export interface UpstreamReport {
  /** When the report was read (ISO 8601 UTC with microseconds). */
  generated_at: string;
  /** Upstreams by name. */
  upstreams: UpstreamEntry[];
}

export interface UpstreamEntry {
  upstream: string;
  circuit: CircuitReport;
  /** Operations by name. */
  operations: OperationReport[];
}

/**
 * The upstream's circuit breaker as of the last change any process reported. An `open` circuit
 * whose `open_until` has passed shows as `half_open`: its next call is the probe. `since` is null
 * when no change was reported lately (the circuit is closed).
 */
export interface CircuitReport {
  state: CircuitState;
  open_until: string | null;
  trips: number;
  since: string | null;
}

export interface OperationReport {
  upstream: string;
  operation: string;
  /** Newest first, at most 20. `status`: the upstream's HTTP status; null for `ok` and when no answer came. */
  last_verdicts: Array<{ at: string; verdict: string; status: number | null; duration_ms: number }>;
  /** Calls per verdict in the 5-minute buckets that started within the last hour; verdicts without calls are left out. */
  last_hour: Record<string, number>;
  /** The same over the last 24 hours. */
  last_day: Record<string, number>;
  last_changed: { at: string; status: number | null } | null;
  last_blocked: { at: string; status: number | null } | null;
  /** The last call of any verdict. */
  last_seen: string;
}

/** ISO 8601 UTC with microseconds and Z, as every timestamp of the service. */
const iso = (ms: number) => isoMicros(ms);

const CLOSED: CircuitReport = { state: 'closed', open_until: null, trips: 0, since: null };

export async function upstreamReport(stores: Pick<OperationStores, 'db'>, options: { now?: number } = {}): Promise<UpstreamReport> {
  const now = options.now ?? Date.now();
  const stored = await readUpstreamReport(stores.db, now);
  const entries = new Map<string, UpstreamEntry>();
  const entry = (upstream: string) => {
    let found = entries.get(upstream);
    if (!found) entries.set(upstream, (found = { upstream, circuit: CLOSED, operations: [] }));
    return found;
  };
  for (const c of stored.circuits) {
    entry(c.upstream).circuit = {
      state: c.state === 'open' && c.openUntil !== null && c.openUntil <= now ? 'half_open' : c.state,
      open_until: c.openUntil === null ? null : iso(c.openUntil),
      trips: c.trips,
      since: iso(c.since),
    };
  }
  const operations = new Map<string, OperationReport>();
  for (const o of stored.operations) {
    const report = operationReport(o);
    operations.set(`${o.upstream}\u0000${o.operation}`, report);
    entry(o.upstream).operations.push(report);
  }
  for (const c of stored.counts) {
    const report = operations.get(`${c.upstream}\u0000${c.operation}`);
    if (!report) continue; // an operation not seen for a week has no calls in the last day either
    if (c.lastHour > 0) report.last_hour[c.verdict] = c.lastHour;
    if (c.lastDay > 0) report.last_day[c.verdict] = c.lastDay;
  }
  const byName = <T>(key: (item: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
  const upstreams = [...entries.values()].sort(byName((e) => e.upstream));
  for (const e of upstreams) e.operations.sort(byName((o) => o.operation));
  return { generated_at: iso(now), upstreams };
}

function operationReport(o: StoredOperation): OperationReport {
  const mark = (m: StoredOperation['lastChanged']) => (m ? { at: iso(m.at), status: m.status } : null);
  return {
    upstream: o.upstream,
    operation: o.operation,
    last_verdicts: o.recent.map((c) => ({ at: iso(c.at), verdict: c.verdict, status: c.status, duration_ms: c.durationMs })),
    last_hour: {},
    last_day: {},
    last_changed: mark(o.lastChanged),
    last_blocked: mark(o.lastBlocked),
    last_seen: iso(o.lastSeen),
  };
}

/**
 * The report as rows of a terminal table (`gleaner upstreams` without --json): one per upstream
 * operation, runs of the same verdict folded ("ok ×12, blocked 429 ×3"), times to the second.
 */
export function upstreamReportRows(report: UpstreamReport): Array<Record<string, string>> {
  const time = (at: string | null | undefined) => (at ? at.replace(/\.\d+Z$/, 'Z') : '');
  const counts = (byVerdict: Record<string, number>) =>
    Object.entries(byVerdict)
      .sort(([, a], [, b]) => b - a)
      .map(([verdict, calls]) => `${verdict} ${calls}`)
      .join(', ');
  const trips = (n: number) => `${n} trip${n === 1 ? '' : 's'}`;
  const circuit = (c: CircuitReport) =>
    c.state === 'open' ? `open until ${time(c.open_until)} (${trips(c.trips)})` : c.state === 'half_open' ? `half_open (${trips(c.trips)})` : 'closed';
  const mark = (m: { at: string; status: number | null } | null) => (m ? `${time(m.at)}${m.status === null ? '' : ` (${m.status})`}` : '');
  return report.upstreams.flatMap((u) => {
    const rows = u.operations.map((o) => ({
      upstream: u.upstream,
      operation: o.operation,
      circuit: circuit(u.circuit),
      'last verdicts (newest first)': foldVerdicts(o.last_verdicts),
      'last hour': counts(o.last_hour),
      'last day': counts(o.last_day),
      'last changed': mark(o.last_changed),
      'last blocked': mark(o.last_blocked),
    }));
    // An upstream with a circuit change but no call kept still shows its circuit.
    return rows.length ? rows : [{ upstream: u.upstream, operation: '', circuit: circuit(u.circuit), 'last verdicts (newest first)': '', 'last hour': '', 'last day': '', 'last changed': '', 'last blocked': '' }];
  });
}

/** "ok ×3, blocked 429, ok ×2": consecutive equal verdicts (and statuses, shown when not ok) folded. */
function foldVerdicts(calls: OperationReport['last_verdicts']): string {
  const runs: Array<{ label: string; n: number }> = [];
  for (const call of calls) {
    const label = call.status === null || call.verdict === 'ok' || call.verdict === 'empty' ? call.verdict : `${call.verdict} ${call.status}`;
    const last = runs.at(-1);
    if (last?.label === label) last.n++;
    else runs.push({ label, n: 1 });
  }
  return runs.map((r) => (r.n > 1 ? `${r.label} ×${r.n}` : r.label)).join(', ');
}
