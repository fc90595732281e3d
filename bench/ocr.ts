/**
 * Image OCR accuracy and throughput: the service's engine (sharp preprocessing + tesseract.js
 * WebAssembly workers, src/extract/image) beside the native `tesseract` command line, on the same
 * images, both two wide, image by image.
 *
 *   gleaner        createImageOcr with BENCH_OCR_WORKERS workers (default 2), all requests
 *                  submitted at once, engines warmed before the clock starts
 *   native         `tesseract stdin stdout` (default page segmentation, PSM 3) with
 *                  OMP_THREAD_LIMIT=1, BENCH_OCR_PARALLEL processes at a time (default 2), the
 *                  system's English model (Debian's tesseract-ocr-eng is the "fast" model)
 *   native-best    with BENCH_OCR_BEST=1: the same command reading this project's model (eng
 *                  4.0.0_best_int, unpacked to a temporary folder), model for model
 *
 * gleaner reads the bundled model, or the one in OCR_MODEL_DIR as the service does: with
 * OCR_MODEL_DIR=/usr/share/tesseract-ocr/5/tessdata both read the same (Debian's fast) model.
 *
 * Images: a varied set generated in code (test/support/image-fixtures.ts: two columns, pixels
 * rotated 90/180/270°, unevenly lit photos saved at JPEG quality 40, low contrast, light on dark,
 * small text) plus, with CORPUS_DIR, the corpus OCR images with their ground truth. Accuracy is the
 * character error rate (CER, whitespace normalised; 0 is perfect) of each image's first read. The
 * goal checked per image: gleaner's CER ≤ the command line's + 0.02; and throughput ≥ 0.8× the
 * command line's. Without the command line the comparison is skipped, and said so.
 *
 * Usage: node bench/ocr.ts
 * Environment:
 *   CORPUS_DIR           the recorded corpus (uses its ocr/ folder when present)
 *   BENCH_OCR_ROUNDS     times each image is submitted (default 3)
 *   BENCH_OCR_WORKERS    workers of the gleaner engine (default 2)
 *   BENCH_OCR_PARALLEL   native processes at a time (default 2)
 *   BENCH_OCR_BEST       1: also run the command line with the project's best_int model
 *   OCR_MODEL_DIR        a folder with another eng.traineddata for gleaner (as in the service)
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { gunzipSync } from 'node:zlib';
import { createImageOcr, imageOcrOptionsFromEnv } from '../src/extract/image/index.ts';
import { modelDirectory } from '../src/extract/image/engine.ts';
import { corpusDir } from '../test/support/corpus.ts';
import { characterErrorRate, variedSamples } from '../test/support/image-fixtures.ts';

interface Sample {
  name: string;
  bytes: Buffer;
  truth: string;
}

interface RunResult {
  engine: string;
  seconds: number;
  requests: number;
  /** Text of each sample's first read, by sample name. */
  texts: Map<string, string>;
  failures: number;
}

const rounds = positive('BENCH_OCR_ROUNDS', 3);
const workers = positive('BENCH_OCR_WORKERS', 2);
const parallel = positive('BENCH_OCR_PARALLEL', 2);

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

/** Goal per image: gleaner's CER at most the command line's plus this. */
const CER_MARGIN = 0.02;
/** Goal for throughput: at least this fraction of the command line's images/s. */
const THROUGHPUT_FLOOR = 0.8;

async function loadSamples(): Promise<{ source: string; samples: Sample[] }> {
  const samples: Sample[] = await variedSamples();
  const corpus = corpusDir('ocr');
  if (corpus.skip) {
    console.log(`${corpus.skip}; generated images only`);
    return { source: 'generated images', samples };
  }
  const truth: Record<string, string> = JSON.parse(readFileSync(path.join(corpus.dir, 'ground-truth.json'), 'utf8'));
  for (const [name, text] of Object.entries(truth)) samples.push({ name, bytes: readFileSync(path.join(corpus.dir, name)), truth: text });
  return { source: `generated images and the corpus (${corpus.dir})`, samples };
}

function requestList(samples: Sample[]): Sample[] {
  const list: Sample[] = [];
  for (let round = 0; round < rounds; round += 1) list.push(...samples);
  return list;
}

