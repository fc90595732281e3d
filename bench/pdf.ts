/**
 * PDF text extraction throughput and memory:
 *   pool ×2 / pool ×8   pages per second through the worker pool with 2 and 8 documents in flight
 *   pdftotext ×2        poppler's pdftotext on the same files, two processes at a time (skipped
 *                       when pdftotext is not installed)
 *   CPU s, pages/CPU-s  CPU time the row used (this process's threads for the pool rows, the
 *                       child processes for pdftotext; Linux only) and pages per CPU-second. On a
 *                       shared machine pages/s follows the other jobs' load; pages/CPU-s much less.
 *   memory              process RSS (the pool threads live in this process) after 100 and after
 *                       1,000 extractions of the files the route accepts (≤ 30 pages)
 *   bombs               latency of a normal 3-page PDF alone, and while two flate bombs run
 *                       back to back (each ends at the engine's memory ceiling), with a pool of
 *                       the default size and with one thread more than the bombs take
 *
 * Files: every PDF in CORPUS_DIR/pdf that extracts (outcome ok), or generated documents when
 * CORPUS_DIR is not set. Throughput runs lift the page limit so long documents count in full, and
 * start after one untimed round through the pool (the engine warmed as a running server's is).
 *
 * Usage: node bench/pdf.ts
 * Environment:
 *   CORPUS_DIR             the recorded corpus (optional)
 *   BENCH_PDF_THREADS      pool threads (default: the number of cores, as pdftotext's 2-wide runs)
 *   BENCH_PDF_ROUNDS       passes over the file set per throughput row (default 3)
 *   BENCH_PDF_EXTRACTIONS  extractions in the memory run (default 1000; RSS also printed at 100)
 *   BENCH_PDF_ONLY         "bombs" runs only the bomb section
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createPdfExtractor } from '../src/extract/pdf/index.ts';
import type { PdfExtractor } from '../src/extract/pdf/index.ts';
import { corpusDir } from '../test/support/corpus.ts';
import { encryptedPdf, flateBombPdf, multiPagePdf, numberedPagesPdf } from '../test/support/pdf-fixtures.ts';

interface BenchFile {
  name: string;
  path: string;
  bytes: Uint8Array;
  pages: number;
}

const threads = Number(process.env.BENCH_PDF_THREADS || os.availableParallelism());
const rounds = Number(process.env.BENCH_PDF_ROUNDS || 3);
const extractions = Number(process.env.BENCH_PDF_EXTRACTIONS || 1000);
const ENOUGH = Number.MAX_SAFE_INTEGER;

/** Runs `jobs` with at most `width` in flight. */
async function inFlight<T>(width: number, jobs: Array<() => Promise<T>>): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  const lane = async () => {
    while (next < jobs.length) {
      const index = next++;
      results[index] = await jobs[index]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, jobs.length) }, lane));
  return results;
}

async function candidateFiles(scratch: string): Promise<Array<Omit<BenchFile, 'pages'>>> {
  const corpus = corpusDir('pdf');
  if (!corpus.skip) {
    return readdirSync(corpus.dir)
      .filter((name) => name.endsWith('.pdf'))
      .sort()
      .map((name) => {
        const filePath = path.join(corpus.dir, name);
        // A plain Uint8Array (not a Buffer), so that .slice() below copies.
        return { name, path: filePath, bytes: new Uint8Array(readFileSync(filePath)) };
      });
  }
  console.log(`(${corpus.skip}; using generated documents)`);
  const generated: Record<string, Uint8Array> = {
    'generated-3-pages.pdf': await multiPagePdf(),
    'generated-30-pages.pdf': await numberedPagesPdf(30),
    'generated-120-pages.pdf': await numberedPagesPdf(120),
    'generated-encrypted.pdf': await encryptedPdf(''),
  };
  return Object.entries(generated).map(([name, bytes]) => {
    const filePath = path.join(scratch, name);
    writeFileSync(filePath, bytes);
    return { name, path: filePath, bytes };
  });
}

