/**
 * POST /v1/pdf end to end against `pdftotext`, in one process tree: the real server in a child
 * process (embedded PGlite), the document served by a fake upstream on loopback, the client here.
 * Each request downloads the document, counts and holds its pages, extracts the text on the PDF
 * threads, captures the credits and writes the history row. `pdftotext` reads the same file from
 * disk, one process per document, the same number in flight.
 *
 * Rows are interleaved round by round, so a noisy machine slows each about equally; compare the
 * ratio to `pdftotext` more than the pages per second. Pages per CPU-second are steadier still on a
 * shared machine: the server's CPU is its process's (PDF threads included), `pdftotext`'s that of
 * its processes (read from /proc, so Linux only). `BENCH_PDF_ROUTE_BEFORE` adds a second
 * server started from another checkout of the project (e.g. the code before a change), measured
 * in the same rounds.
 *
 * Usage: node bench/pdf-route.ts
 * Environment:
 *   BENCH_PDF_ROUTE_REQUESTS   documents per row and round (default 24)
 *   BENCH_PDF_ROUTE_INFLIGHT   documents in flight (default 2)
 *   BENCH_PDF_ROUTE_PAGES      pages of the generated document (default 25)
 *   BENCH_PDF_ROUTE_ROUNDS     rounds (default 3)
 *   BENCH_PDF_ROUTE_BEFORE     root of another checkout to measure beside this one (optional)
 *   BENCH_CPU_PROF             folder for the servers' CPU profiles (optional)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { percentile, positive } from './support.ts';

const SELF = fileURLToPath(import.meta.url);
const THIS_ROOT = path.resolve(path.dirname(SELF), '..');

if (process.argv[2] === '--serve') await serve(process.argv[3]);
else await main();

/** Child mode: starts the service of the checkout at `root`, prints its URL and a funded token. */
async function serve(root: string): Promise<void> {
  const { startTestService } = (await import(pathToFileURL(path.join(root, 'test/support/service.ts')).href)) as typeof import('../test/support/service.ts');
  const service = await startTestService();
  const user = await service.user({ extraction: 100_000_000 });
  console.log(JSON.stringify({ url: service.url, token: user.token }));
  process.stdin.resume();
  process.stdin.on('end', () => void service.close().then(() => process.exit(0)));
}

interface Server {
  label: string;
  child: ChildProcess;
  url: string;
  token: string;
}

