/**
 * The PDF text extractor: a pool of worker threads, each running one PDFium WebAssembly instance,
 * so parsing never blocks the event loop, with a time limit per document that terminates a stuck
 * thread instead of waiting, and a memory ceiling per engine instance.
 *
 * Two steps, so billing can hold credits before the heavy work: `count()` opens the document and
 * reads its page count only; `extract()` then reads the text.
 */
import os from 'node:os';
import { isMarkedAsUntransferable } from 'node:worker_threads';
import { createTaskThreads, type TaskThreads } from '../../core/task-threads.ts';
import { defaultPerTenant, type FairLimiterStats, type TenantLeases } from '../../core/fair-limiter.ts';
import { compiledPdfium } from './engine.ts';
import { PdfBusyError, PdfRenderError } from './types.ts';
import type { EngineLimits, PdfCount, PdfOutcome, PdfTask, PdfTaskResult, RenderedPage } from './types.ts';

export interface PdfExtractorOptions {
  /**
   * Parsing threads, all started with the pool. Default: the number of cores plus one, so that
   * while suspected bombs hold threads (each steps down to the lowest CPU priority until its
   * memory ceiling stops it), a normal document still finds a thread at full priority.
   */
  threads?: number;
  /** Time limit for one task (count, extract or render), from the moment a thread starts on it. Default 60 s. */
  timeoutMs?: number;
  /** Documents with more pages are refused before extraction. Default 30. */
  maxPages?: number;
  /** V8 heap limit of each thread (the JavaScript side; PDFium's memory is `maxMemoryMb`). Default 1024 MB. */
  maxHeapMb?: number;
  /** Ceiling of each PDFium instance's WebAssembly memory; a document that needs more is invalid. Default 512 MB. */
  maxMemoryMb?: number;
  /** After a document, an instance whose memory grew past this is replaced by a fresh one. Default 128 MB. */
  memoryHighWaterMb?: number;
  /** Documents allowed to wait for a thread; past it `count` throws PdfBusyError. Default 128 per thread. */
  maxQueue?: number;
  /**
   * Memory that admitted documents (waiting or being read) may hold together, estimated from
   * their sizes (`documentWeight`); past it a new document is refused with PdfBusyError. Default 256 MB.
   */
  maxQueueBytes?: number;
  /** Threads one user may keep busy at once (POOL_USER_CONCURRENCY). Default: half the threads, at least 1. */
  userConcurrency?: number;
  /** Shared per-user leases, so the bound holds across replicas (scaled mode). */
  leases?: TenantLeases;
}

/**
 * What an admitted document keeps in memory until answered: the downloaded bytes, the copy moved
 * to the thread, and a fixed share for its request, task and answer.
 */
export function documentWeight(byteLength: number): number {
  return 2 * byteLength + 64 * 1024;
}

export interface RenderOptions {
  /** Resolution; default 300. A page larger than 50 megapixels at it is rendered smaller to fit. */
  dpi?: number;
  signal?: AbortSignal;
  /** Whose document it is (the user's id), for the per-user bound. */
  tenant?: string;
}

export interface PdfExtractor {
  /**
   * Opens the document and reads its page count, nothing more: cheap, so the caller can hold
   * credits for the pages before `extract`. `data` is copied, never moved. This is where a
   * document is admitted: when `maxQueue` documents already wait, it throws PdfBusyError (the
   * `extract` and `renderPages` that follow are never refused).
   */
  count(data: Uint8Array, signal?: AbortSignal, tenant?: string): Promise<PdfCount>;
  /** Whether `count` would admit a document of `byteLength` bytes now (0 before it is downloaded). */
  hasCapacity(byteLength?: number): boolean;
  /**
   * Extracts the text of every page (refusing more than `maxPages` pages). The bytes of `data` are
   * moved to the parsing thread when possible, which leaves `data` empty (detached) for the caller.
   * Rejects only when `signal` aborts (with its reason) or the pool is unusable (closed, broken).
   *
   * With `approve`, the document is admitted here (PdfBusyError when the queue is full), and its
   * page count is handed to `approve` before any text is read, the document kept open meanwhile:
   * the caller holds credits there. When `approve` rejects, `extract` rejects with its error.
   * `tenant` (the user's id) is whose document it is: one user keeps at most `userConcurrency` threads busy.
   */
  extract(data: Uint8Array, options?: ExtractOptions): Promise<PdfOutcome>;
  /**
   * Renders the given 1-based pages as grey bitmaps, the page rotation applied, for OCR. `data` is
   * copied. Rejects with a PdfRenderError when the document or a page cannot be rendered in time.
   */
  renderPages(data: Uint8Array, pages: number[], options?: RenderOptions): Promise<RenderedPage[]>;
  /** Threads, documents being worked on and documents waiting (read by the metrics at scrape time). */
  stats?(): { threads: number; busy: number; queued: number; heldBytes: number };
  /** The per-user bound and the waits it caused (once the threads have started). */
  fairness?(): FairLimiterStats | undefined;
  /** Waits for running documents, then stops the threads. */
  close(): Promise<void>;
}

