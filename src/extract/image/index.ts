import { ConfigError, envReader, type EnvReader } from '../../core/env.ts';
import { availableParallelism } from 'node:os';
import { assertEngineAssets, bundledModel, modelIn, spawnEngine } from './engine.ts';
import type { EngineModel } from './engine.ts';
import { engineImage, normalizeImage, turnedUpsideDown, upscaleImage } from './normalize.ts';
import type { ImageInput, NormalizeLimits, NormalizedImage } from './normalize.ts';
import { orientationHint } from './orientation.ts';
import { OcrBusyError, OcrClosedError } from './outcome.ts';
import type { OcrOutcome } from './outcome.ts';
import { createOcrPool } from './pool.ts';
import type { PassResult, PoolStats, SpawnEngine } from './pool.ts';
import { smallTextUpscaleFactor } from './small-text.ts';
import { cleanOcrText } from './text.ts';
import { defaultPerTenant, type FairLimiterStats, type TenantLeases } from '../../core/fair-limiter.ts';

export { OcrBusyError, OcrClosedError } from './outcome.ts';
export type { OcrOutcome } from './outcome.ts';
export type { PoolStats } from './pool.ts';
export type { ImageInput, RawBitmap } from './normalize.ts';

export interface ImageOcrOptions {
  /** OCR engines in parallel, one core each. Default: the number of cores. */
  workers?: number;
  /** Time limit per image, for decoding and again for recognition (all passes). Default 30 000. */
  timeoutMs?: number;
  /** Largest input accepted, in pixels (width × height), checked before decoding. Default 50 000 000. */
  maxPixels?: number;
  /** An engine is replaced by a fresh one after this many images. Default 200. */
  recycleAfter?: number;
  /** Images allowed to wait for an engine before recognize() throws OcrBusyError. Default 16 per worker. */
  maxQueue?: number;
  /** The English model the engines load. Default: the bundled one (see modelIn() for another). */
  model?: EngineModel;
  /** Starts one engine; for tests of the pool's lifecycle. */
  spawnEngine?: SpawnEngine;
  /** Engines one user may keep busy at once (POOL_USER_CONCURRENCY). Default: half the engines, at least 1. */
  userConcurrency?: number;
  /** Shared per-user leases, so the bound holds across replicas (scaled mode). */
  leases?: TenantLeases;
}

export interface ImageOcr {
  /** Starts and loads every engine (about 0.3 s each); recognize() also does it on first use. */
  warm(): Promise<void>;
  /**
   * Text of one image: the bytes of an image file, or a raw grey/RGB/RGBA bitmap (a rendered PDF
   * page, for instance), both through the same checks and preprocessing. Rejects only when the
   * server cannot take the image (OcrBusyError), when closed (OcrClosedError) or when `signal`
   * aborts (with its reason); every problem with the image itself is an outcome. `tenant` (the
   * user's id) is whose image it is: one user keeps at most `userConcurrency` engines busy.
   */
  recognize(input: ImageInput, signal?: AbortSignal, tenant?: string): Promise<OcrOutcome>;
  stats(): PoolStats;
  /** The per-user bound and the waits it caused. */
  fairness(): FairLimiterStats;
  close(): Promise<void>;
}

export const OCR_DEFAULTS = {
  timeoutMs: 30_000,
  maxPixels: 50_000_000,
  recycleAfter: 200,
  queuePerWorker: 16,
} as const;

/**
 * Longest side of the image given to the engine: 4000 px keeps an A4 page near 340 dpi (plenty for
 * OCR) and bounds a recognition's memory and time; larger images are scaled down.
 */
export const OCR_MAX_SIDE = 4000;

/**
 * Below this mean word confidence the first read is suspected of being a page upside down or
 * turned 270°, and the page is read again turned by 180°. Measured on generated pages: text
 * rotated 180° or 270° reads as garbage at confidence 22-49; upright text, photographed pages
 * included, at 83-95 (90° pages are turned by the layout analysis itself and read at 95).
 */
const ORIENTATION_SUSPECT_CONFIDENCE = 60;

