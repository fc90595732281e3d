/**
 * /v1/web figures, against a loopback site:
 *
 *   plain      p50/p99 of POST /v1/web (plain mode, through the real server) vs a direct fetch()
 *              of the same ~30 KB page: the difference is what the service adds (auth,
 *              validation, credit hold and capture, history, the outbound client's checks,
 *              charset decoding, serialising).
 *   browser    pages per minute rendered by the shared headless browser (the web scraper's
 *              browser mode) with 2 and 4 requests in flight.
 *   leak       the browser pool's memory (proportional set size of its Chromium processes) after
 *              render 100 and after the last render (default 500); the growth should stay ≤ 20 %.
 *   convert    a 1 MB article page turned into Markdown and into text (Readability, then the
 *              Markdown writer): the functions called on the event loop, the same in a conversion
 *              process (the service's way), and POST /v1/web through the real server
 *              (format=markdown, and raw with extract_rules and selectors, which run in the
 *              conversion process too); with the longest event-loop delay seen meanwhile
 *              (perf_hooks.monitorEventLoopDelay, max),
 *              which is how long every other request of the server would have waited. Also how
 *              long a conversion process takes to start (to its first small page) and its RSS,
 *              idle and after the large pages.
 *   before/after p50 and p99 of a 1 MB page converted (markdown, text), and the p50 of its CPU
 *              time, by this tree's converter and by the converter of an earlier commit
 *              (BENCH_WEB_BASELINE_REV, default HEAD: the last commit against the work tree),
 *              interleaved in one process. The earlier commit's src/ is unpacked with
 *              `git archive` into a temporary folder (its packages are this tree's node_modules),
 *              never kept in the tree.
 *
 * Usage: node bench/web.ts
 * Environment:
 *   BENCH_WEB_REQUESTS       plain requests measured per case (default 100)
 *   BENCH_WEB_RENDERS        renders per concurrency level for pages/minute (default 40)
 *   BENCH_WEB_LEAK_RENDERS   renders for the leak check (default 500; 0 skips it; the first reading is at 100)
 *   BENCH_WEB_SKIP_BROWSER   1 to skip the browser parts
 *   BENCH_WEB_CONVERSIONS    conversions measured per case (default 5, after one warm-up)
 *   BENCH_WEB_COMPARE_RUNS   conversions per converter and format in before/after (default 20)
 *   BENCH_WEB_BASELINE_REV   the commit whose converter is "before" (default HEAD)
 *   BENCH_WEB_ONLY_COMPARE   1 to run before/after alone
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { startTestService } from '../test/support/service.ts';
import { startLoopbackSite } from '../test/support/web-site.ts';
import { articlePage, largeArticlePage } from '../test/support/web-fixtures.ts';
import { browserPoolOptionsFromEnv, browserStatus, createBrowserPool } from '../src/browser/index.ts';
import { createOutboundClient } from '../src/outbound/client.ts';
import { convertPage, createDomainBlocklist, createPageConverter, createWebScraper } from '../src/adapters/web/index.ts';
import { createUpstreamRuntime } from '../src/adapters/kit/runtime.ts';

function count(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a whole number (got "${raw}").`);
  return value;
}

const plainRequests = count('BENCH_WEB_REQUESTS', 100);
const renders = count('BENCH_WEB_RENDERS', 40);
const leakRenders = count('BENCH_WEB_LEAK_RENDERS', 500);
const skipBrowser = process.env.BENCH_WEB_SKIP_BROWSER === '1';
const conversions = Math.max(1, count('BENCH_WEB_CONVERSIONS', 5));

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
const ms = (value: number) => `${value.toFixed(1)} ms`;

/** Summed proportional set size (MB) of the processes whose command line names a pool profile. */
function poolPssMb(): number {
  let kb = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('gleaner-chromium-')) continue;
      const pss = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      if (pss) kb += Number(pss[1]);
    } catch {
      // the process ended while being read
    }
  }
  return kb / 1024;
}

// ---- before/after ------------------------------------------------------------------------------
type Convert = (html: string, pageUrl: string, options: { format: 'markdown' | 'text'; links: boolean }) => unknown;

