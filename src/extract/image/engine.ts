import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker as ThreadWorker } from 'node:worker_threads';
import { createWorker, OEM, PSM } from 'tesseract.js';
import type { Worker as TesseractWorker } from 'tesseract.js';

/**
 * One Tesseract engine (tesseract.js worker thread running the WebAssembly build), fully offline:
 * the model and the engine are both read from installed packages, nothing is fetched or cached.
 */

const require = createRequire(import.meta.url);

/** English LSTM model, integer-quantised "best" variant: more accurate than "fast", close in speed. */
const MODEL_LANGUAGE = 'eng';
const MODEL_FOLDER = '4.0.0_best_int';

/** Folder of the installed @tesseract.js-data/eng package that holds eng.traineddata.gz. */
export function modelDirectory(): string {
  const packageDir = path.dirname(require.resolve('@tesseract.js-data/eng/package.json'));
  return path.join(packageDir, MODEL_FOLDER);
}

/**
 * The engine file tesseract.js loads in Node: its worker script requires a build of
 * tesseract.js-core by package name (relaxed-SIMD where the runtime has it, as Node 24 does), no
 * corePath or URL being involved in Node; resolving it from that script's own folder proves it
 * comes from the installed package.
 */
export function engineCoreFile(): string {
  const workerScript = require.resolve('tesseract.js/src/worker-script/node/index.js');
  return createRequire(workerScript).resolve('tesseract.js-core/tesseract-core-relaxedsimd');
}

/** Fails fast, with the path, when an installed asset is missing (instead of a vague worker error). */
export function assertEngineAssets(): void {
  const model = path.join(modelDirectory(), `${MODEL_LANGUAGE}.traineddata.gz`);
  if (!existsSync(model)) throw new Error(`OCR model not found at ${model}`);
  const core = engineCoreFile();
  const wasm = core.replace(/\.js$/, '.wasm');
  if (!existsSync(wasm)) throw new Error(`OCR engine not found at ${wasm}`);
}

/** Resolution the engine assumes for every image (PGM has none). */
const ENGINE_DPI = 300;

/**
 * A thread that dies while loading never settles tesseract.js's createWorker promise; past this
 * delay the start counts as failed (loading takes well under a second normally).
 */
const START_TIMEOUT_MS = 60_000;

/**
 * Starts one engine and loads the model; resolves once it is ready to recognise.
 * `onCrash` is called when its worker thread exits or throws, including after terminate().
 */
export async function spawnEngine(onCrash: (reason: string) => void): Promise<TesseractWorker> {
  const starting = startEngine();
  let timer: NodeJS.Timeout | undefined;
  const tooSlow = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the OCR engine did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    timer.unref();
  });
  let worker: TesseractWorker;
  try {
    worker = await Promise.race([starting, tooSlow]);
  } catch (error) {
    // Should the slow start complete after all, its thread must not linger.
    starting.then((late) => late.terminate(), () => {});
    throw error;
  } finally {
    clearTimeout(timer);
  }
  const thread = workerThreadOf(worker);
  if (thread) {
    thread.on('error', (error) => onCrash(error instanceof Error ? error.message : String(error)));
    thread.on('exit', (code) => onCrash(`worker thread exited with code ${code}`));
  }
  return worker;
}

async function startEngine(): Promise<TesseractWorker> {
  const worker = await createWorker(MODEL_LANGUAGE, OEM.LSTM_ONLY, {
    // A filesystem path (not a URL): tesseract.js then reads the file instead of fetching it.
    langPath: modelDirectory(),
    gzip: true,
    // No read from or write of a traineddata cache in the working directory.
    cacheMethod: 'none',
    // Without a handler tesseract.js rethrows a failed job inside its message listener, which
    // would be an uncaught exception. The failure also rejects the job's own promise, where the
    // pool handles it, so nothing more is needed here.
    errorHandler: () => {},
  });
  try {
    await worker.setParameters({
      // tesseract.js leaves Tesseract's library default, a single block of text (PSM 6), which reads
      // straight across the columns of a page; the command line uses automatic segmentation (PSM 3:
      // columns found and read one after the other, a page turned 90° read as vertical lines).
      tessedit_pageseg_mode: PSM.AUTO,
      // Images arrive as PGM, which carries no resolution; without one Tesseract warns and guesses.
      // Its results did not change between 72 and 300 dpi in our measurements.
      user_defined_dpi: String(ENGINE_DPI),
      // Tesseract reports on stdout (resolution estimates, weak orientation margins, diacritics):
      // noise in a service's log, with nothing a caller could act on.
      debug_file: '/dev/null',
    });
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  return worker;
}

/**
 * tesseract.js keeps its Node worker thread on the object it returns (not in its typings). An
 * 'error' event on a thread without listeners would be thrown in the main thread, so the pool
 * listens to it; checked with instanceof so a future layout change only loses crash detection.
 */
function workerThreadOf(worker: TesseractWorker): ThreadWorker | null {
  const thread: unknown = (worker as unknown as { worker?: unknown }).worker;
  return thread instanceof ThreadWorker ? thread : null;
}
