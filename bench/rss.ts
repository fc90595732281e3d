/**
 * Memory of the server process under a steady mix of extraction requests: its resident set size
 * (VmRSS from /proc/<pid>/status) after a warm-up, after 100 requests and after 1,000, and the
 * growth between 100 and 1,000 (target ≤ 20 %: memory that keeps growing with the request count
 * is a leak, not a working set). Also printed: RSS read on the fly at every tenth of the run,
 * to show the shape of the growth, and the peak since the process started.
 *
 * The server runs as a child process (test/support/serve-test-endpoints.ts: the full endpoint
 * table, embedded PGlite in a temporary DATA_DIR, default PDF and OCR pool sizes), so its RSS is
 * measured alone, without this load generator or the file server in it; PDF threads and OCR
 * workers are threads of that process and count in its RSS. The user and its extraction credits
 * are created through the admin socket, as an operator would. NODE_OPTIONS reaches the server,
 * e.g. --max-old-space-size=128 to see how much of the growth is garbage not yet collected.
 *
 * The documents are generated in code and served from loopback. Every cycle of 20 requests:
 *   7  POST /v1/pdf    one-page PDF                      200
 *   7  POST /v1/pdf    three-page PDF                    200
 *   2  POST /v1/image  small PNG with two lines of text  200  (OCR is the slow part: 1 in 10)
 *   2  POST /v1/pdf    corrupt PDF                       400
 *   2  POST /v1/image  corrupt image                     400
 * sent BENCH_CONCURRENCY at a time (default 4). The warm-up is one cycle (it also loads the OCR
 * model), not counted in the 100 / 1,000. Each RSS reading is taken once the requests before it
 * have all been answered and the server has been idle for a second.
 *
 * Usage: node bench/rss.ts
 * Environment:
 *   BENCH_REQUESTS      measured requests in total (default 1000; the first reading stays at 100,
 *                       or at the total when smaller)
 *   BENCH_CONCURRENCY   requests in flight (default 4)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { startFakeUpstream } from '../test/support/fake-upstream.ts';
import { corruptBytes, renderTextImage } from '../test/support/image-fixtures.ts';
import { corruptPdfBytes, multiPagePdf, numberedPagesPdf } from '../test/support/pdf-fixtures.ts';
import { admin, spawnServer } from '../test/support/processes.ts';

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer (got "${raw}").`);
  return value;
}

const total = positive('BENCH_REQUESTS', 1000);
const concurrency = positive('BENCH_CONCURRENCY', 4);
const firstReading = Math.min(100, total);
/** Idle time before each reading, so work finishing after the last answer is done too. */
const SETTLE_MS = 1000;

interface RequestKind {
  label: string;
  route: '/v1/pdf' | '/v1/image';
  file: string;
  expectedStatus: number;
}

const KINDS = {
  pdf1: { label: 'one-page PDF', route: '/v1/pdf', file: '/one.pdf', expectedStatus: 200 },
  pdf3: { label: 'three-page PDF', route: '/v1/pdf', file: '/report.pdf', expectedStatus: 200 },
  png: { label: 'PNG with text (OCR)', route: '/v1/image', file: '/text.png', expectedStatus: 200 },
  badPdf: { label: 'corrupt PDF', route: '/v1/pdf', file: '/corrupt.pdf', expectedStatus: 400 },
  badImage: { label: 'corrupt image', route: '/v1/image', file: '/broken.png', expectedStatus: 400 },
} satisfies Record<string, RequestKind>;

/** One cycle of the mix, interleaved so every stretch of the run sees every kind. */
const CYCLE: RequestKind[] = [
  KINDS.pdf1, KINDS.pdf3, KINDS.pdf1, KINDS.badPdf, KINDS.pdf3, KINDS.png, KINDS.pdf1, KINDS.pdf3, KINDS.badImage, KINDS.pdf1,
  KINDS.pdf3, KINDS.pdf1, KINDS.badPdf, KINDS.pdf3, KINDS.png, KINDS.pdf1, KINDS.pdf3, KINDS.badImage, KINDS.pdf1, KINDS.pdf3,
];

async function servedFiles(): Promise<Map<string, { body: Uint8Array; type: string }>> {
  return new Map([
    ['/one.pdf', { body: await numberedPagesPdf(1), type: 'application/pdf' }],
    ['/report.pdf', { body: await multiPagePdf(), type: 'application/pdf' }],
    ['/text.png', { body: await renderTextImage(['Invoice 2041', 'Total due 318 EUR'], { fontSize: 20 }), type: 'image/png' }],
    ['/corrupt.pdf', { body: corruptPdfBytes(), type: 'application/pdf' }],
    ['/broken.png', { body: corruptBytes(), type: 'image/png' }],
  ]);
}

function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) * 1024;
}