/** The node_modules folder this tree's packages are loaded from (the nearest one up, as Node looks). */
function nodeModules(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules');
    if (existsSync(candidate)) return candidate;
    if (path.dirname(dir) === dir) throw new Error('no node_modules folder above bench/');
  }
}

/** The converter of an earlier commit: its src/ unpacked into a temporary folder that loads this tree's packages (linkedom copied). */
async function baselineConverter(rev: string): Promise<Convert> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'web-bench-'));
  try {
    execFileSync('sh', ['-c', `git archive --format=tar "$1" src | tar -x -C "$2"`, 'sh', rev, dir], { stdio: ['ignore', 'ignore', 'inherit'] });
    // Every package is this tree's, except linkedom: the converter patches its classes when it
    // loads (src/adapters/web/extract/dom.ts), so each converter needs its own copy.
    const modules = nodeModules();
    mkdirSync(path.join(dir, 'node_modules'));
    for (const name of readdirSync(modules)) {
      if (name !== 'linkedom') symlinkSync(path.join(modules, name), path.join(dir, 'node_modules', name));
    }
    cpSync(path.join(modules, 'linkedom'), path.join(dir, 'node_modules', 'linkedom'), { recursive: true, dereference: true });
    // Loaded once: the modules stay in memory after their files are gone.
    return ((await import(path.join(dir, 'src/adapters/web/formats.ts'))) as { convertPage: Convert }).convertPage;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

{
  const rev = process.env.BENCH_WEB_BASELINE_REV || 'HEAD';
  const runs = Math.max(2, count('BENCH_WEB_COMPARE_RUNS', 20));
  const before = await baselineConverter(rev);
  const big = largeArticlePage(1024 * 1024);
  const pageUrl = 'https://site.example/big';
  console.log(`before/after: ${(big.length / 1024 / 1024).toFixed(2)} MB article page, ${runs} runs each after a warm-up, interleaved, on this thread`);
  for (const format of ['markdown', 'text'] as const) {
    const samples = { before: [] as number[], after: [] as number[] };
    // CPU time beside wall time: on a shared machine the wall time also counts other work's turns.
    const cpu = { before: [] as number[], after: [] as number[] };
    before(big, pageUrl, { format, links: false });
    convertPage(big, pageUrl, { format, links: false });
    for (let i = 0; i < runs; i += 1) {
      for (const [name, convert] of [['before', before], ['after', convertPage as Convert]] as const) {
        const started = performance.now();
        const cpuStarted = process.cpuUsage();
        convert(big, pageUrl, { format, links: false });
        samples[name].push(performance.now() - started);
        const used = process.cpuUsage(cpuStarted);
        cpu[name].push((used.user + used.system) / 1000);
      }
    }
    for (const name of ['before', 'after'] as const) {
      const label = `  ${format.padEnd(8)} ${name === 'before' ? `before (${rev})` : 'after (this tree)'}`.padEnd(36);
      console.log(`${label}p50 ${ms(percentile(samples[name], 50))}  p99 ${ms(percentile(samples[name], 99))}  CPU p50 ${ms(percentile(cpu[name], 50))}`);
    }
  }
  console.log(`  load average during the run: ${os.loadavg().map((value) => value.toFixed(1)).join(' ')} on ${os.cpus().length} cores`);
  if (process.env.BENCH_WEB_ONLY_COMPARE === '1') process.exit(0);
}

const site = await startLoopbackSite();
const page = articlePage().replace('</article>', `${'<p>Filler paragraph to give the page a realistic weight of text. '.repeat(400)}</p></article>`);
site.route('/page', () => ({ headers: { 'content-type': 'text/html; charset=utf-8' }, body: page }));
site.route('/js', () => ({
  headers: { 'content-type': 'text/html; charset=utf-8' },
  body: '<html><body><div id="app"></div><script>document.getElementById("app").innerHTML = "<h1>Rendered</h1>" + "<p>text</p>".repeat(200);</script></body></html>',
}));

console.log(`machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? 'unknown cpu'}, node ${process.version}`);

// ---- plain ------------------------------------------------------------------------------------
{
  const service = await startTestService({ OUTBOUND_ALLOW_HOSTS: '127.0.0.1' });
  const user = await service.user({ scraping: plainRequests * 2 + 100 });
  const url = `${site.url()}/page`;
  const direct = async () => void (await (await fetch(url)).text());
  const viaService = async () => {
    const r = await service.call('POST', '/v1/web', { token: user.token, body: { url } });
    if (r.status !== 200) throw new Error(`POST /v1/web answered ${r.status}: ${r.text}`);
  };
  for (let i = 0; i < 5; i += 1) {
    await direct();
    await viaService();
  }
  const samples: [number[], number[]] = [[], []];
  for (let i = 0; i < plainRequests; i += 1) {
    for (const [index, once] of [direct, viaService].entries()) {
      const started = performance.now();
      await once();
      samples[index].push(performance.now() - started);
    }
  }
  const [d, s] = samples;
  console.log(`plain (${plainRequests} requests each, ${Math.round(page.length / 1024)} KB page):`);
  console.log(`  direct fetch     p50 ${ms(percentile(d, 50))}  p99 ${ms(percentile(d, 99))}`);
  console.log(`  POST /v1/web     p50 ${ms(percentile(s, 50))}  p99 ${ms(percentile(s, 99))}`);
  console.log(`  added           p50 ${ms(percentile(s, 50) - percentile(d, 50))}  p99 ${ms(percentile(s, 99) - percentile(d, 99))}`);
  await service.close();
}

// ---- convert ----------------------------------------------------------------------------------
/** Resident memory of this process's conversion processes (Linux /proc), in MB. */
function conversionRss(): string {
  const sizes: number[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      if (Number(/^PPid:\s+(\d+)/m.exec(status)?.[1]) !== process.pid) continue;
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('task-process-main')) continue;
      sizes.push(Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0) / 1024);
    } catch {
      // the process ended meanwhile
    }
  }
  return sizes.map((size) => `${size.toFixed(0)} MB`).join(', ') || 'no process found';
}

