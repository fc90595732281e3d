/**
 * The PDF text extractor: a pool of worker threads running pdf.js, so parsing never blocks the
 * event loop, with a time limit per document that terminates a stuck thread instead of waiting.
 */
import os from 'node:os';
import { MessageChannel, isMarkedAsUntransferable } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { PdfOutcome, PdfTaskOutcome } from './types.ts';
import type { PooledPdfTask } from './worker.ts';

export interface PdfExtractorOptions {
  /** Parsing threads, all started with the pool. Default: the number of cores. */
  threads?: number;
  /** Time limit for parsing one document, from the moment a thread starts on it. Default 60 s. */
  timeoutMs?: number;
  /** Documents with more pages are refused before extraction. Default 30. */
  maxPages?: number;
  /** V8 heap limit of each thread; a document that needs more kills only its thread. Default 1024 MB. */
  maxHeapMb?: number;
}

export interface PdfExtractor {
  /**
   * Extracts the text of one PDF. `budget` is the number of pages the caller can pay for: a larger
   * document answers `over_budget` without being extracted. The bytes of `data` are moved to the
   * parsing thread when possible, which leaves `data` empty (detached) for the caller.
   * Rejects only when `signal` aborts (with its reason) or the pool is unusable (closed, broken).
   */
  extract(data: Uint8Array, budget: number, signal?: AbortSignal): Promise<PdfOutcome>;
  /** Threads, documents being parsed and documents waiting (read by the metrics at scrape time). */
  stats?(): { threads: number; busy: number; queued: number };
  /** Waits for running documents, then stops the threads. */
  close(): Promise<void>;
}

export const PDF_EXTRACTOR_DEFAULTS = {
  timeoutMs: 60_000,
  maxPages: 30,
  maxHeapMb: 1024,
} as const;

/**
 * The smallest heap limit accepted. Below a few MB V8 cannot even start the thread and aborts the
 * whole process (a fatal error, not a catchable one); below ~16 MB ordinary one-page documents
 * already fail. 64 MB leaves room for pdf.js and a modest document.
 */
export const MIN_PDF_HEAP_MB = 64;

const WORKER_FILE = new URL('./worker.ts', import.meta.url).href;

export function createPdfExtractor(options: PdfExtractorOptions = {}): PdfExtractor {
  const threads = options.threads ?? os.availableParallelism();
  const timeoutMs = options.timeoutMs ?? PDF_EXTRACTOR_DEFAULTS.timeoutMs;
  const maxPages = options.maxPages ?? PDF_EXTRACTOR_DEFAULTS.maxPages;
  const maxHeapMb = options.maxHeapMb ?? PDF_EXTRACTOR_DEFAULTS.maxHeapMb;
  if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`threads must be an integer ≥ 1 (got ${threads})`);
  if (!(timeoutMs > 0)) throw new RangeError(`timeoutMs must be > 0 (got ${timeoutMs})`);
  if (!(maxPages >= 0)) throw new RangeError(`maxPages must be ≥ 0 (got ${maxPages})`);
  if (!(maxHeapMb >= MIN_PDF_HEAP_MB)) throw new RangeError(`maxHeapMb must be ≥ ${MIN_PDF_HEAP_MB} (got ${maxHeapMb})`);

  const pool = new Piscina<PooledPdfTask, PdfTaskOutcome>({
    filename: WORKER_FILE,
    maxThreads: threads,
    // Every thread starts with the pool and stays: a thread started on demand costs its document
    // ~0.4 s of start-up, and its first documents run on cold code. An idle thread holds ~50 MB.
    minThreads: threads,
    // One document per thread: a time limit or abort terminates the whole thread, which would take
    // an unrelated document down with it.
    concurrentTasksPerWorker: 1,
    // Lets a thread's event loop run between documents, so pdf.js's asynchronous cleanup finishes.
    atomics: 'async',
    resourceLimits: { maxOldGenerationSizeMb: maxHeapMb },
  });

  let running = 0;
  async function extract(data: Uint8Array, budget: number, signal?: AbortSignal): Promise<PdfOutcome> {
    signal?.throwIfAborted();
    running++;
    const bytes = ownedBytes(data);
    const timeLimit = new AbortController();
    const abort = signal ? AbortSignal.any([timeLimit.signal, signal]) : timeLimit.signal;
    const { port1: startNotice, port2: started } = new MessageChannel();
    let timer: NodeJS.Timeout | undefined;
    startNotice.once('message', () => {
      timer = setTimeout(() => timeLimit.abort(new Error('PDF time limit reached')), timeoutMs);
    });
    try {
      return await pool.run(
        { data: bytes, budget, maxPages, started },
        { signal: abort, transferList: [bytes.buffer as ArrayBuffer, started] },
      );
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (timeLimit.signal.aborted) return { kind: 'timeout' };
      // The thread hit its heap limit: the document is a resource bomb, the pool has replaced it.
      if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        return { kind: 'invalid', reason: `the document needs more than ${maxHeapMb} MB of heap` };
      }
      throw error;
    } finally {
      running--;
      clearTimeout(timer);
      startNotice.close();
    }
  }

  return {
    extract,
    stats: () => ({ threads, queued: pool.queueSize, busy: Math.max(0, running - pool.queueSize) }),
    close: () => pool.close(),
  };
}

/**
 * A Uint8Array whose whole ArrayBuffer can be transferred: the caller's own when it spans the
 * full buffer, otherwise a copy of just its bytes (a small Buffer lives inside a shared slab that
 * must not be moved, and a view may hold far more memory than it shows).
 */
function ownedBytes(data: Uint8Array): Uint8Array {
  const { buffer } = data;
  const spansBuffer = data.byteOffset === 0 && data.byteLength === buffer.byteLength;
  if (spansBuffer && buffer instanceof ArrayBuffer && !isMarkedAsUntransferable(buffer)) {
    return new Uint8Array(buffer); // a plain view, also when `data` is a Buffer
  }
  return new Uint8Array(data);
}