export interface ExtractOptions {
  signal?: AbortSignal;
  approve?: (pageCount: number) => Promise<void>;
  tenant?: string;
}

export const PDF_EXTRACTOR_DEFAULTS = {
  timeoutMs: 60_000,
  maxPages: 30,
  maxHeapMb: 1024,
  maxMemoryMb: 512,
  memoryHighWaterMb: 128,
  queuePerThread: 128,
  maxQueueBytes: 256 * 2 ** 20,
} as const;

/**
 * The smallest heap limit accepted. Below a few MB V8 cannot even start the thread and aborts the
 * whole process (a fatal error, not a catchable one). 64 MB leaves room for the engine's wrapper.
 */
export const MIN_PDF_HEAP_MB = 64;

/** PDFium starts with 18 MB of memory; below 64 MB ordinary documents would not open. */
export const MIN_PDF_MEMORY_MB = 64;

/** Largest bitmap rendered for OCR: 50 megapixels (a 300 dpi A0 page is 140). */
const MAX_RENDER_PIXELS = 50_000_000;

const WORKER_FILE = new URL('./worker.ts', import.meta.url).href;

export function createPdfExtractor(options: PdfExtractorOptions = {}): PdfExtractor {
  const threads = options.threads ?? os.availableParallelism() + 1;
  const timeoutMs = options.timeoutMs ?? PDF_EXTRACTOR_DEFAULTS.timeoutMs;
  const maxPages = options.maxPages ?? PDF_EXTRACTOR_DEFAULTS.maxPages;
  const maxHeapMb = options.maxHeapMb ?? PDF_EXTRACTOR_DEFAULTS.maxHeapMb;
  const maxMemoryMb = options.maxMemoryMb ?? PDF_EXTRACTOR_DEFAULTS.maxMemoryMb;
  const highWaterMb = options.memoryHighWaterMb ?? Math.min(PDF_EXTRACTOR_DEFAULTS.memoryHighWaterMb, maxMemoryMb);
  const maxQueue = options.maxQueue ?? threads * PDF_EXTRACTOR_DEFAULTS.queuePerThread;
  const maxQueueBytes = options.maxQueueBytes ?? PDF_EXTRACTOR_DEFAULTS.maxQueueBytes;
  if (!(Number.isInteger(maxQueue) && maxQueue >= 1)) throw new RangeError(`maxQueue must be an integer ≥ 1 (got ${maxQueue})`);
  if (!(maxQueueBytes > 0)) throw new RangeError(`maxQueueBytes must be > 0 (got ${maxQueueBytes})`);
  const userConcurrency = options.userConcurrency ?? defaultPerTenant(threads);
  if (!(Number.isInteger(userConcurrency) && userConcurrency >= 1)) throw new RangeError(`userConcurrency must be an integer ≥ 1 (got ${userConcurrency})`);
  if (!Number.isInteger(threads) || threads < 1) throw new RangeError(`threads must be an integer ≥ 1 (got ${threads})`);
  if (!(timeoutMs > 0)) throw new RangeError(`timeoutMs must be > 0 (got ${timeoutMs})`);
  if (!(maxPages >= 0)) throw new RangeError(`maxPages must be ≥ 0 (got ${maxPages})`);
  if (!(maxHeapMb >= MIN_PDF_HEAP_MB)) throw new RangeError(`maxHeapMb must be ≥ ${MIN_PDF_HEAP_MB} (got ${maxHeapMb})`);
  // WebAssembly (32-bit) memory stops at 4 GB; this build's runtime at 2 GB.
  if (!(maxMemoryMb >= MIN_PDF_MEMORY_MB && maxMemoryMb <= 2048)) {
    throw new RangeError(`maxMemoryMb must be between ${MIN_PDF_MEMORY_MB} and 2048 (got ${maxMemoryMb})`);
  }
  if (!(highWaterMb > 0 && highWaterMb <= maxMemoryMb)) throw new RangeError(`memoryHighWaterMb must be > 0 and ≤ maxMemoryMb (got ${highWaterMb})`);

  const limits: EngineLimits = { maxMemoryBytes: maxMemoryMb * 2 ** 20, highWaterBytes: highWaterMb * 2 ** 20 };
  // The threads start once PDFium is compiled (once per process), and receive the compiled module.
  const starting = compiledPdfium().then((pdfium) =>
    createTaskThreads<PdfTask, PdfTaskResult>({
      filename: WORKER_FILE,
      workerData: { limits, pdfium },
      threads,
      timeoutMs,
      maxHeapMb,
      // A small young generation: a document's garbage is short-lived, and V8's default lets each
      // thread's nursery creep up for thousands of documents (RSS +24 % from 100 to 1,000
      // extractions; +9 % with 8 MB, at the same pages per CPU-second, bench/pdf.ts).
      maxYoungGenerationMb: 8,
      maxQueue,
      maxQueueBytes,
      perTenant: userConcurrency,
      name: 'pdf',
      leases: options.leases,
    }),
  );
  starting.catch(() => undefined); // reported by the first task and by close()
  let startedPool: TaskThreads<PdfTask, PdfTaskResult> | undefined;
  void starting.then((pool) => (startedPool = pool), () => undefined);

  /**
   * Runs one task with the time limit; `timeout` when it passes, the caller's reason on abort.
   * The answer's shape follows the task's `op` (see worker.ts), which the callers below rely on.
   * A thread whose engine must go (ceiling hit, trap, memory past the high-water mark) retires
   * with its answer, and the pool replaces it.
   */
  async function run(
    task: PdfTask,
    signal: AbortSignal | undefined,
    admit: { admits: boolean; onProgress?: (value: unknown) => void; tenant?: string },
  ): Promise<PdfTaskResult | { kind: 'timeout' }> {
    signal?.throwIfAborted();
    const pool = await starting;
    // An admitting task (a count, or an extraction that asks for approval) holds the document's
    // weight; the extraction or rendering that follows a count continues it.
    const outcome = await pool.run(task, {
      signal,
      transferList: [task.data.buffer as ArrayBuffer],
      continuation: !admit.admits,
      weight: admit.admits ? documentWeight(task.data.byteLength) : 0,
      onProgress: admit.onProgress,
      tenant: admit.tenant,
    });
    if (outcome.kind === 'done') return outcome.result;
    if (outcome.kind === 'time_limit') return { kind: 'timeout' };
    if (outcome.kind === 'queue_full') throw new PdfBusyError(maxQueue);
    // The thread hit its V8 heap limit: the document is a resource bomb, the pool has replaced it.
    return { kind: 'invalid', reason: `the document needs more than ${maxHeapMb} MB of heap` };
  }

  async function count(data: Uint8Array, signal?: AbortSignal, tenant?: string): Promise<PdfCount> {
    // A copy of just these bytes is moved: the caller keeps its buffer for `extract`, and a view
    // over a larger buffer does not drag that whole buffer along.
    return (await run({ op: 'count', data: new Uint8Array(data) }, signal, { admits: true, tenant })) as PdfCount;
  }

  async function extract(data: Uint8Array, options: ExtractOptions = {}): Promise<PdfOutcome> {
    const { approve, signal, tenant } = options;
    if (!approve) return (await run({ op: 'extract', data: ownedBytes(data), maxPages }, signal, { admits: false, tenant })) as PdfOutcome;
    const gate = new Int32Array(new SharedArrayBuffer(4));
    // The thread reads the gate once: the first answer is the one that counts, and waking it costs
    // a futex call, so later ones (an abort after the approval, the final stop) are not sent.
    let answered = false;
    const answer = (value: 1 | 2) => {
      if (answered) return;
      answered = true;
      Atomics.store(gate, 0, value);
      Atomics.notify(gate, 0);
    };
    let refusal: { error: unknown } | undefined;
    let approval: Promise<void> = Promise.resolve();
    const onProgress = (pageCount: unknown) => {
      approval = approve(pageCount as number).then(
        () => answer(1),
        (error: unknown) => {
          refusal = { error };
          answer(2);
        },
      );
    };
    // An abort ends the thread; the waiting thread is also told to stop, in case it is still waiting.
    const stop = () => answer(2);
    signal?.addEventListener('abort', stop, { once: true });
    try {
      const outcome = await run({ op: 'extract', data: ownedBytes(data), maxPages, gate }, signal, { admits: true, onProgress, tenant });
      await approval;
      if (refusal) throw refusal.error;
      if (outcome.kind === 'declined') throw new Error('the PDF thread stopped without an approval');
      return outcome as PdfOutcome;
    } finally {
      signal?.removeEventListener('abort', stop);
      answer(2); // a thread that timed out while waiting never reads it; harmless otherwise
    }
  }

  async function renderPages(data: Uint8Array, pages: number[], options: RenderOptions = {}): Promise<RenderedPage[]> {
    const dpi = options.dpi ?? 300;
    if (!(dpi > 0 && dpi <= 1200)) throw new RangeError(`dpi must be > 0 and ≤ 1200 (got ${dpi})`);
    if (pages.length === 0) return [];
    const outcome = await run({ op: 'render', data: new Uint8Array(data), pages, dpi, maxPixels: MAX_RENDER_PIXELS }, options.signal, { admits: false, tenant: options.tenant });
    // The worker answers a render with `rendered` or with the reason it could not open the file.
    if (outcome.kind === 'rendered') return outcome.pages;
    if (outcome.kind === 'encrypted') throw new PdfRenderError('encrypted', 'the PDF needs a password');
    if (outcome.kind === 'invalid') throw new PdfRenderError('invalid', `the PDF cannot be rendered: ${outcome.reason}`);
    if (outcome.kind === 'timeout') throw new PdfRenderError('timeout', 'rendering took longer than the time limit');
    throw new Error(`unexpected answer to a render: ${outcome.kind}`);
  }

  return {
    count,
    // Before the threads have started nothing waits yet.
    hasCapacity: (byteLength = 0) => startedPool?.hasCapacity(byteLength ? documentWeight(byteLength) : 0) ?? true,
    extract,
    renderPages,
    stats: () => startedPool?.stats() ?? { threads, queued: 0, busy: 0, heldBytes: 0 },
    fairness: () => startedPool?.fairness(),
    close: async () => (await starting).close(),
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
