/**
 * Where /v1/web's work on a page's HTML runs (extraction rules, selectors, Markdown, text,
 * links): a small pool of child processes, so a large page is never parsed on the event loop
 * that serves every other request (a 1 MB page takes a few hundred ms of CPU, docs/web.md), and
 * a page that overflows the heap limit takes down only its process, never the server
 * (task-processes.ts says why not threads). Each conversion has a time limit, counted from the
 * moment a process starts on it; past it the process is killed (and replaced) and the conversion
 * ends as `time_limit`. A caller that aborts (the client went away) takes its task out of the
 * queue, or ends the process running it.
 */
import { createTaskProcesses } from '../../core/task-processes.ts';
import { defaultPerTenant, type FairLimiterStats, type TenantLeases } from '../../core/fair-limiter.ts';
import { convertPage, type ConvertedPage, type ConvertOptions } from './formats.ts';

/**
 * One page and what to make of it (formats.ts `ConvertOptions`): `raw` converts no content (only
 * the links, the rules and the selectors, when asked); `onlyMainContent` and `linksInline`
 * default to true.
 */
export interface ConvertTask extends ConvertOptions {
  html: string;
  /** The page's final URL: links are made absolute against it. */
  pageUrl: string;
}

/**
 * `time_limit` and `out_of_memory` say the page is too large or too complex to convert;
 * `queue_full` that too many pages already wait for a process (the server is overloaded).
 */
export type ConvertOutcome = { kind: 'ok'; page: ConvertedPage } | { kind: 'time_limit' } | { kind: 'out_of_memory' } | { kind: 'queue_full' };

export interface PageConverter {
  /**
   * Rejects only when `signal` aborts (with its reason) or the pool is unusable (closed, broken).
   * `tenant` (the user's id) is whose page it is: one user keeps at most `perTenant` processes busy.
   */
  convert(task: ConvertTask, signal?: AbortSignal, tenant?: string): Promise<ConvertOutcome>;
  /** Whether a page would be queued now rather than refused as `queue_full` (checked before fetching one). */
  hasCapacity(): boolean;
  /**
   * Processes, conversions running, conversions waiting, and processes recycled past the memory
   * high-water mark (none for the inline converter).
   */
  stats(): { processes: number; busy: number; queued: number; recycled: number };
  /** The per-user bound and the waits it caused (none for the inline converter). */
  fairness?(): FairLimiterStats;
  /** Waits for running conversions, then stops the processes. */
  close(): Promise<void>;
}

export interface PageConverterOptions {
  /** Conversion processes, all started with the pool. Default 2. */
  processes?: number;
  /** Time limit of one conversion, from the moment a process starts on it. Default 30 s. */
  timeoutMs?: number;
  /** V8 heap limit of each process; a page that needs more ends as `out_of_memory`. Default 1024 MB. */
  maxHeapMb?: number;
  /**
   * Pages allowed to wait for a process (each holds its HTML, up to the 10 MB page cap); past it a
   * conversion is `queue_full`. Default 16 per process.
   */
  maxQueue?: number;
  /** Processes one user may keep busy at once (POOL_USER_CONCURRENCY). Default: half the processes, at least 1. */
  userConcurrency?: number;
  /** Shared per-user leases, so the bound holds across replicas (scaled mode). */
  leases?: TenantLeases;
}

export const PAGE_CONVERTER_DEFAULTS = {
  processes: 2,
  timeoutMs: 30_000,
  maxHeapMb: 1024,
  /**
   * Past this resident memory after a page, a process is replaced: it holds about 110 MB idle,
   * 300-370 MB after 1 MB pages, and would keep the 900 MB an 8 MB page grew it to.
   */
  recycleAboveMb: 512,
  queuePerProcess: 16,
} as const;

/** Below this a process cannot load its modules and warm up reliably. */
export const MIN_CONVERTER_HEAP_MB = 64;

const WORKER_MODULE = new URL('./convert-process.ts', import.meta.url).href;

/**
 * A conversion makes millions of short-lived objects (nodes, strings). A process with a heap
 * limit starts each page with a young generation V8 has shrunk while it was idle, and pays for
 * growing it back in scavenges and promotions: 16 MB semi-spaces at the least convert a 1 MB
 * page 10-40 % faster (docs/web.md).
 */
const MIN_SEMI_SPACE_MB = 16;

export function createPageConverter(options: PageConverterOptions = {}): PageConverter {
  const processes = options.processes ?? PAGE_CONVERTER_DEFAULTS.processes;
  const timeoutMs = options.timeoutMs ?? PAGE_CONVERTER_DEFAULTS.timeoutMs;
  const maxHeapMb = options.maxHeapMb ?? PAGE_CONVERTER_DEFAULTS.maxHeapMb;
  if (!Number.isInteger(processes) || processes < 1) throw new RangeError(`processes must be an integer ≥ 1 (got ${processes})`);
  if (!(timeoutMs > 0)) throw new RangeError(`timeoutMs must be > 0 (got ${timeoutMs})`);
  if (!(maxHeapMb >= MIN_CONVERTER_HEAP_MB)) throw new RangeError(`maxHeapMb must be ≥ ${MIN_CONVERTER_HEAP_MB} (got ${maxHeapMb})`);
  const maxQueue = options.maxQueue ?? processes * PAGE_CONVERTER_DEFAULTS.queuePerProcess;
  if (!Number.isInteger(maxQueue) || maxQueue < 1) throw new RangeError(`maxQueue must be an integer ≥ 1 (got ${maxQueue})`);
  const userConcurrency = options.userConcurrency ?? defaultPerTenant(processes);
  if (!Number.isInteger(userConcurrency) || userConcurrency < 1) throw new RangeError(`userConcurrency must be an integer ≥ 1 (got ${userConcurrency})`);

  const pool = createTaskProcesses<ConvertTask, ConvertedPage>({
    module: WORKER_MODULE,
    processes,
    timeoutMs,
    maxHeapMb,
    minSemiSpaceMb: MIN_SEMI_SPACE_MB,
    recycleAboveMb: PAGE_CONVERTER_DEFAULTS.recycleAboveMb,
    maxQueue,
    perTenant: userConcurrency,
    name: 'web',
    leases: options.leases,
  });

  async function convert(task: ConvertTask, signal?: AbortSignal, tenant?: string): Promise<ConvertOutcome> {
    const outcome = await pool.run(task, { signal, tenant });
    return outcome.kind === 'done' ? { kind: 'ok', page: outcome.result } : outcome;
  }

  return { convert, hasCapacity: pool.hasCapacity, stats: pool.stats, fairness: pool.fairness, close: pool.close };
}

/**
 * Converts on the calling thread, without a time limit: for tests and tools that call the
 * scraper directly. The service always uses the pool.
 */
export const inlineConverter: PageConverter = {
  async convert(task, signal) {
    signal?.throwIfAborted();
    return { kind: 'ok', page: convertPage(task.html, task.pageUrl, task) };
  },
  hasCapacity: () => true,
  stats: () => ({ processes: 0, busy: 0, queued: 0, recycled: 0 }),
  close: async () => undefined,
};
