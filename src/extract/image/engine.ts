import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker as ThreadWorker } from 'node:worker_threads';
import { gunzipSync } from 'node:zlib';
import { createWorker, OEM, PSM } from 'tesseract.js';
import type { Worker as TesseractWorker } from 'tesseract.js';

/**
 * One Tesseract engine (tesseract.js worker thread running the WebAssembly build), fully offline:
 * the model and the engine are both read from installed packages, nothing is fetched or cached.
 */

const require = createRequire(import.meta.url);

/**
 * The bundled English model: the integer-quantised "best" LSTM model of the @tesseract.js-data/eng
 * package. More accurate than Tesseract's "fast" model, and about 1.2-1.3 times slower in the
 * command line itself; no npm package ships the fast one (docs/ocr.md).
 */
const MODEL_LANGUAGE = 'eng';
const MODEL_FOLDER = '4.0.0_best_int';

/** Folder of the installed @tesseract.js-data/eng package that holds eng.traineddata.gz. */
export function modelDirectory(): string {
  const packageDir = path.dirname(require.resolve('@tesseract.js-data/eng/package.json'));
  return path.join(packageDir, MODEL_FOLDER);
}

/** The English model an engine loads: its folder, its file, and whether that file is gzipped. */
export interface EngineModel {
  directory: string;
  file: string;
  gzip: boolean;
}

/** The bundled model. */
export function bundledModel(): EngineModel {
  const directory = modelDirectory();
  return { directory, file: path.join(directory, `${MODEL_LANGUAGE}.traineddata.gz`), gzip: true };
}

/**
 * An operator's model: `eng.traineddata` (or `eng.traineddata.gz`) in `directory`, such as the
 * "fast" model of a system Tesseract package. Checked once, at startup: the file must exist and
 * carry an LSTM model (a Tesseract 3 file has none, and the engine runs only the LSTM recogniser).
 * Throws with the reason.
 */
export function modelIn(directory: string): EngineModel {
  const plain = path.join(directory, `${MODEL_LANGUAGE}.traineddata`);
  const packed = `${plain}.gz`;
  const model: EngineModel | null = existsSync(plain)
    ? { directory, file: plain, gzip: false }
    : existsSync(packed)
      ? { directory, file: packed, gzip: true }
      : null;
  if (!model) throw new Error(`no ${MODEL_LANGUAGE}.traineddata or ${MODEL_LANGUAGE}.traineddata.gz in ${directory}`);
  let data: Buffer;
  try {
    data = readFileSync(model.file);
    if (model.gzip) data = gunzipSync(data);
  } catch (error) {
    throw new Error(`${model.file} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!hasLstmModel(data)) throw new Error(`${model.file} holds no LSTM model (Tesseract 3 data?)`);
  return model;
}

/** Index of the LSTM network in a traineddata file's table of components (Tesseract's TESSDATA_LSTM). */
const TESSDATA_LSTM = 17;

/**
 * Whether a traineddata file carries an LSTM network. The file starts with the number of
 * components (32-bit) and a table of their 64-bit offsets, -1 for a component that is absent.
 */
export function hasLstmModel(data: Uint8Array): boolean {
  if (data.byteLength < 4) return false;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const components = view.getUint32(0, true);
  const entry = 4 + TESSDATA_LSTM * 8;
  if (components <= TESSDATA_LSTM || data.byteLength < entry + 8) return false;
  const offset = view.getBigInt64(entry, true);
  return offset > 0n && offset < BigInt(data.byteLength);
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
export function assertEngineAssets(model: EngineModel = bundledModel()): void {
  if (!existsSync(model.file)) throw new Error(`OCR model not found at ${model.file}`);
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
export async function spawnEngine(onCrash: (reason: string) => void, model: EngineModel = bundledModel()): Promise<TesseractWorker> {
  const starting = startEngine(model);
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

async function startEngine(model: EngineModel): Promise<TesseractWorker> {
  const worker = await createWorker(MODEL_LANGUAGE, OEM.LSTM_ONLY, {
    // A filesystem path (not a URL): tesseract.js then reads the file instead of fetching it.
    langPath: model.directory,
    gzip: model.gzip,
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
