/**
 * A whole crawl through the real server: pages per second, the server's memory, and how long
 * other requests wait meanwhile.
 *
 * The server runs as a child process (test/support/serve-test-endpoints.ts, embedded PGlite in a
 * temporary DATA_DIR), so its memory is measured alone, without this load generator or the site
 * in it. The site is test/support/crawl-site.ts on loopback (no Crawl-delay, every answer after
 * BENCH_CRAWL_LATENCY_MS): a home page over a tree of pages, plus its traps (a redirect loop, a
 * page over the 10 MB cap, private links, robots.txt and gzip sitemaps). The crawl is
 * `POST /v1/crawl {limit, max_depth}` in the default format (Markdown, converted in the server's
 * conversion processes). Printed:
 *
 *   pages/s       delivered pages over the time from the POST to the final status
 *   server RSS    the server process's resident set: peak since start (VmHWM) and the largest
 *                 reading of VmRSS every 100 ms; also the largest sum of the server and its
 *                 child processes (the conversion processes), read at the same moments
 *   GET /me       one every 50 ms while the crawl runs (each on its own, not waiting for the
 *                 previous one): p50, p99 and max latency. Goal: p99 < 50 ms.
 *
 * The user and its credits are created through the admin socket, as an operator would.
 * JOB_CONCURRENCY, JOB_HOST_CONCURRENCY and the other server settings reach the server from the
 * environment.
 *
 * Usage: node bench/crawl.ts
 * Environment:
 *   BENCH_CRAWL_PAGES        tree pages of the site, and the crawl's limit (default 1000)
 *   BENCH_CRAWL_LATENCY_MS   delay of every answer of the site (default 20)
 *   BENCH_CRAWL_DEPTH        the crawl's max_depth (default 5)
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { startCrawlSite, FINAL_JOB_STATUSES, readJob, type JobAnswer } from '../test/support/crawl-site.ts';
import { admin, spawnServer } from '../test/support/processes.ts';
import { percentile, positive } from './support.ts';

const pages = positive('BENCH_CRAWL_PAGES', 1000);
const latencyMs = positive('BENCH_CRAWL_LATENCY_MS', 20);
const maxDepth = positive('BENCH_CRAWL_DEPTH', 5);
const ME_EVERY_MS = 50;
const RSS_EVERY_MS = 100;
const ME_GOAL_P99_MS = 50;

const mb = (kb: number): string => `${(kb / 1024).toFixed(1)} MB`;
const ms = (value: number): string => `${value.toFixed(1)} ms`;

/** A field of /proc/<pid>/status in kB, or 0 when the process is gone. */
function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    return Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Resident memory (kB) of the process and its descendants. */
function treeRssKb(root: number): number {
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const ppid = Number(/^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${name}/status`, 'utf8'))?.[1]);
      parents.set(Number(name), ppid);
    } catch {
      // the process ended while being read
    }
  }
  const inTree = (pid: number): boolean => {
    for (let p: number | undefined = pid, hops = 0; p !== undefined && p > 1 && hops < 64; p = parents.get(p), hops++) if (p === root) return true;
    return false;
  };
  let kb = 0;
  for (const pid of parents.keys()) if (inTree(pid)) kb += statusKb(pid, 'VmRSS');
  return kb;
}

const site = await startCrawlSite({ pages, latencyMs, crawlDelay: 0 });
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-bench-crawl-'));
const server = await spawnServer({ DATA_DIR: dataDir, OUTBOUND_ALLOW_HOSTS: 'localhost' }, { startTimeoutMs: 120_000 });
const pid = server.child.pid!;
try {
  const user = await admin(dataDir, 'users', 'create', '--name', 'Crawl bench', '--email', 'crawl-bench@example.com');
  await admin(dataDir, 'credits', 'grant', '--user', String(user.id), '--product', 'scraping', '--amount', String(pages + 100));
  const headers = { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' };

  console.log(
    `crawl bench: ${pages} pages, ${latencyMs} ms per answer, max_depth ${maxDepth}; server process ${pid}; ` +
      `${os.availableParallelism()} cores, load average ${os.loadavg().map((load) => load.toFixed(2)).join(' ')}, node ${process.version}`,
  );

  // Warm the server's /me path before measuring it.
  for (let i = 0; i < 20; i++) await (await fetch(`${server.url}/me`, { headers })).arrayBuffer();

  const meLatencies: number[] = [];
  let meFailures = 0;
  const meInFlight = new Set<Promise<void>>();
  const askMe = () => {
    const started = performance.now();
    const request = fetch(`${server.url}/me`, { headers })
      .then(async (response) => {
        await response.arrayBuffer();
        if (response.status === 200) meLatencies.push(performance.now() - started);
        else meFailures++;
      })
      .catch(() => void meFailures++)
      .finally(() => meInFlight.delete(request));
    meInFlight.add(request);
  };

  let peakRssKb = statusKb(pid, 'VmRSS');
  let peakTreeKb = treeRssKb(pid);
  const sampleMemory = () => {
    peakRssKb = Math.max(peakRssKb, statusKb(pid, 'VmRSS'));
    peakTreeKb = Math.max(peakTreeKb, treeRssKb(pid));
  };

  const started = performance.now();
  const created = await fetch(`${server.url}/v1/crawl`, { method: 'POST', headers, body: JSON.stringify({ url: site.url, limit: pages, max_depth: maxDepth }) });
  const body = (await created.json()) as { id: string };
  if (created.status !== 201) throw new Error(`POST /v1/crawl answered ${created.status}: ${JSON.stringify(body)}`);
  const meTimer = setInterval(askMe, ME_EVERY_MS);
  const rssTimer = setInterval(sampleMemory, RSS_EVERY_MS);
  let job: JobAnswer;
  try {
    for (;;) {
      job = await readJob(server.url, 'crawl', body.id, user.token);
      if ((FINAL_JOB_STATUSES as readonly string[]).includes(job.status)) break;
      await sleep(500);
    }
  } finally {
    clearInterval(meTimer);
    clearInterval(rssTimer);
  }
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(meInFlight);
  sampleMemory();
  await site.flush();

  console.log(`\ncrawl ${job.status}: ${job.completed} pages in ${seconds.toFixed(1)} s = ${(job.completed / seconds).toFixed(1)} pages/s; ${job.credits_used} credits; ${site.log.length} requests reached the site`);
  console.log('server memory');
  console.log(`  peak RSS since start (VmHWM)            ${mb(statusKb(pid, 'VmHWM'))}`);
  console.log(`  largest RSS read during the crawl       ${mb(peakRssKb)}`);
  console.log(`  largest RSS with its child processes    ${mb(peakTreeKb)}`);
  if (meLatencies.length > 0) {
    const p99 = percentile(meLatencies, 99);
    console.log(`GET /me every ${ME_EVERY_MS} ms during the crawl: ${meLatencies.length} answers, ${meFailures} failures`);
    console.log(`  p50 ${ms(percentile(meLatencies, 50))}  p99 ${ms(p99)}  max ${ms(Math.max(...meLatencies))}   goal p99 < ${ME_GOAL_P99_MS} ms: ${p99 < ME_GOAL_P99_MS ? 'met' : 'not met'}`);
  } else {
    console.log(`GET /me: no answer during the crawl (${meFailures} failures)`);
  }
} finally {
  await server.stop();
  await site.close();
  rmSync(dataDir, { recursive: true, force: true });
}
