/**
 * Scaled mode: two server processes on one PostgreSQL database and one Redis share one crawl
 * (contract §9: any replica may run any job). It completes with every page once: no page is
 * fetched twice by the two processes, the per-host limit holds across them, and each page is
 * billed once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { createPlatformServices, type Services } from '../../src/services.ts';
import { freshPostgresDatabase } from '../support/service.ts';
import { spawnServer, type ServerProcess } from '../support/processes.ts';
import { pageKey, readAllResults, startCrawlSite, waitForJob, type CrawlSite } from '../support/crawl-site.ts';

const adminUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
const skip = !adminUrl || !redisUrl ? 'set TEST_DATABASE_URL and TEST_REDIS_URL (a PostgreSQL server and a Redis) to run the scaled tier' : false;

const METRICS_TOKEN = 'crawl-replicas-metrics-token';
const HOST_CONCURRENCY = 2;

/** The sum of a counter's samples (every label set) in a Prometheus text answer. */
function counterTotal(text: string, name: string): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) total += Number(line.slice(line.lastIndexOf(' ') + 1)) || 0;
  }
  return total;
}

describe('two server processes share one crawl', { skip }, () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let services: Services;
  let servers: ServerProcess[] = [];
  let site: CrawlSite;
  let dataDir: string;

  before(async () => {
    database = await freshPostgresDatabase(adminUrl!);
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-crawl-replicas-'));
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl!,
      REDIS_PREFIX: `gleaner-crawl-replicas-${Math.random().toString(36).slice(2)}:`,
      DATA_DIR: dataDir,
      OUTBOUND_ALLOW_HOSTS: 'localhost',
      JOB_CONCURRENCY: '4',
      JOB_HOST_CONCURRENCY: String(HOST_CONCURRENCY),
      JOB_POLL_SECONDS: '0.5',
      METRICS_TOKEN,
    };
    // This process migrates and creates users; it runs no job itself (JOB_CONCURRENCY 0).
    services = await createPlatformServices(loadConfig({ ...env, JOB_CONCURRENCY: '0' }));
    servers = await Promise.all([spawnServer(env, { startTimeoutMs: 60_000 }), spawnServer(env, { startTimeoutMs: 60_000 })]);
    // Slow enough that both processes' workers have pages in flight at once.
    site = await startCrawlSite({ pages: 300, latencyMs: 30, crawlDelay: 0 });
  });

  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await services?.close();
    await database?.drop();
    await site?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test('limit 300, max_depth 3: completes, every page fetched once, billed once', { timeout: 420_000 }, async (t) => {
    const user = await services.accounts.createUser({ name: 'Replicas', email: `r${Math.random().toString(36).slice(2)}@example.com` });
    await services.ledger.grant(user.id, 'scraping', 1000);

    const created = await fetch(`${servers[0].url}/v1/crawl`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: site.url, limit: 300, max_depth: 3 }),
    });
    const body = (await created.json()) as { id: string };
    assert.equal(created.status, 201, JSON.stringify(body));

    // Read back through the other process: any replica answers for any job.
    const job = await waitForJob(servers[1].url, 'crawl', body.id, user.token, 360_000);
    assert.equal(job.status, 'completed');
    assert.equal(job.completed, 300);
    assert.equal(job.credits_used, 300);

    const { data } = await readAllResults(servers[1].url, 'crawl', body.id, user.token);
    assert.equal(data.length, 300);
    const keys = data.map((page) => pageKey(page.url));
    assert.equal(new Set(keys).size, 300, 'no page delivered twice');
    assert.ok(keys.every((key) => site.pagePaths.includes(key)));

    // The site's side: the two processes never fetched the same page, robots.txt or sitemap twice.
    await site.flush();
    const counts = new Map<string, number>();
    for (const hit of site.log) counts.set(hit.key, (counts.get(hit.key) ?? 0) + 1);
    const once = new Set([...site.pagePaths, ...site.metaPaths]);
    assert.deepEqual(
      [...counts].filter(([key, n]) => once.has(key) && n > 1),
      [],
      'each page, robots.txt and sitemap fetched at most once across both processes',
    );
    assert.equal(site.privateHits(), 0);
    assert.equal(site.canaryHits(), 0);
    assert.ok(
      site.maxInFlight() <= HOST_CONCURRENCY,
      `at most ${HOST_CONCURRENCY} pages in flight on the host across both processes (JOB_HOST_CONCURRENCY); saw ${site.maxInFlight()}: ${site.busiest().join(' ')}`,
    );

    // The money.
    assert.equal(await services.ledger.balance(user.id, 'scraping'), 700);
    const [holds] = await services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM credit_holds WHERE user_id = $1', [user.id]);
    assert.equal(holds.n, 0, 'no hold left');
    for (const row of await services.ledger.recompute(user.id)) assert.equal(row.stored, row.ledger, `ledger and balance agree for ${row.product}`);

    // Who did the work, when the processes say (informative: not every run splits the work).
    const pagesBy = await Promise.all(
      servers.map(async (server) => {
        try {
          const r = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
          return r.ok ? counterTotal(await r.text(), 'gleaner_job_pages_total') : null;
        } catch {
          return null;
        }
      }),
    );
    t.diagnostic(`gleaner_job_pages_total per process: ${pagesBy.map((n) => (n === null ? 'unavailable' : String(n))).join(', ')}`);
    if (pagesBy.every((n) => n !== null) && pagesBy.some((n) => n === 0)) t.diagnostic('only one process fetched pages in this run');
  });
});