async function startServer(label: string, root: string, profileDir: string | undefined): Promise<Server> {
  // One folder per server: Node names each thread's profile itself (the PDF threads write their own).
  const flags = profileDir ? ['--cpu-prof', '--cpu-prof-dir', path.join(profileDir, label.replace(/\W+/g, '-'))] : [];
  const child = spawn(process.execPath, [...flags, SELF, '--serve', root], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${label} server exited (${code}) before it listened`)));
  });
  const { url, token } = JSON.parse(line) as { url: string; token: string };
  return { label, child, url, token };
}

async function stopServer(server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.stdin!.end();
  await exited;
}

/**
 * CPU seconds (user + system) from /proc/<pid>/stat: the process's own, all threads, and that of
 * its children it has reaped (each `pdftotext`). Undefined where there is no /proc. Linux counts
 * in ticks of 1/100 s.
 */
function cpuSeconds(pid: number): { own: number; reapedChildren: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (in parentheses) may hold spaces: fields are counted after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
    return { own: (fields[11] + fields[12]) / 100, reapedChildren: (fields[13] + fields[14]) / 100 };
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds of a process's threads, grouped by kind from the thread's name: Node's main thread
 * (`MainThread`: HTTP, database, outbound fetch), its worker threads (`WorkerThread`: here the PDF
 * engine's pool), and the rest (V8's compiler and GC helpers, libuv's pool). Shows where a
 * document's CPU goes; undefined where there is no /proc.
 */
function threadCpuSeconds(pid: number): Map<string, number> | undefined {
  try {
    const byKind = new Map<string, number>();
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      let stat: string;
      try {
        stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
      } catch {
        continue; // the thread ended between the listing and the read
      }
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const kind = name === 'MainThread' ? 'main thread' : name === 'WorkerThread' ? 'PDF threads' : 'other threads';
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
      byKind.set(kind, (byKind.get(kind) ?? 0) + (fields[11] + fields[12]) / 100);
    }
    return byKind;
  } catch {
    return undefined;
  }
}

/** Runs `count` jobs with `width` in flight; answers the seconds taken and each job's milliseconds. */
async function timed(count: number, width: number, job: () => Promise<void>): Promise<{ seconds: number; latencies: number[] }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next++ < count) {
        const t = performance.now();
        await job();
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, latencies };
}

function pdftotext(file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('pdftotext', ['-enc', 'UTF-8', file, '-'], { stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.resume();
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`pdftotext exited ${code}`))));
  });
}

/** Lines of prose-like text, so each page holds about as many characters as a report's page. */
function pageLines(page: number, pages: number): string[] {
  const words = ['revenue', 'quarterly', 'market', 'analysis', 'growth', 'customer', 'segment', 'forecast', 'margin', 'operating', 'the', 'and', 'of', 'in', 'results'];
  return Array.from({ length: 38 }, (_, line) =>
    line === 0 ? `Page ${page} of ${pages}` : Array.from({ length: 13 }, (_, w) => words[(page * 7 + line * 13 + w * 3) % words.length]).join(' '),
  );
}

async function main(): Promise<void> {
  const requests = positive('BENCH_PDF_ROUTE_REQUESTS', 24);
  const inFlight = positive('BENCH_PDF_ROUTE_INFLIGHT', 2);
  const pages = positive('BENCH_PDF_ROUTE_PAGES', 25);
  const rounds = positive('BENCH_PDF_ROUTE_ROUNDS', 3);
  const before = process.env.BENCH_PDF_ROUTE_BEFORE;
  const profileDir = process.env.BENCH_CPU_PROF || undefined;

  const { startFakeUpstream } = await import('../test/support/fake-upstream.ts');
  const { buildPdf } = await import('../test/support/pdf-fixtures.ts');
  const pdf = await buildPdf({ pages: Array.from({ length: pages }, (_, i) => pageLines(i + 1, pages)) });
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'pdf-route-bench-'));
  const file = path.join(scratch, 'doc.pdf');
  writeFileSync(file, pdf);
  const hasPdftotext = await pdftotext(file).then(
    () => true,
    () => false,
  );

  const upstream = await startFakeUpstream();
  upstream.handle(() => ({ headers: { 'content-type': 'application/pdf' }, body: pdf }));
  const servers: Server[] = [];
  try {
    if (before) servers.push(await startServer('before', path.resolve(before), profileDir));
    servers.push(await startServer(before ? 'after' : 'server', THIS_ROOT, profileDir));
    const request = (server: Server) => async () => {
      const response = await fetch(`${server.url}/v1/pdf`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ url: `${upstream.url}/doc.pdf` }),
      });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`${server.label}: status ${response.status}: ${text.slice(0, 200)}`);
    };
    // Warm-up: the PDF threads' engines, the database's plans, V8's optimised code.
    for (const server of servers) await timed(20, inFlight, request(server));

    type Row = {
      name: string;
      job: () => Promise<void>;
      /** CPU seconds so far of what the row measures: its server process, or the pdftotext processes. */
      cpu: () => number | undefined;
      seconds: number;
      cpuSeconds: number | undefined;
      /** A server's CPU seconds by kind of thread (threadCpuSeconds), summed over the measured runs. */
      threads?: { read: () => Map<string, number> | undefined; seconds: Map<string, number> };
      latencies: number[];
      sequential: number[];
    };
    const rows: Row[] = servers.map((server) => ({
      name: `POST /v1/pdf (${server.label})`,
      job: request(server),
      cpu: () => cpuSeconds(server.child.pid!)?.own,
      threads: { read: () => threadCpuSeconds(server.child.pid!), seconds: new Map() },
      seconds: 0,
      cpuSeconds: 0,
      latencies: [],
      sequential: [],
    }));
    if (hasPdftotext) {
      rows.push({ name: 'pdftotext', job: () => pdftotext(file), cpu: () => cpuSeconds(process.pid)?.reapedChildren, seconds: 0, cpuSeconds: 0, latencies: [], sequential: [] });
    }
    else console.log('(pdftotext is not installed: its row is left out)');

    for (let round = 0; round < rounds; round++) {
      // Rotated each round, so no row always runs first.
      const order = rows.map((_, i) => rows[(i + round) % rows.length]);
      for (const row of order) {
        const cpuBefore = row.cpu();
        const threadsBefore = row.threads?.read();
        const run = await timed(requests, inFlight, row.job);
        const cpuAfter = row.cpu();
        const threadsAfter = row.threads?.read();
        for (const [kind, after] of threadsAfter ?? []) row.threads!.seconds.set(kind, (row.threads!.seconds.get(kind) ?? 0) + after - (threadsBefore?.get(kind) ?? 0));
        row.cpuSeconds = cpuBefore === undefined || cpuAfter === undefined || row.cpuSeconds === undefined ? undefined : row.cpuSeconds + cpuAfter - cpuBefore;
        row.seconds += run.seconds;
        row.latencies.push(...run.latencies);
        row.sequential.push(...(await timed(4, 1, row.job)).latencies);
      }
    }

    const reference = rows.find((row) => row.name === 'pdftotext');
    const pagesPerSecond = (row: Row) => (rounds * requests * pages) / row.seconds;
    const pagesPerCpuSecond = (row: Row) => (row.cpuSeconds ? (rounds * requests * pages) / row.cpuSeconds : undefined);
    console.log(
      `${pages}-page PDF (${(pdf.byteLength / 1024).toFixed(1)} KB), ${requests} documents × ${rounds} rounds, ${inFlight} in flight, ` +
        `${os.availableParallelism()} cores, load ${os.loadavg()[0].toFixed(2)}`,
    );
    console.log(
      `${'row'.padEnd(26)} ${'pages/s'.padStart(8)} ${'vs pdftotext'.padStart(12)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'alone ms'.padStart(9)} ` +
        `${'pages/CPU-s'.padStart(11)} ${'vs pdftotext'.padStart(12)}`,
    );
    for (const row of rows) {
      const ratio = reference ? `${(pagesPerSecond(row) / pagesPerSecond(reference)).toFixed(2)}×` : '-';
      const perCpu = pagesPerCpuSecond(row);
      const referencePerCpu = reference && pagesPerCpuSecond(reference);
      const cpuRatio = perCpu && referencePerCpu ? `${(perCpu / referencePerCpu).toFixed(2)}×` : '-';
      console.log(
        `${row.name.padEnd(26)} ${pagesPerSecond(row).toFixed(0).padStart(8)} ${ratio.padStart(12)} ` +
          `${percentile(row.latencies, 50).toFixed(1).padStart(7)} ${percentile(row.latencies, 95).toFixed(1).padStart(7)} ${percentile(row.sequential, 50).toFixed(1).padStart(9)} ` +
          `${(perCpu ? perCpu.toFixed(0) : '-').padStart(11)} ${cpuRatio.padStart(12)}`,
      );
    }
    // Where a document's CPU goes: the engine's threads bound the ratio once the rest is small.
    const documents = rounds * requests;
    const perDocument = (seconds: number) => `${((seconds * 1000) / documents).toFixed(1)} ms`;
    for (const row of rows) {
      if (row.threads?.seconds.size) {
        const kinds = ['main thread', 'PDF threads', 'other threads'].map((kind) => `${kind} ${perDocument(row.threads!.seconds.get(kind) ?? 0)}`);
        console.log(`CPU per document, ${row.name}: ${kinds.join(', ')}`);
      } else if (row.cpuSeconds) console.log(`CPU per document, ${row.name}: ${perDocument(row.cpuSeconds)}`);
    }
  } finally {
    for (const server of servers) await stopServer(server);
    await upstream.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