{
  const big = largeArticlePage(1024 * 1024);
  const pageUrl = 'https://site.example/big';
  /** Runs `once` after a warm-up run, `conversions` times: median and max time, and the longest event-loop delay meanwhile. */
  const measure = async (once: () => unknown) => {
    await once(); // the first run warms the JIT (and a thread's libraries)
    const times: number[] = [];
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    for (let i = 0; i < conversions; i += 1) {
      const started = performance.now();
      await once();
      times.push(performance.now() - started);
      // Let the delay monitor's timer run between two conversions.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    delay.disable();
    return `median ${ms(percentile(times, 50))}, max ${ms(Math.max(...times))}; event-loop delay max ${ms(delay.max / 1e6)}`;
  };
  console.log(`convert: ${(big.length / 1024 / 1024).toFixed(2)} MB article page (${conversions} runs after a warm-up)`);
  // The processes first: conversions on the event loop leave hundreds of MB of garbage on this
  // thread's heap, whose collection would then show up as delay in the rows after them.
  const starting = performance.now();
  const converter = createPageConverter({ processes: 1 });
  await converter.convert({ html: articlePage(), pageUrl, format: 'markdown', links: false });
  console.log(`  a conversion process starts and converts a small page in ${ms(performance.now() - starting)}; RSS ${conversionRss()}`);
  for (const format of ['markdown', 'text'] as const) {
    console.log(`  ${format.padEnd(8)} in a conversion process ${await measure(() => converter.convert({ html: big, pageUrl, format, links: false }))}`);
  }
  console.log(`  conversion process RSS after the large pages: ${conversionRss()}`);
  await converter.close();

  // The server's own event loop while POST /v1/web converts: what every other request would wait.
  const service = await startTestService({ OUTBOUND_ALLOW_HOSTS: '127.0.0.1', WEB_FORMAT_PROCESSES: '1' });
  const user = await service.user({ scraping: 2 * conversions + 10 });
  site.route('/big', () => ({ headers: { 'content-type': 'text/html; charset=utf-8' }, body: big }));
  const viaService = async () => {
    const r = await service.call('POST', '/v1/web', { token: user.token, body: { url: `${site.url()}/big`, format: 'markdown' } });
    if (r.status !== 200) throw new Error(`POST /v1/web answered ${r.status}: ${r.text}`);
  };
  console.log(`  POST /v1/web format=markdown           ${await measure(viaService)}`);
  // The rules and selectors are read in the conversion process too: the server's loop never parses the page.
  const withOptions = async () => {
    const body = { url: `${site.url()}/big`, extract_rules: { sections: { selector: 'h2', all: true } }, include_selectors: ['article'], exclude_selectors: ['ul'] };
    const r = await service.call('POST', '/v1/web', { token: user.token, body });
    if (r.status !== 200) throw new Error(`POST /v1/web answered ${r.status}: ${r.text}`);
  };
  console.log(`  POST /v1/web raw, extract_rules, selectors ${await measure(withOptions)}`);
  await service.close();

  // As the service did before the conversions left it: the same functions on the event loop.
  for (const format of ['markdown', 'text'] as const) {
    console.log(`  ${format.padEnd(8)} on the event loop      ${await measure(() => convertPage(big, pageUrl, { format, links: false }))}`);
  }
}

// ---- browser ----------------------------------------------------------------------------------
const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
// BROWSER_SANDBOX as the service reads it: as root the pool runs only with BROWSER_SANDBOX=off.
const { sandbox } = browserPoolOptionsFromEnv();
const status = skipBrowser ? undefined : await browserStatus(chromium, sandbox ?? 'auto');
if (status === undefined || !status.available) {
  console.log(status === undefined ? 'browser: skipped (BENCH_WEB_SKIP_BROWSER=1)' : `browser: skipped, ${status.reason}`);
} else {
  console.log(`browser: Chromium ${status.sandboxed ? 'in its sandbox' : `without its sandbox (${status.reason})`}`);
  const pool = createBrowserPool({ executablePath: chromium, navigationTimeoutMs: 60_000, maxPagesPerBrowser: 4, allowHosts: ['127.0.0.1'], idleTimeoutMs: 0, sandbox });
  const outbound = createOutboundClient({ allowHosts: ['127.0.0.1'], timeoutMs: 30_000, connectTimeoutMs: 5_000, headersTimeoutMs: 10_000 });
  const browser = async () => pool;
  const runtime = createUpstreamRuntime({ outbound, browser });
  const web = createWebScraper({ timeoutMs: 30_000, browserTimeoutMs: 60_000, proxyConfigured: false }, { runtime, browser, blocklist: createDomainBlocklist() });
  const renderOnce = async () => {
    const outcome = await web.scrape({ url: `${site.url()}/js`, method: 'GET', browser: true, format: 'raw', links: false }, { signal: new AbortController().signal });
    if (outcome.kind !== 'ok') throw new Error(`render failed: ${JSON.stringify(outcome)}`);
  };
  const runConcurrent = async (total: number, concurrency: number, onDone?: (done: number) => void) => {
    let next = 0;
    let done = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < total) {
          next += 1;
          await renderOnce();
          done += 1;
          onDone?.(done);
        }
      }),
    );
  };
  await runConcurrent(4, 2); // launch and warm
  for (const concurrency of [2, 4]) {
    const started = performance.now();
    await runConcurrent(renders, concurrency);
    const minutes = (performance.now() - started) / 60_000;
    console.log(`browser: ${concurrency} in flight → ${(renders / minutes).toFixed(0)} pages/minute (${renders} renders)`);
  }
  if (leakRenders >= 100) {
    let at100 = 0;
    await runConcurrent(leakRenders, 2, (done) => {
      if (done === 100) at100 = poolPssMb();
    });
    const atEnd = poolPssMb();
    const growth = ((atEnd - at100) / at100) * 100;
    console.log(`leak: pool PSS ${at100.toFixed(0)} MB after 100 renders, ${atEnd.toFixed(0)} MB after ${leakRenders} (${growth >= 0 ? '+' : ''}${growth.toFixed(1)} %)`);
  } else {
    console.log('leak: skipped (BENCH_WEB_LEAK_RENDERS below 100)');
  }
  await pool.close();
  await outbound.close();
}
await site.close();
