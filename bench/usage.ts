/**
 * GET /usage's query for a user with 1M history rows: time of the 30-day and 366-day windows, with
 * migration 0006's index and without it (dropped for the comparison), on embedded PGlite, or on
 * PostgreSQL when BENCH_DATABASE_URL is set (a throw-away database is created and dropped).
 *
 * Usage: node bench/usage.ts
 * Environment:
 *   BENCH_ROWS            history rows of the measured user (default 1000000), spread over 400 days
 *   BENCH_OTHER_ROWS      rows of 100 other users around them (default 200000)
 *   BENCH_DATABASE_URL    PostgreSQL server (default: embedded PGlite in a temporary directory)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDatabase, type Database } from '../src/storage/db.ts';
import { migrate } from '../src/storage/migrate.ts';
import { usageByDay, usageWindowStart } from '../src/history/usage.ts';
import { freshPostgresDatabase } from '../test/support/service.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const OTHER_ROWS = Number(process.env.BENCH_OTHER_ROWS ?? 200_000);
const USER = 1;

async function time(label: string, run: () => Promise<unknown>, repeat = 5): Promise<void> {
  await run(); // warm
  const times: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  console.log(`${label.padEnd(44)} median ${times[Math.floor(times.length / 2)].toFixed(1).padStart(8)} ms   best ${times[0].toFixed(1).padStart(8)} ms`);
}

async function fill(db: Database): Promise<void> {
  const start = performance.now();
  // The user's rows over 400 days, newest last (ids grow with time, as in real history).
  await db.query(
    `INSERT INTO request_history (user_id, request_id, method, endpoint, product, status, credits, duration_ms, params, created_at)
     SELECT $1, 'u-' || g, 'POST', CASE g % 3 WHEN 0 THEN '/v1/pdf' WHEN 1 THEN '/v1/image' ELSE '/v1/engine-search' END,
            CASE g % 3 WHEN 2 THEN 'scraping' ELSE 'extraction' END, CASE WHEN g % 10 = 0 THEN 422 ELSE 200 END,
            CASE WHEN g % 10 = 0 THEN 0 ELSE 3 END, 100, '{"url":"https://example.com/a.pdf"}'::jsonb,
            now() - make_interval(secs => (($2 - g)::double precision / $2) * 400 * 86400)
       FROM generate_series(1, $2) AS g`,
    [USER, ROWS],
  );
  await db.query(
    `INSERT INTO request_history (user_id, request_id, method, endpoint, product, status, credits, duration_ms, created_at)
     SELECT 2 + g % 100, 'o-' || g, 'POST', '/v1/pdf', 'extraction', 200, 1, 100, now() - make_interval(secs => (g % 400) * 86400)
       FROM generate_series(1, $1) AS g`,
    [OTHER_ROWS],
  );
  await db.query('ANALYZE request_history');
  console.log(`filled ${ROWS.toLocaleString('en')} + ${OTHER_ROWS.toLocaleString('en')} history rows in ${((performance.now() - start) / 1000).toFixed(1)} s`);
}

const dataDir = mkdtempSync(join(tmpdir(), 'gleaner-bench-usage-'));
const postgres = process.env.BENCH_DATABASE_URL ? await freshPostgresDatabase(process.env.BENCH_DATABASE_URL) : null;
const db = await openDatabase({ databaseUrl: postgres?.url, dataDir });
try {
  console.log(`database: ${db.kind}`);
  await migrate(db);
  await fill(db);
  const now = new Date();
  for (const indexed of [true, false]) {
    if (!indexed) await db.query('DROP INDEX request_history_user_time');
    const tag = indexed ? 'with the 0006 index' : 'without it';
    await time(`30 days, ${tag}`, () => usageByDay(db, USER, usageWindowStart(now, 30)));
    await time(`366 days, ${tag}`, () => usageByDay(db, USER, usageWindowStart(now, 366)), 3);
  }
} finally {
  await db.close();
  await postgres?.drop();
  rmSync(dataDir, { recursive: true, force: true });
}