/** Keeps the files that extract, with their page counts. */
async function extractableFiles(extractor: PdfExtractor, candidates: Array<Omit<BenchFile, 'pages'>>): Promise<BenchFile[]> {
  const files: BenchFile[] = [];
  for (const candidate of candidates) {
    const outcome = await extractor.extract(candidate.bytes.slice());
    if (outcome.kind === 'ok') files.push({ ...candidate, pages: outcome.pageCount });
    else console.log(`  left out ${candidate.name}: ${outcome.kind}`);
  }
  return files;
}

interface Throughput {
  pages: number;
  seconds: number;
  /** CPU seconds spent on the row, when they can be measured. */
  cpuSeconds?: number;
}

/** CPU seconds used so far by this process, all threads included. */
function ownCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

const clockTicksPerSecond = (() => {
  const getconf = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  return Number(getconf.stdout) || undefined;
})();

/** CPU seconds used by this process's finished child processes (Linux /proc), or undefined. */
function childCpuSeconds(): number | undefined {
  if (!clockTicksPerSecond) return undefined;
  try {
    // cutime and cstime are fields 16 and 17; counting starts after the command name's ')'.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / clockTicksPerSecond;
  } catch {
    return undefined;
  }
}

async function poolPagesPerSecond(extractor: PdfExtractor, files: BenchFile[], width: number, passes = rounds): Promise<Throughput> {
  const jobs = Array.from({ length: passes }, () =>
    files.map((file) => async () => {
      const outcome = await extractor.extract(file.bytes.slice());
      if (outcome.kind !== 'ok') throw new Error(`${file.name}: ${outcome.kind}`);
      return outcome.pageCount;
    }),
  ).flat();
  const cpuBefore = ownCpuSeconds();
  const started = performance.now();
  const pages = (await inFlight(width, jobs)).reduce((sum, n) => sum + n, 0);
  const seconds = (performance.now() - started) / 1000;
  return { pages, seconds, cpuSeconds: ownCpuSeconds() - cpuBefore };
}

function pdftotextInstalled(): boolean {
  return !spawnSync('pdftotext', ['-v']).error;
}

function pdftotext(filePath: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('pdftotext', ['-q', '-enc', 'UTF-8', filePath, '-'], { stdio: ['ignore', 'ignore', 'ignore'] });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`pdftotext ${filePath} exited ${code}`))));
  });
}

async function pdftotextPagesPerSecond(files: BenchFile[], width: number): Promise<Throughput> {
  const jobs = Array.from({ length: rounds }, () => files.map((file) => () => pdftotext(file.path))).flat();
  const cpuBefore = childCpuSeconds();
  const started = performance.now();
  await inFlight(width, jobs);
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = childCpuSeconds();
  const cpuSeconds = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
  return { pages: files.reduce((sum, file) => sum + file.pages, 0) * rounds, seconds, cpuSeconds };
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Milliseconds per extraction of `bytes`, `count` times one after the other. */
async function latencies(extractor: PdfExtractor, bytes: Uint8Array, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const outcome = await extractor.extract(bytes.slice());
    if (outcome.kind !== 'ok') throw new Error(`normal document: ${outcome.kind}`);
    times.push(performance.now() - started);
  }
  return times;
}

/** A normal document's latency alone and next to two bombs that keep running (default engine ceiling). */
async function bombLatency(poolThreads: number): Promise<void> {
  const extractor = createPdfExtractor({ threads: poolThreads });
  const normal = await multiPagePdf();
  const bomb = new Uint8Array(flateBombPdf());
  await latencies(extractor, normal, 10); // warm every thread's engine
  const alone = median(await latencies(extractor, normal, 30));
  let bombing = true;
  let bombs = 0;
  let bombMs = 0;
  const bomber = async () => {
    while (bombing) {
      const started = performance.now();
      const outcome = await extractor.extract(bomb.slice());
      if (outcome.kind !== 'invalid') throw new Error(`bomb: ${outcome.kind}`);
      bombMs += performance.now() - started;
      bombs++;
    }
  };
  const bombers = [bomber(), bomber()];
  await new Promise((resolve) => setTimeout(resolve, 300)); // both bombs are inflating
  const withBombs = median(await latencies(extractor, normal, 30));
  bombing = false;
  await Promise.all(bombers);
  await extractor.close();
  console.log(
    `  ${poolThreads} threads: alone ${alone.toFixed(1)} ms, with 2 bombs running ${withBombs.toFixed(1)} ms ` +
      `(${(withBombs / alone).toFixed(2)}×); ${bombs} bombs refused, ${(bombMs / bombs / 1000).toFixed(2)} s each`,
  );
}