export function createImageOcr(options: ImageOcrOptions = {}): ImageOcr {
  const workers = positiveInteger('workers', options.workers ?? availableParallelism());
  const timeoutMs = positiveInteger('timeoutMs', options.timeoutMs ?? OCR_DEFAULTS.timeoutMs);
  const limits: NormalizeLimits = {
    maxInputPixels: positiveInteger('maxPixels', options.maxPixels ?? OCR_DEFAULTS.maxPixels),
    maxSide: OCR_MAX_SIDE,
    timeoutMs,
  };
  const poolOptions = {
    workers,
    recycleAfter: positiveInteger('recycleAfter', options.recycleAfter ?? OCR_DEFAULTS.recycleAfter),
    maxQueue: positiveInteger('maxQueue', options.maxQueue ?? workers * OCR_DEFAULTS.queuePerWorker),
    perTenant: positiveInteger('userConcurrency', options.userConcurrency ?? defaultPerTenant(workers)),
    leases: options.leases,
  };
  const model = options.model ?? bundledModel();
  if (!options.spawnEngine) assertEngineAssets(model);
  const pool = createOcrPool(poolOptions, options.spawnEngine ?? ((onCrash) => spawnEngine(onCrash, model)));
  let closed = false;

  async function recognize(input: ImageInput, signal?: AbortSignal, tenant?: string): Promise<OcrOutcome> {
    if (closed) throw new OcrClosedError();
    signal?.throwIfAborted();
    // Refused before decoding: an overloaded server should not spend work on what it cannot run.
    if (!pool.hasCapacity()) throw new OcrBusyError(pool.stats().queued);

    const normalized = await normalizeImage(input, limits);
    signal?.throwIfAborted();
    if (normalized.kind !== 'ok') return normalized;
    // A page whose lines say it stands upside down (or turned 270°) is turned before the first read.
    const image = (await orientationHint(normalized)) === 'turn_180' ? turnedUpsideDown(normalized) : normalized;
    signal?.throwIfAborted();

    const first = await pool.recognize({ image: engineImage(image), timeoutMs, signal, tenant });
    if (first.kind !== 'ok') return engineFailure(first);
    let best: Read = { pass: first, image, elapsedMs: first.elapsedMs };
    best = (await readTurned(best, signal, tenant)) ?? best;
    const larger = await readSmallTextLarger(best, signal, tenant);
    return { kind: 'ok', text: cleanOcrText((larger ?? best.pass).text) };
  }

  /**
   * A read that looks like garbage may be a page upside down or turned 270° (that the orientation
   * hint did not recognise, or got wrong): read it again turned by 180°. That one turn covers
   * both, as the layout analysis reads a page turned 90° on its own (270° + 180° is 90°). The
   * turned read wins when the engine is more confident of it; null when not tried or not better.
   *
   * Tesseract's orientation detection (OSD, page segmentation mode 1) was the first design. On
   * nine varied pages in all four orientations the turned read was right on all 18 upside-down and
   * 270° pages, OSD wrong on 4 of them (a bill, a short poster, a long single column), and a read
   * with OSD took 1.5-1.7 times a plain read. So no OSD model is loaded.
   */
  async function readTurned(first: Read, signal: AbortSignal | undefined, tenant: string | undefined): Promise<Read | null> {
    if (first.pass.confidence >= ORIENTATION_SUSPECT_CONFIDENCE) return null;
    const remainingMs = Math.floor(timeoutMs - first.elapsedMs);
    // The second read costs about as much as the first; one that cannot finish is not started.
    if (remainingMs < first.elapsedMs) return null;
    const image = turnedUpsideDown(first.image);
    const turned = await pool.recognize({ image: engineImage(image), timeoutMs: remainingMs, signal, continuation: true, tenant });
    if (turned.kind !== 'ok' || turned.confidence <= first.pass.confidence) return null;
    return { pass: turned, image, elapsedMs: first.elapsedMs + turned.elapsedMs };
  }

  /** Another pass on an enlarged image when the best read found small text; null when not needed or not better. */
  async function readSmallTextLarger(best: Read, signal: AbortSignal | undefined, tenant: string | undefined): Promise<Extract<PassResult, { kind: 'ok' }> | null> {
    const factor = smallTextUpscaleFactor(best.pass, best.image, OCR_MAX_SIDE);
    if (factor === null) return null;
    const remainingMs = Math.floor(timeoutMs - best.elapsedMs);
    // Recognition time grows about with the pixel count; a pass that cannot finish is not started.
    if (remainingMs < best.pass.elapsedMs * factor * factor) return null;

    const larger = await upscaleImage(best.image, factor).catch(() => null);
    if (!larger) return null;
    const second = await pool.recognize({ image: engineImage(larger), timeoutMs: remainingMs, signal, continuation: true, tenant });
    // The enlarged read wins unless the engine is less sure of it; a failed second pass keeps the first.
    return second.kind === 'ok' && second.confidence >= best.pass.confidence ? second : null;
  }

  async function close(): Promise<void> {
    closed = true;
    await pool.close();
  }

  return { warm: pool.warm, recognize, stats: pool.stats, fairness: pool.fairness, close };
}

/** A successful read, the image it read (turned or not), and the recognition time spent so far. */
interface Read {
  pass: Extract<PassResult, { kind: 'ok' }>;
  image: NormalizedImage;
  elapsedMs: number;
}

function engineFailure(result: Exclude<PassResult, { kind: 'ok' }>): OcrOutcome {
  if (result.kind === 'timeout') return { kind: 'timeout' };
  return { kind: 'invalid_image', reason: `the OCR engine could not read the image: ${result.reason}` };
}

/**
 * Options from the environment (OCR_WORKERS, OCR_TIMEOUT_MS, OCR_MAX_PIXELS, OCR_RECYCLE_AFTER,
 * OCR_MAX_QUEUE, OCR_MODEL_DIR); unset or empty variables keep the defaults, malformed ones throw.
 */
export function imageOcrOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): ImageOcrOptions {
  return readOcrOptions(envReader(env));
}

export function readOcrOptions(env: EnvReader): ImageOcrOptions {
  const userConcurrency = env.positiveInteger('POOL_USER_CONCURRENCY');
  return {
    workers: env.positiveInteger('OCR_WORKERS'),
    timeoutMs: env.positiveInteger('OCR_TIMEOUT_MS'),
    maxPixels: env.positiveInteger('OCR_MAX_PIXELS'),
    recycleAfter: env.positiveInteger('OCR_RECYCLE_AFTER'),
    maxQueue: env.positiveInteger('OCR_MAX_QUEUE'),
    model: modelFromEnv(env),
    // Unset: half the engines, at least one.
    ...(userConcurrency === undefined ? {} : { userConcurrency }),
  };
}

/** OCR_MODEL_DIR: a folder with another eng.traineddata, checked before the service starts. */
function modelFromEnv(env: EnvReader): EngineModel | undefined {
  const directory = env.text('OCR_MODEL_DIR');
  if (directory === undefined) return undefined;
  try {
    return modelIn(directory);
  } catch (error) {
    throw new ConfigError(`OCR_MODEL_DIR: ${error instanceof Error ? error.message : String(error)}.`, 'OCR_MODEL_DIR');
  }
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}
