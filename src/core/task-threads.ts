/**
 * Worker threads for CPU-heavy work (PDF; /v1/web's page conversions run in child processes,
 * task-processes.ts, which says why): one task per thread, every thread
 * started with the pool, and a time limit counted from the moment a thread starts on a task, so
 * time spent queued behind other tasks does not count. Past the limit, or when the caller's signal
 * aborts, the task is aborted and piscina terminates exactly that thread and starts a fresh one:
 * a stuck task never blocks the pool. A thread whose V8 heap overflows is replaced the same way.
 *
 * A bounded queue refuses a new task, before it takes any memory in the queue, once `maxQueue`
 * tasks wait or once the tasks admitted and not yet answered hold `maxQueueBytes` (each task's
 * `weight`, an estimate of the memory it keeps until answered): the caller answers "busy" rather
 * than let waiting documents pile up. Counting alone shed bursts of tiny documents that would
 * have been served in seconds; bytes alone would let thousands of empty tasks wait. A task that
 * continues work already admitted (`continuation`) is never refused.
 *
 * The thread talks back over a port of its own, carried in the task: `taskStarted(port)` when it
 * begins, `taskProgress(port, value)` for what the caller wants to know before the answer, and
 * `retireWith(port, result)` when it answers but must not take another task (its memory has to
 * go): the pool hands the result over and ends that thread.
 */
import { MessageChannel, type MessagePort, type Transferable } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { FairLimiter, SYSTEM_TENANT, type FairLimiterStats, type TenantLeases } from './fair-limiter.ts';

/** A task as the thread receives it: the caller's task and its port back to the pool. */
export type PooledTask<T> = T & { port: MessagePort };

/** What a thread posts on its port. */
type TaskNotice<R> = { type: 'started' } | { type: 'progress'; value: unknown } | { type: 'retire'; result: R };

/** Thread side: the task has begun; its time limit starts now. */
export function taskStarted(port: MessagePort): void {
  port.postMessage({ type: 'started' } satisfies TaskNotice<never>);
}

/** Thread side: tells the caller's `onProgress` something before the answer. */
export function taskProgress(port: MessagePort, value: unknown): void {
  port.postMessage({ type: 'progress', value } satisfies TaskNotice<never>);
}

/** Thread side: answer with `result`, and have this thread ended and replaced. Never settles. */
export function retireWith<R>(port: MessagePort, result: R): Promise<never> {
  port.postMessage({ type: 'retire', result } satisfies TaskNotice<R>);
  return new Promise<never>(() => undefined);
}

export type TaskRun<R> = { kind: 'done'; result: R } | { kind: 'time_limit' } | { kind: 'out_of_memory' } | { kind: 'queue_full' };

export interface RunOptions {
  signal?: AbortSignal;
  transferList?: Transferable[];
  /** The task continues work already admitted: it is never refused as `queue_full`. */
  continuation?: boolean;
  /** Bytes the task keeps in memory until it is answered, counted against `maxQueueBytes`. */
  weight?: number;
  /** Called with each value the thread sends with `taskProgress`. */
  onProgress?: (value: unknown) => void;
  /** Whose task it is (a user id): the per-tenant bound and the turns are counted by it. */
  tenant?: string;
}

export interface TaskThreadsOptions {
  /** The worker module (a URL or path); its default export runs one `PooledTask`. */
  filename: string;
  threads: number;
  timeoutMs: number;
  /** V8 old-generation limit of each thread; a task that needs more ends as `out_of_memory`. */
  maxHeapMb: number;
  /** V8 young-generation limit of each thread (V8's default when absent). */
  maxYoungGenerationMb?: number;
  /** Tasks allowed to wait for a thread; past it a new task is `queue_full`. Unbounded when absent. */
  maxQueue?: number;
  /**
   * Weight (bytes) that admitted, unanswered tasks may hold together; a new task that would pass it
   * is `queue_full`, unless nothing is held (a lone task larger than the bound is still served).
   * Unbounded when absent.
   */
  maxQueueBytes?: number;
  workerData?: unknown;
  /**
   * Threads one tenant (user) may keep busy at once; its further tasks wait in its own queue, and
   * the waiting tenants are served in turn (fair-limiter.ts). No bound when absent.
   */
  perTenant?: number;
  /** The pool's name for the shared leases. */
  name?: string;
  /** Shared per-tenant leases, so the bound holds across replicas (scaled mode). */
  leases?: TenantLeases;
}