async function main() {
  if (process.env.BENCH_PDF_ONLY === 'bombs') return bombSection();
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'gleaner-pdf-bench-'));
  try {
    console.log(`PDF extraction bench: ${threads} pool threads, ${os.availableParallelism()} cores, ${rounds} rounds`);
    const extractor = createPdfExtractor({ threads, maxPages: ENOUGH, timeoutMs: 120_000 });
    const files = await extractableFiles(extractor, await candidateFiles(scratch));
    const pagesPerRound = files.reduce((sum, file) => sum + file.pages, 0);
    console.log(`  ${files.length} files, ${pagesPerRound} pages per round: ${files.map((f) => `${f.name} (${f.pages})`).join(', ')}`);

    const rows: string[][] = [];
    const addRow = (label: string, { pages, seconds, cpuSeconds }: Throughput) =>
      rows.push([
        label,
        String(pages),
        seconds.toFixed(2),
        (pages / seconds).toFixed(1),
        cpuSeconds === undefined ? '' : cpuSeconds.toFixed(2),
        cpuSeconds === undefined ? '' : (pages / cpuSeconds).toFixed(1),
      ]);
    // An untimed round first: V8 compiles PDFium's hot functions with its optimising tier only
    // after they have run a while (about a second of extraction), as a server's engine has long
    // since done; timing from a cold start measured a third fewer pages/s on the first row.
    await poolPagesPerSecond(extractor, files, 2, 1);
    addRow(`pool (${threads} threads), 2 in flight`, await poolPagesPerSecond(extractor, files, 2));
    addRow(`pool (${threads} threads), 8 in flight`, await poolPagesPerSecond(extractor, files, 8));
    if (pdftotextInstalled()) addRow('pdftotext, 2 processes', await pdftotextPagesPerSecond(files, 2));
    else rows.push(['pdftotext, 2 processes', 'skipped: pdftotext not installed']);
    await extractor.close();

    const line = (cells: string[]) => cells.map((cell, i) => (i ? cell.padStart(12) : cell.padEnd(34))).join('');
    console.log('\nthroughput');
    console.log(line(['', 'pages', 'seconds', 'pages/s', 'CPU s', 'pages/CPU-s']));
    for (const row of rows) console.log(line(row));

    // Memory: what the route would see, the default page limit and only documents it accepts.
    const routeFiles = files.filter((file) => file.pages <= 30);
    const memoryExtractor = createPdfExtractor({ threads });
    const run = (count: number, offset: number) =>
      inFlight(
        threads,
        Array.from({ length: count }, (_, i) => async () => {
          const file = routeFiles[(offset + i) % routeFiles.length];
          const outcome = await memoryExtractor.extract(file.bytes.slice());
          if (outcome.kind !== 'ok') throw new Error(`${file.name}: ${outcome.kind}`);
        }),
      );
    const startRss = process.memoryUsage().rss;
    await run(100, 0);
    const rss100 = process.memoryUsage().rss;
    const started = performance.now();
    await run(extractions - 100, 100);
    const rssEnd = process.memoryUsage().rss;
    const seconds = (performance.now() - started) / 1000;
    await memoryExtractor.close();

    console.log(`\nmemory (${routeFiles.length} files of ≤ 30 pages in rotation, ${threads} in flight)`);
    console.log(`  RSS before                ${mb(startRss)}`);
    console.log(`  RSS after 100             ${mb(rss100)}`);
    console.log(`  RSS after ${String(extractions).padEnd(16)}${mb(rssEnd)}`);
    console.log(`  growth 100 → ${extractions}        ${(((rssEnd - rss100) / rss100) * 100).toFixed(1)} %`);
    console.log(`  (${extractions - 100} extractions in ${seconds.toFixed(1)} s)`);
    await bombSection();
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function bombSection(): Promise<void> {
  console.log('\nbombs (median latency of a 3-page PDF, 30 extractions one after the other)');
  await bombLatency(threads);
  await bombLatency(3);
}

await main();