const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MB`;

interface Tally {
  /** Answers per kind label and status, e.g. "one-page PDF 200". */
  answers: Map<string, number>;
  unexpected: number;
}

async function main(): Promise<void> {
  const files = await servedFiles();
  const fileServer = await startFakeUpstream();
  fileServer.handle((hit) => {
    const file = files.get(hit.path);
    return file ? { status: 200, headers: { 'content-type': file.type }, body: file.body } : { status: 404, body: 'missing' };
  });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-rss-bench-'));
  // Google left out of the chain, as in the integration tests: no Chromium probe at start (the
  // browser is a process of its own and never part of this RSS; these requests never use it).
  const server = await spawnServer({ DATA_DIR: dataDir, OUTBOUND_ALLOW_HOSTS: '127.0.0.1', SEARCH_ENGINES: 'bing,duckduckgo,brave,mojeek,startpage' });
  const pid = server.child.pid!;
  try {
    // Every request costs at most 3 credits (a three-page PDF, an image).
    const user = await admin(dataDir, 'users', 'create', '--name', 'RSS bench', '--email', 'rss-bench@example.com');
    await admin(dataDir, 'credits', 'grant', '--user', String(user.id), '--product', 'extraction', '--amount', String(3 * (total + CYCLE.length)));

    const tally: Tally = { answers: new Map(), unexpected: 0 };
    const send = async (kind: RequestKind): Promise<void> => {
      const response = await fetch(server.url + kind.route, {
        method: 'POST',
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: fileServer.url + kind.file }),
      });
      await response.arrayBuffer();
      const key = `${kind.label} ${response.status}`;
      tally.answers.set(key, (tally.answers.get(key) ?? 0) + 1);
      if (response.status !== kind.expectedStatus) tally.unexpected += 1;
    };
    /** RSS read on the fly each time another tenth of the measured requests has been answered. */
    const trend: Array<[number, number]> = [];
    const trendStep = Math.max(1, Math.round(total / 10));
    let measuredAnswers = 0;
    /** Sends requests number from .. to-1 of the endless mix, `concurrency` at a time. */
    const run = async (from: number, to: number, measured = true): Promise<number> => {
      let next = from;
      const started = performance.now();
      const lane = async (): Promise<void> => {
        while (next < to) {
          await send(CYCLE[next++ % CYCLE.length]);
          if (measured && ++measuredAnswers % trendStep === 0) trend.push([measuredAnswers, rssBytes(pid)]);
        }
      };
      await Promise.all(Array.from({ length: concurrency }, lane));
      return (performance.now() - started) / 1000;
    };
    const reading = async (): Promise<number> => {
      await sleep(SETTLE_MS);
      return rssBytes(pid);
    };

    console.log(
      `RSS bench: server process ${pid}, ${total} measured requests after a ${CYCLE.length}-request warm-up, ${concurrency} in flight, ` +
        `${os.availableParallelism()} cores, load average ${os.loadavg().map((load) => load.toFixed(2)).join(' ')}`,
    );
    const counts = new Map<string, number>();
    for (const kind of CYCLE) counts.set(kind.label, (counts.get(kind.label) ?? 0) + 1);
    console.log(`mix per ${CYCLE.length} requests: ${[...counts].map(([label, n]) => `${n} ${label}`).join(', ')}`);

    const idle = rssBytes(pid);
    await run(0, CYCLE.length, false);
    const warmed = await reading();
    const firstSeconds = await run(0, firstReading);
    const atFirst = await reading();
    const restSeconds = await run(firstReading, total);
    const atEnd = await reading();
    const peak = Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

    console.log('\nserver RSS');
    console.log(`  idle, before any request       ${mb(idle)}`);
    console.log(`  after warm-up                  ${mb(warmed)}`);
    console.log(`  after ${String(firstReading).padEnd(25)}${mb(atFirst)}   (${firstSeconds.toFixed(1)} s)`);
    if (total > firstReading) console.log(`  after ${String(total).padEnd(25)}${mb(atEnd)}   (+${total - firstReading} in ${restSeconds.toFixed(1)} s)`);
    console.log(`  peak since start (VmHWM)       ${mb(peak)}`);
    console.log(`  growth ${firstReading} → ${total}${' '.repeat(Math.max(1, 22 - `${firstReading} → ${total}`.length))}${(((atEnd - atFirst) / atFirst) * 100).toFixed(1)} %   (target ≤ 20 %)`);

    console.log(`\nRSS during the run, read without pausing, every ${trendStep} answers (MB)`);
    console.log(`  ${trend.map(([answers, bytes]) => `${answers}: ${(bytes / 2 ** 20).toFixed(0)}`).join('  ')}`);

    console.log('\nanswers (warm-up included)');
    for (const [key, n] of [...tally.answers].sort()) console.log(`  ${key.padEnd(30)}${String(n).padStart(6)}`);
    console.log(`  unexpected statuses           ${String(tally.unexpected).padStart(6)}`);
  } finally {
    await server.stop();
    await fileServer.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