async function runGleaner(samples: Sample[]): Promise<RunResult & { rss: Record<string, number> }> {
  const rss: Record<string, number> = { before: process.memoryUsage().rss };
  const requests = requestList(samples);
  const { model } = imageOcrOptionsFromEnv();
  const ocr = createImageOcr({ workers, maxQueue: requests.length, model });
  await ocr.warm();
  rss.warmed = process.memoryUsage().rss;
  const texts = new Map<string, string>();
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    requests.map(async (sample) => {
      const outcome = await ocr.recognize(sample.bytes);
      if (outcome.kind !== 'ok') failures += 1;
      if (!texts.has(sample.name)) texts.set(sample.name, outcome.kind === 'ok' ? outcome.text : '');
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  rss.after = process.memoryUsage().rss;
  await ocr.close();
  const modelName = model ? `model in ${model.directory}` : 'bundled best_int model';
  return { engine: `gleaner (${workers} workers, ${modelName})`, seconds, requests: requests.length, texts, failures, rss };
}

function nativeAvailable(): boolean {
  return spawnSync('tesseract', ['--version'], { encoding: 'utf8' }).status === 0;
}

function tesseractOnce(bytes: Buffer, tessdataDir: string | null): Promise<string | null> {
  const args = tessdataDir ? ['--tessdata-dir', tessdataDir] : [];
  // Default page segmentation (PSM 3), as the command line runs without options.
  args.push('stdin', 'stdout', '-l', 'eng', '--oem', '1');
  return new Promise((resolve) => {
    const child = spawn('tesseract', args, { env: { ...process.env, OMP_THREAD_LIMIT: '1' }, stdio: ['pipe', 'pipe', 'ignore'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', () => resolve(null));
    child.on('close', (code) => resolve(code === 0 ? Buffer.concat(chunks).toString('utf8') : null));
    child.stdin.end(bytes);
  });
}

async function runNative(label: string, samples: Sample[], tessdataDir: string | null): Promise<RunResult> {
  const requests = requestList(samples);
  const texts = new Map<string, string>();
  let failures = 0;
  let next = 0;
  const started = performance.now();
  const lane = async (): Promise<void> => {
    while (next < requests.length) {
      const sample = requests[next++];
      const text = await tesseractOnce(sample.bytes, tessdataDir);
      if (text === null) failures += 1;
      if (!texts.has(sample.name)) texts.set(sample.name, text ?? '');
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  return { engine: label, seconds: (performance.now() - started) / 1000, requests: requests.length, texts, failures };
}

function accuracy(result: RunResult, samples: Sample[]): { mean: number; max: number; perSample: number[] } {
  const perSample = samples.map((sample) => characterErrorRate(result.texts.get(sample.name) ?? '', sample.truth));
  return { mean: perSample.reduce((a, b) => a + b, 0) / perSample.length, max: Math.max(...perSample), perSample };
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  ')).join('\n');
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

async function main(): Promise<void> {
  const { source, samples } = await loadSamples();
  console.log(`OCR bench: ${samples.length} images from ${source}, ${rounds} rounds, ${os.availableParallelism()} cores, load average ${os.loadavg().map((load) => load.toFixed(2)).join(' ')}`);

  const results: RunResult[] = [];
  const gleaner = await runGleaner(samples);
  results.push(gleaner);

  const native = nativeAvailable();
  if (native) {
    results.push(await runNative(`native tesseract, system model (${parallel} processes)`, samples, null));
    if (process.env.BENCH_OCR_BEST === '1') {
      const bestDir = mkdtempSync(path.join(os.tmpdir(), 'ocr-bench-tessdata-'));
      try {
        writeFileSync(path.join(bestDir, 'eng.traineddata'), gunzipSync(readFileSync(path.join(modelDirectory(), 'eng.traineddata.gz'))));
        results.push(await runNative(`native tesseract, best_int model (${parallel} processes)`, samples, bestDir));
      } finally {
        rmSync(bestDir, { recursive: true, force: true });
      }
    }
  } else {
    console.log('\nnative tesseract not found on PATH (Debian: apt-get install tesseract-ocr tesseract-ocr-eng): comparison with the command line SKIPPED');
  }

  const reference = native ? results[1] : null;
  const rows = [['engine', 'images', 'failed', 'seconds', 'images/s', 'vs native', 'mean CER', 'max CER']];
  for (const result of results) {
    const rate = result.requests / result.seconds;
    const { mean, max } = accuracy(result, samples);
    const ratio = reference ? (rate / (reference.requests / reference.seconds)).toFixed(2) + 'x' : '-';
    rows.push([result.engine, String(result.requests), String(result.failures), result.seconds.toFixed(2), rate.toFixed(2), ratio, mean.toFixed(4), max.toFixed(4)]);
  }
  console.log('\n' + table(rows));

  console.log('\nCER per image');
  const rates = results.map((result) => accuracy(result, samples).perSample);
  const perImage = [['image', ...results.map((result) => result.engine.split(' (')[0]), ...(reference ? ['goal'] : [])]];
  let misses = 0;
  samples.forEach((sample, index) => {
    const row = [sample.name, ...rates.map((perSample) => perSample[index].toFixed(4))];
    if (reference) {
      const met = rates[0][index] <= rates[1][index] + CER_MARGIN;
      if (!met) misses += 1;
      row.push(met ? 'met' : 'MISSED');
    }
    perImage.push(row);
  });
  console.log(table(perImage));

  if (reference) {
    const ratio = gleaner.requests / gleaner.seconds / (reference.requests / reference.seconds);
    console.log(`\naccuracy goal (CER ≤ native + ${CER_MARGIN}): ${samples.length - misses}/${samples.length} images`);
    console.log(`throughput: ${ratio.toFixed(2)}x the command line's images/s (goal ≥ ${THROUGHPUT_FLOOR}x: ${ratio >= THROUGHPUT_FLOOR ? 'met' : 'MISSED'})`);
  }

  const { rss } = gleaner;
  console.log(`\nRSS of this process: before ${mb(rss.before)}, engines warmed ${mb(rss.warmed)}, after ${gleaner.requests} requests ${mb(rss.after)}`);
}

await main();
