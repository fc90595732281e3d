/**
 * The upstream drift report's store and its read side: aggregation in memory, one statement per
 * flush, merging between processes, pruning, and a database that goes away. On embedded PGlite,
 * or on a fresh PostgreSQL database when TEST_DATABASE_URL is set (where flushes really run at once).
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { openDatabase, withDefaultUser, type Database, type Queryable } from '../../src/storage/db.ts';
import { migrate } from '../../src/storage/migrate.ts';
import {
  BUCKET_MS,
  MAX_OPERATIONS,
  RECENT_VERDICTS,
  UpstreamReportStore,
  type ReportLogger,
} from '../../src/upstream-report/store.ts';
import { upstreamReport, upstreamReportRows, type UpstreamReport } from '../../src/operations/index.ts';
import type { RuntimeEvent, Verdict } from '../../src/core/upstream-events.ts';

const HOUR = 3_600_000;
/** A bucket boundary, so tests know which bucket a call falls in. */
const NOW = Math.floor(Date.parse('2026-11-22T10:15:00Z') / BUCKET_MS) * BUCKET_MS + 60_000;

let dataDir: string;
let db: Database;
let postgres: { url: string; drop(): Promise<void> } | null = null;

/** An empty database of its own on the PostgreSQL server of TEST_DATABASE_URL (this file loads no server). */
async function freshPostgresDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const pg = (await import('pg')).default;
  const name = `gleaner_t_${randomBytes(6).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: withDefaultUser(adminUrl) });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(withDefaultUser(adminUrl));
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

before(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-upstream-report-'));
  if (process.env.TEST_DATABASE_URL) postgres = await freshPostgresDatabase(process.env.TEST_DATABASE_URL);
  db = await openDatabase({ dataDir, databaseUrl: postgres?.url });
  await migrate(db);
});
after(async () => {
  await db.close();
  await postgres?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});
beforeEach(async () => {
  await db.exec('TRUNCATE upstream_operations, upstream_verdict_counts, upstream_circuits');
});

const call = (upstream: string, operation: string, verdict: string, at: number, extra: Partial<Extract<RuntimeEvent, { type: 'call' }>> = {}): RuntimeEvent => ({
  type: 'call',
  upstream,
  operation,
  verdict: verdict as Verdict,
  durationMs: 120,
  attempts: 1,
  at,
  ...extra,
});

/** A store on the test database with a fixed clock and no timer. */
function store(options: { now?: () => number; db?: Queryable; logger?: ReportLogger } = {}) {
  return new UpstreamReportStore(options.db ?? db, { flushIntervalMs: 0, now: options.now ?? (() => NOW), logger: options.logger });
}

const report = (now = NOW) => upstreamReport({ db }, { now });
const operationOf = (r: UpstreamReport, upstream: string, operation: string) =>
  r.upstreams.find((u) => u.upstream === upstream)?.operations.find((o) => o.operation === operation);

/** Counts the statements sent to the database. */
function counting(inner: Queryable): Queryable & { statements: string[] } {
  const statements: string[] = [];
  return {
    statements,
    query(sql, params) {
      statements.push(sql);
      return inner.query(sql, params);
    },
  };
}

function recordingLogger(): ReportLogger & { warnings: Array<{ details: Record<string, unknown>; message: string }> } {
  const warnings: Array<{ details: Record<string, unknown>; message: string }> = [];
  return { warnings, warn: (details, message) => warnings.push({ details, message }) };
}

describe('aggregation', () => {
  test('the last verdicts newest first, counts per verdict over the last hour and day, the last changed and blocked calls', async () => {
    const s = store();
    s.record(call('bing', 'search', 'ok', NOW - 3 * HOUR, { status: 200 }));
    s.record(call('bing', 'search', 'changed', NOW - 2 * HOUR, { status: 200 }));
    s.record(call('bing', 'search', 'blocked', NOW - 30 * 60_000, { status: 429 }));
    s.record(call('bing', 'search', 'ok', NOW - 10_000, { status: 200, durationMs: 812.6 }));
    s.record(call('bing', 'search', 'timeout', NOW - 5_000));
    // A caller that went away says nothing about the upstream.
    s.record(call('bing', 'search', 'aborted', NOW - 1_000));
    assert.equal(await s.flush(), true);

    const r = await report();
    assert.equal(r.generated_at, new Date(NOW).toISOString().replace('Z', '000Z'));
    assert.deepEqual(r.upstreams.map((u) => u.upstream), ['bing']);
    assert.deepEqual(r.upstreams[0].circuit, { state: 'closed', open_until: null, trips: 0, since: null });
    const op = operationOf(r, 'bing', 'search')!;
    assert.deepEqual(
      op.last_verdicts.map((v) => [v.verdict, v.status]),
      [['timeout', null], ['ok', 200], ['blocked', 429], ['changed', 200], ['ok', 200]],
    );
    assert.deepEqual(op.last_verdicts[1], { at: new Date(NOW - 10_000).toISOString().replace('Z', '000Z'), verdict: 'ok', status: 200, duration_ms: 813 });
    assert.deepEqual(op.last_hour, { blocked: 1, ok: 1, timeout: 1 });
    assert.deepEqual(op.last_day, { blocked: 1, changed: 1, ok: 2, timeout: 1 });
    assert.deepEqual(op.last_changed, { at: new Date(NOW - 2 * HOUR).toISOString().replace('Z', '000Z'), status: 200 });
    assert.deepEqual(op.last_blocked, { at: new Date(NOW - 30 * 60_000).toISOString().replace('Z', '000Z'), status: 429 });
    assert.equal(op.last_seen, new Date(NOW - 5_000).toISOString().replace('Z', '000Z'));
    await s.close();
  });

  test(`only the last ${RECENT_VERDICTS} verdicts are kept, across flushes; counts add up`, async () => {
    const s = store();
    for (let i = 0; i < 30; i++) s.record(call('reddit', 'listing', i % 2 ? 'ok' : 'empty', NOW - 60_000 + i * 1_000, { status: 200 }));
    await s.flush();
    for (let i = 0; i < 5; i++) s.record(call('reddit', 'listing', 'not_found', NOW - 10_000 + i * 1_000, { status: 404 }));
    await s.flush();
    const op = operationOf(await report(), 'reddit', 'listing')!;
    assert.equal(op.last_verdicts.length, RECENT_VERDICTS);
    assert.deepEqual(op.last_verdicts.slice(0, 5).map((v) => v.verdict), Array(5).fill('not_found'));
    const times = op.last_verdicts.map((v) => Date.parse(v.at));
    assert.deepEqual(times, [...times].sort((a, b) => b - a), 'newest first');
    assert.deepEqual(op.last_hour, { empty: 15, not_found: 5, ok: 15 });
    assert.equal(op.last_changed, null);
    assert.equal(op.last_blocked, null);
  });

  test('two processes on one database: their calls merge, a later changed/blocked call wins whoever flushes last', async () => {
    const a = store();
    const b = store();
    a.record(call('x', 'TweetResultByRestId', 'ok', NOW - 20_000, { status: 200 }));
    a.record(call('x', 'TweetResultByRestId', 'blocked', NOW - 5_000, { status: 403 }));
    b.record(call('x', 'TweetResultByRestId', 'blocked', NOW - 50_000, { status: 429 }));
    b.record(call('x', 'TweetResultByRestId', 'ok', NOW - 1_000, { status: 200 }));
    await Promise.all([a.flush(), b.flush()]);
    await a.flush();
    const op = operationOf(await report(), 'x', 'TweetResultByRestId')!;
    assert.deepEqual(op.last_verdicts.map((v) => v.status), [200, 403, 200, 429]);
    assert.deepEqual(op.last_hour, { blocked: 2, ok: 2 });
    assert.deepEqual(op.last_blocked?.status, 403);
  });

  test('many processes flushing the same rows at once: every call counted, none fails', async () => {
    const stores = Array.from({ length: 8 }, () => store());
    for (let round = 0; round < 3; round++) {
      stores.forEach((s, n) => {
        for (let i = 0; i < 20; i++) s.record(call(['bing', 'brave', 'mojeek'][(i + n) % 3], ['search', 'suggest'][i % 2], i % 5 ? 'ok' : 'blocked', NOW - i * 1_000 - n, { status: 200 }));
        s.record({ type: 'circuit', upstream: 'bing', state: n % 2 ? 'open' : 'closed', openUntil: NOW + 60_000, trips: n % 2, at: NOW - 1_000 * round - n });
      });
      assert.deepEqual(await Promise.all(stores.map((s) => s.flush())), stores.map(() => true));
    }
    const r = await report();
    const total = r.upstreams.flatMap((u) => u.operations).reduce((sum, o) => sum + Object.values(o.last_hour).reduce((a, b) => a + b, 0), 0);
    assert.equal(total, 8 * 20 * 3);
    // The newest change: round 0, process 0.
    assert.deepEqual(r.upstreams.find((u) => u.upstream === 'bing')?.circuit.state, 'closed');
  });

  test('circuits: the last change wins; an open circuit past its open_until shows as half_open', async () => {
    const s = store();
    s.record({ type: 'circuit', upstream: 'bing', state: 'open', openUntil: NOW + 30_000, trips: 2, at: NOW - 10_000 });
    s.record({ type: 'circuit', upstream: 'brave', state: 'open', openUntil: NOW - 1_000, trips: 1, at: NOW - 60_000 });
    s.record({ type: 'circuit', upstream: 'mojeek', state: 'closed', trips: 0, at: NOW - 5_000 });
    await s.flush();
    // A process that flushes an older change later does not undo the newer one.
    const late = store();
    late.record({ type: 'circuit', upstream: 'bing', state: 'closed', trips: 0, at: NOW - 20_000 });
    await late.flush();

    const r = await report();
    const circuit = (upstream: string) => r.upstreams.find((u) => u.upstream === upstream)?.circuit;
    assert.deepEqual(circuit('bing'), {
      state: 'open',
      open_until: new Date(NOW + 30_000).toISOString().replace('Z', '000Z'),
      trips: 2,
      since: new Date(NOW - 10_000).toISOString().replace('Z', '000Z'),
    });
    assert.equal(circuit('brave')?.state, 'half_open');
    assert.deepEqual(circuit('mojeek'), { state: 'closed', open_until: null, trips: 0, since: new Date(NOW - 5_000).toISOString().replace('Z', '000Z') });
    // An upstream with a circuit but no call kept is listed with no operations.
    assert.deepEqual(r.upstreams.find((u) => u.upstream === 'bing')?.operations, []);
    // Later, the open circuit's time has passed: the next call probes.
    assert.equal((await report(NOW + 31_000)).upstreams.find((u) => u.upstream === 'bing')?.circuit.state, 'half_open');
  });
});

describe('writing', () => {
  test('one statement per flush, however many calls; none when nothing happened', async () => {
    const spy = counting(db);
    const s = store({ db: spy });
    assert.equal(await s.flush(), true);
    assert.equal(spy.statements.length, 0);
    for (let i = 0; i < 500; i++) s.record(call(`up${i % 7}`, `op${i % 3}`, ['ok', 'blocked', 'changed', 'empty'][i % 4], NOW - i * 10_000, { status: 200 + (i % 3) }));
    s.record({ type: 'circuit', upstream: 'up1', state: 'open', openUntil: NOW + 1_000, trips: 1, at: NOW });
    assert.equal(await s.flush(), true);
    assert.equal(spy.statements.length, 1);
    assert.deepEqual(s.pending, { operations: 0, circuits: 0 });
    const r = await report();
    assert.equal(r.upstreams.length, 7);
    const total = r.upstreams.flatMap((u) => u.operations).reduce((sum, o) => sum + Object.values(o.last_day).reduce((a, b) => a + b, 0), 0);
    assert.equal(total, 500);
  });

  test('only names, verdicts, statuses, durations and times are stored', async () => {
    const s = store();
    const event = { ...call('web', 'page', 'blocked', NOW, { status: 403 }), reason: 'captcha at https://example.com/?q=secret-query', query: 'secret-query', token: 'secret-token' };
    s.record(event);
    await s.flush();
    const rows = await Promise.all(['upstream_operations', 'upstream_verdict_counts', 'upstream_circuits'].map((t) => db.query(`SELECT * FROM ${t}`)));
    assert.doesNotMatch(JSON.stringify(rows), /secret|example\.com/);
    const [stored] = rows[0] as Array<{ recent: unknown[] }>;
    assert.deepEqual(Object.keys(stored.recent[0] as object).sort(), ['at', 'duration_ms', 'status', 'verdict']);
  });

  test('a timer flushes by itself; close flushes what is left and ignores later events', async () => {
    const s = new UpstreamReportStore(db, { flushIntervalMs: 20, now: () => NOW });
    s.record(call('duckduckgo', 'search', 'ok', NOW - 1_000, { status: 200 }));
    for (let i = 0; i < 100 && !operationOf(await report(), 'duckduckgo', 'search'); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(operationOf(await report(), 'duckduckgo', 'search'), 'flushed by the timer');
    s.record(call('duckduckgo', 'search', 'changed', NOW, { status: 200 }));
    await s.close();
    assert.equal(operationOf(await report(), 'duckduckgo', 'search')?.last_changed?.status, 200);
    s.record(call('duckduckgo', 'search', 'blocked', NOW, { status: 429 }));
    await s.flush();
    assert.equal(operationOf(await report(), 'duckduckgo', 'search')?.last_blocked, null);
  });

  test('a database that is away: the flush is logged, never thrown, and its calls are written by the next one', async () => {
    let away = true;
    const flaky: Queryable = {
      query(sql, params) {
        return away ? Promise.reject(new Error('connection refused')) : db.query(sql, params);
      },
    };
    const logger = recordingLogger();
    const s = store({ db: flaky, logger });
    s.record(call('startpage', 'search', 'blocked', NOW - 2_000, { status: 403 }));
    s.record({ type: 'circuit', upstream: 'startpage', state: 'open', openUntil: NOW + 60_000, trips: 1, at: NOW - 1_000 });
    assert.equal(await s.flush(), false);
    s.record(call('startpage', 'search', 'ok', NOW - 500, { status: 200 }));
    assert.equal(await s.flush(), false);
    assert.equal(logger.warnings.length, 1, 'one warning while it keeps failing, not one per flush');
    assert.match(logger.warnings[0].message, /failed/);
    assert.deepEqual(s.pending, { operations: 1, circuits: 1 });

    away = false;
    assert.equal(await s.flush(), true);
    assert.match(logger.warnings.at(-1)!.message, /written again/);
    const r = await report();
    const op = operationOf(r, 'startpage', 'search')!;
    assert.deepEqual(op.last_verdicts.map((v) => v.verdict), ['ok', 'blocked']);
    assert.deepEqual(op.last_hour, { blocked: 1, ok: 1 });
    assert.equal(r.upstreams[0].circuit.state, 'open');
    await s.close();
  });

  test('memory stays bounded while the database is away', async () => {
    const logger = recordingLogger();
    let now = NOW;
    const s = store({ db: { query: () => Promise.reject(new Error('down')) }, logger, now: () => now });
    for (let i = 0; i < MAX_OPERATIONS + 50; i++) s.record(call('many', `op${i}`, 'ok', now));
    assert.equal(s.pending.operations, MAX_OPERATIONS);
    assert.equal(await s.flush(), false);
    assert.ok(logger.warnings.some((w) => w.details.dropped === 50));
    assert.equal(s.pending.operations, MAX_OPERATIONS);
    // A day and more later, the old buckets are dropped from memory instead of piling up.
    now += 26 * HOUR;
    for (let i = 0; i < 100; i++) s.record(call('many', 'op0', 'ok', now - i));
    assert.equal(await s.flush(), false);
    assert.equal(s.pending.operations, MAX_OPERATIONS);
  });
});

describe('pruning', () => {
  test('buckets older than 25 hours, and operations and circuits idle for a week, are deleted as flushes go', async () => {
    let now = NOW;
    const s = store({ now: () => now });
    s.record(call('bing', 'search', 'ok', now - 2 * HOUR));
    s.record(call('google', 'search', 'changed', now - HOUR, { status: 200 }));
    s.record({ type: 'circuit', upstream: 'google', state: 'closed', trips: 0, at: now - HOUR });
    await s.flush();
    assert.equal((await db.query('SELECT * FROM upstream_verdict_counts')).length, 2);

    // 26 hours later: the buckets went, the rows stay (their last changed call is still news).
    now += 26 * HOUR;
    s.record(call('bing', 'search', 'ok', now - 1_000));
    await s.flush();
    assert.deepEqual(
      (await db.query<{ upstream: string }>('SELECT upstream FROM upstream_verdict_counts')).map((r) => r.upstream),
      ['bing'],
    );
    let r = await report(now);
    assert.deepEqual(operationOf(r, 'google', 'search')?.last_day, {});
    assert.equal(operationOf(r, 'google', 'search')?.last_changed?.status, 200);
    assert.deepEqual(operationOf(r, 'bing', 'search')?.last_hour, { ok: 1 });

    // A week later: google was not called since, so it leaves the report and the tables.
    now += 7 * 24 * HOUR;
    s.record(call('bing', 'search', 'ok', now - 1_000));
    await s.flush();
    r = await report(now);
    assert.deepEqual(r.upstreams.map((u) => u.upstream), ['bing']);
    assert.deepEqual((await db.query('SELECT upstream FROM upstream_operations')).length, 1);
    assert.deepEqual((await db.query('SELECT upstream FROM upstream_circuits')).length, 0);
  });
});

test('the terminal table: one row per operation, runs of verdicts folded', async () => {
  const s = store();
  s.record({ type: 'circuit', upstream: 'bing', state: 'open', openUntil: NOW + 60_000, trips: 2, at: NOW - 1_000 });
  for (let i = 0; i < 3; i++) s.record(call('bing', 'search', 'ok', NOW - 60_000 + i, { status: 200 }));
  s.record(call('bing', 'search', 'blocked', NOW - 30_000, { status: 429 }));
  s.record(call('bing', 'search', 'blocked', NOW - 20_000, { status: 429 }));
  await s.flush();
  const rows = upstreamReportRows(await report());
  assert.deepEqual(rows, [
    {
      upstream: 'bing',
      operation: 'search',
      circuit: `open until ${new Date(NOW + 60_000).toISOString().replace(/\.\d+Z$/, 'Z')} (2 trips)`,
      'last verdicts (newest first)': 'blocked 429 ×2, ok ×3',
      'last hour': 'ok 3, blocked 2',
      'last day': 'ok 3, blocked 2',
      'last changed': '',
      'last blocked': `${new Date(NOW - 20_000).toISOString().replace(/\.\d+Z$/, 'Z')} (429)`,
    },
  ]);
});