export interface TaskThreads<T, R> {
  /**
   * Runs `task` on a thread. Resolves with the result, `time_limit`, `out_of_memory` or (at once,
   * nothing queued) `queue_full`; rejects with the signal's reason when `signal` aborts, or when
   * the thread fails otherwise.
   */
  run(task: T, options?: RunOptions): Promise<TaskRun<R>>;
  /** Whether a new task (of `weight` bytes, 0 when unknown yet) would be queued now rather than refused as `queue_full`. */
  hasCapacity(weight?: number): boolean;
  /** Threads, tasks running and tasks waiting, and the weight they hold. */
  stats(): { threads: number; busy: number; queued: number; heldBytes: number };
  /** The fair admission's figures: per-tenant bound, tasks waiting, waits at the bound. */
  fairness(): FairLimiterStats;
  /** Waits for running tasks, then stops the threads. */
  close(): Promise<void>;
}

export function createTaskThreads<T extends object, R>(options: TaskThreadsOptions): TaskThreads<T, R> {
  const { threads, timeoutMs, maxQueue = Infinity, maxQueueBytes = Infinity } = options;
  if (!(maxQueue >= 0)) throw new RangeError(`maxQueue must be ≥ 0 (got ${maxQueue})`);
  if (!(maxQueueBytes > 0)) throw new RangeError(`maxQueueBytes must be > 0 (got ${maxQueueBytes})`);
  const pool = new Piscina<PooledTask<T>, R>({
    filename: options.filename,
    workerData: options.workerData,
    // Every thread starts with the pool and stays: a thread started on demand would make its
    // first task wait for the thread's modules (and engines) to load.
    minThreads: threads,
    maxThreads: threads,
    // One task per thread: a time limit or abort terminates the whole thread, which would take an
    // unrelated task down with it.
    concurrentTasksPerWorker: 1,
    atomics: 'async',
    resourceLimits: {
      maxOldGenerationSizeMb: options.maxHeapMb,
      ...(options.maxYoungGenerationMb === undefined ? {} : { maxYoungGenerationSizeMb: options.maxYoungGenerationMb }),
    },
  });
  // Admission: at most one task per thread goes to piscina, whose own queue is a plain FIFO; who
  // goes next is the limiter's choice, by tenant in turn.
  const admission = new FairLimiter({ capacity: threads, perTenant: options.perTenant, name: options.name, leases: options.leases });
  /** Tasks submitted and not yet answered (queued or on a thread), for `stats`. */
  let running = 0;
  /** Weight held by the tasks submitted and not yet answered. */
  let heldBytes = 0;

  /** Tasks submitted and waiting for a thread (piscina counts them once they are in its queue). */
  const waiting = (): number => Math.max(0, running - threads);
  const hasCapacity = (weight = 0): boolean => waiting() < maxQueue && (heldBytes === 0 || heldBytes + weight <= maxQueueBytes);

  async function run(task: T, { signal, transferList = [], continuation = false, weight = 0, onProgress, tenant = SYSTEM_TENANT }: RunOptions = {}): Promise<TaskRun<R>> {
    signal?.throwIfAborted();
    if (!continuation && !hasCapacity(weight)) return { kind: 'queue_full' };
    running++;
    heldBytes += weight;
    const timeLimit = new AbortController();
    // Aborting a retiring thread's task is how piscina is told to end that very thread.
    const retire = new AbortController();
    let retiredWith: { result: R } | undefined;
    const abort = AbortSignal.any(signal ? [timeLimit.signal, retire.signal, signal] : [timeLimit.signal, retire.signal]);
    const { port1: notices, port2: port } = new MessageChannel();
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    let admitted: (() => void) | undefined;
    notices.on('message', (notice: TaskNotice<R>) => {
      if (settled) return; // the answer and the notices travel on different ports: a quick task may be answered first
      if (notice.type === 'started') {
        timer = setTimeout(() => timeLimit.abort(new Error('task time limit reached')), timeoutMs);
      } else if (notice.type === 'progress') {
        onProgress?.(notice.value);
      } else {
        retiredWith = { result: notice.result };
        retire.abort(new Error('task thread retired'));
      }
    });
    try {
      // A continuation goes first in its tenant's queue: its document is already admitted and held.
      admitted = await admission.acquire(tenant, { signal, front: continuation });
      const result = await pool.run({ ...task, port }, { signal: abort, transferList: [...transferList, port] });
      return { kind: 'done', result };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (retiredWith) return { kind: 'done', result: retiredWith.result };
      if (timeLimit.signal.aborted) return { kind: 'time_limit' };
      // The thread hit its V8 heap limit; piscina has replaced it.
      if ((error as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY') return { kind: 'out_of_memory' };
      throw error;
    } finally {
      settled = true;
      admitted?.();
      running--;
      heldBytes -= weight;
      clearTimeout(timer);
      notices.close();
    }
  }

  return {
    run,
    hasCapacity,
    stats: () => {
      const queued = pool.queueSize + admission.queued;
      return { threads, queued, busy: Math.max(0, running - queued), heldBytes };
    },
    fairness: () => admission.stats(),
    close: () => pool.close(),
  };
}
