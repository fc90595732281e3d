/**
 * A crawl survives a SIGKILL of the server running it (contract §9: jobs are durable, never in
 * memory): the next server on the same embedded database resumes it, and it completes with every
 * page once and billed once, the dead process's holds returned, the ledger audit clean.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { admin, spawnServer, waitUntil, type ServerProcess } from '../support/processes.ts';
import { pageKey, readAllResults, readJob, startCrawlSite, waitForJob } from '../support/crawl-site.ts';

test('SIGKILL in the middle of a 200-page crawl: a restarted server completes it, each page billed once', { timeout: 420_000 }, async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-crawl-restart-'));
  const site = await startCrawlSite({ pages: 300, latencyMs: 50, crawlDelay: 0 });
  const env = {
    DATA_DIR: dataDir,
    OUTBOUND_ALLOW_HOSTS: 'localhost',
    // A dead process's holds come back quickly, and its tasks are handed on quickly.
    HOLD_TTL_SECONDS: '2',
    HOLD_SWEEP_INTERVAL_MS: '200',
    JOB_SUPERVISE_SECONDS: '1',
    JOB_POLL_SECONDS: '0.5',
  };
  const servers: ServerProcess[] = [];
  try {
    const first = await spawnServer(env, { startTimeoutMs: 120_000 });
    servers.push(first);
    const user = await admin(dataDir, 'users', 'create', '--name', 'Crawler', '--email', 'crawler@example.com');
    await admin(dataDir, 'credits', 'grant', '--user', String(user.id), '--product', 'scraping', '--amount', '1000');

    const created = await fetch(`${first.url}/v1/crawl`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: site.url, limit: 200, max_depth: 3 }),
    });
    const body = (await created.json()) as { id: string };
    assert.equal(created.status, 201, JSON.stringify(body));
    const id: string = body.id;

    await waitForJob(first.url, 'crawl', id, user.token, 120_000, (job) => job.completed >= 40);
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    await site.flush();
    const hitsAtKill = site.log.length;

    const second = await spawnServer(env, { startTimeoutMs: 120_000 });
    servers.push(second);
    const atRestart = await readJob(second.url, 'crawl', id, user.token);
    assert.ok(atRestart.completed < 200, `the kill came mid-crawl (${atRestart.completed} of 200 pages delivered before it)`);

    const job = await waitForJob(second.url, 'crawl', id, user.token, 300_000);
    assert.equal(job.status, 'completed');
    assert.equal(job.completed, 200);
    assert.equal(job.credits_used, 200, 'each page billed once');
    await site.flush();
    assert.ok(site.log.length > hitsAtKill, 'the restarted server went on fetching');

    const { data } = await readAllResults(second.url, 'crawl', id, user.token);
    assert.equal(data.length, 200);
    assert.equal(new Set(data.map((page) => pageKey(page.url))).size, 200, '200 distinct pages');
    assert.ok(data.every((page) => site.pagePaths.includes(pageKey(page.url))));
    assert.equal(site.privateHits(), 0);
    assert.equal(site.canaryHits(), 0);

    // The money: the balance dropped by the 200 pages; the dead process's holds came back.
    const scraping = async () => (await admin(dataDir, 'credits', 'show', '--user', String(user.id))).balances.find((b: any) => b.product === 'scraping');
    await waitUntil(async () => (await scraping()).held === 0, 30_000, 'no hold left (the sweeper returns the dead process\'s)');
    assert.equal((await scraping()).balance, 800, 'the balance dropped by exactly 200');
    const audit = await admin(dataDir, 'credits', 'audit');
    assert.deepEqual(audit.mismatches, []);
  } finally {
    for (const server of servers) {
      if (server.child.exitCode === null && server.child.signalCode === null) await server.stop();
    }
    await site.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('SIGTERM mid-crawl: the server stops taking pages, releases the holds of the pages in hand, exits; the next one completes the crawl', { timeout: 420_000 }, async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-crawl-term-'));
  // Slow pages, so that some are in hand when the server is told to stop.
  const site = await startCrawlSite({ pages: 80, latencyMs: 400, crawlDelay: 0 });
  // A short grace: the pages in hand are aborted, not awaited. A long hold TTL: holds that come
  // back before the restart were released by the stopping server, not swept.
  const env = { DATA_DIR: dataDir, OUTBOUND_ALLOW_HOSTS: 'localhost', SHUTDOWN_GRACE_MS: '100', HOLD_TTL_SECONDS: '600', JOB_POLL_SECONDS: '0.5' };
  const servers: ServerProcess[] = [];
  try {
    const first = await spawnServer(env, { startTimeoutMs: 120_000 });
    servers.push(first);
    const user = await admin(dataDir, 'users', 'create', '--name', 'Crawler', '--email', 'crawler@example.com');
    await admin(dataDir, 'credits', 'grant', '--user', String(user.id), '--product', 'scraping', '--amount', '100');
    const created = await fetch(`${first.url}/v1/crawl`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: site.url, limit: 60, max_depth: 3, sitemap: 'skip' }),
    });
    const { id } = (await created.json()) as { id: string };
    assert.equal(created.status, 201);
    await waitForJob(first.url, 'crawl', id, user.token, 120_000, (job) => job.completed >= 5);

    await first.stop();
    assert.equal(first.child.exitCode, 0, 'a clean exit');
    // A server that runs no job workers, to read the database as the stopped one left it.
    const reader = await spawnServer({ ...env, JOB_CONCURRENCY: '0' }, { startTimeoutMs: 120_000 });
    servers.push(reader);
    const scraping = async () => (await admin(dataDir, 'credits', 'show', '--user', String(user.id))).balances.find((b: any) => b.product === 'scraping');
    const stopped = await scraping();
    assert.equal(stopped.held, 0, 'the pages in hand released their holds as the server stopped');
    const shown = await admin(dataDir, 'jobs', 'show', '--job', id);
    assert.equal(shown.status, 'running', 'the job itself goes on');
    assert.equal(stopped.balance, 100 - shown.credits_used, 'only delivered pages were charged');
    await reader.stop();

    const second = await spawnServer(env, { startTimeoutMs: 120_000 });
    servers.push(second);
    const job = await waitForJob(second.url, 'crawl', id, user.token, 300_000);
    assert.equal(job.status, 'completed');
    assert.equal(job.completed, 60);
    assert.equal(job.credits_used, 60);
    const { data } = await readAllResults(second.url, 'crawl', id, user.token);
    assert.equal(new Set(data.map((page) => pageKey(page.url))).size, 60, '60 distinct pages');
    assert.equal((await scraping()).balance, 40, 'each page billed once');
    assert.deepEqual((await admin(dataDir, 'credits', 'audit')).mismatches, []);
  } finally {
    for (const server of servers) {
      if (server.child.exitCode === null && server.child.signalCode === null) await server.stop();
    }
    await site.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
