import type { Worker as TesseractWorker } from 'tesseract.js';
import { spawnEngine } from './engine.ts';
import { OcrBusyError, OcrClosedError } from './outcome.ts';
import { FairLimiter, SYSTEM_TENANT, type FairLimiterStats, type TenantLeases } from '../../core/fair-limiter.ts';

/**
 * Pre-warmed OCR engines fed from one FIFO queue. Each engine sits in a lane that can replace it:
 * a job past its time limit is stopped by terminating the engine's thread (the WebAssembly
 * recognition cannot be interrupted otherwise), a failed or crashed engine is replaced, and an
 * engine is recycled after a number of jobs to bound the memory a long-lived WebAssembly heap
 * accumulates.
 *
 * tesseract.js's own createScheduler is not used: it has no way to remove a worker, and the job
 * of a terminated worker never settles, so the scheduler would keep a dead worker marked busy
 * (and the job's image in memory) for good.
 */

export interface PoolOptions {
  /** Engines running in parallel (each one a worker thread using one core). */
  workers: number;
  /** An engine is replaced by a fresh one after this many jobs. */
  recycleAfter: number;
  /** Jobs allowed to wait for an engine; past it, recognize() throws OcrBusyError. */
  maxQueue: number;
  /**
   * Engines one tenant (user) may keep busy at once; its further jobs wait in its own queue, and
   * the waiting tenants are served in turn (core/fair-limiter.ts). No bound when absent.
   */
  perTenant?: number;
  /** Shared per-tenant leases, so the bound holds across replicas (scaled mode). */
  leases?: TenantLeases;
}

export interface PassRequest {
  /** An image the engine reads (engineImage() of a normalised image). */
  image: Uint8Array;
  /** Time limit for the recognition itself, queue wait excluded. */
  timeoutMs: number;
  /** Aborting rejects with signal.reason; a running job's engine is terminated and replaced. */
  signal?: AbortSignal;
  /** A further pass of an admitted request: queued first and never refused as over capacity. */
  continuation?: boolean;
  /** Whose image it is (the user's id), for the per-user bound. */
  tenant?: string;
}

export type PassResult =
  | { kind: 'ok'; text: string; confidence: number; tsv: string; elapsedMs: number }
  | { kind: 'timeout' }
  | { kind: 'failed'; reason: string };

export interface PoolStats {
  workers: number;
  /** Engines loaded and waiting for a job. */
  idle: number;
  queued: number;
  /** Engines started, including the first ones. */
  started: number;
  /** Engines replaced after their job quota. */
  recycled: number;
  /** Engines replaced after a timeout, abort, failure or crash. */
  replaced: number;
}

export interface OcrPool {
  /** Starts and loads every engine; resolves when all are ready. Rejects if one cannot start. */
  warm(): Promise<void>;
  /** Whether a new request would be queued now rather than refused. */
  hasCapacity(): boolean;
  recognize(request: PassRequest): Promise<PassResult>;
  stats(): PoolStats;
  /** The per-user bound and the waits it caused. */
  fairness(): FairLimiterStats;
  /** Refuses new work, rejects waiting and running jobs with OcrClosedError, stops every engine. */
  close(): Promise<void>;
}

export type SpawnEngine = (onCrash: (reason: string) => void) => Promise<TesseractWorker>;

type Attempt = PassResult | { kind: 'aborted' } | { kind: 'closed' };

interface Lane {
  engine: TesseractWorker | null;
  /** Running a job, or starting its engine. */
  busy: boolean;
  jobsOnEngine: number;
  /** Ends the running job early (crash, close). */
  interrupt: ((attempt: Attempt) => void) | null;
  starting: Promise<void> | null;
  retryTimer: NodeJS.Timeout | null;
}

interface Job {
  request: PassRequest;
  settle: (result: PassResult) => void;
  fail: (error: unknown) => void;
  leaveQueue: () => void;
}

/** Delay before starting an engine again after a start failed (a restart after warm() succeeded). */
const RESTART_RETRY_MS = 1_000;

export function createOcrPool(options: PoolOptions, spawn: SpawnEngine = spawnEngine): OcrPool {
  const lanes: Lane[] = Array.from({ length: options.workers }, () => ({
    engine: null,
    busy: false,
    jobsOnEngine: 0,
    interrupt: null,
    starting: null,
    retryTimer: null,
  }));
  // Admission: at most one job per engine reaches the queue below; who goes next is the
  // limiter's choice, by tenant in turn, a further pass first in its tenant's line.
  const admission = new FairLimiter({ capacity: options.workers, perTenant: options.perTenant, name: 'ocr', leases: options.leases });
  const queue: Job[] = [];
  const counters = { started: 0, recycled: 0, replaced: 0 };
  let warming: Promise<void> | null = null;
  let closed = false;

  function startEngine(lane: Lane): Promise<void> {
    lane.busy = true;
    let engine: TesseractWorker | null = null;
    const starting = spawn((reason) => {
      if (engine && lane.engine === engine) onEngineCrash(lane, reason);
    }).then(
      (started) => {
        engine = started;
        lane.starting = null;
        counters.started += 1;
        if (closed) {
          void started.terminate();
          return;
        }
        lane.engine = started;
        lane.jobsOnEngine = 0;
        lane.busy = false;
        pump();
      },
      (error: unknown) => {
        lane.starting = null;
        lane.busy = false;
        throw error;
      },
    );
    lane.starting = starting;
    return starting;
  }

  /** Replacement after warm-up: retried until it works, as the lane would otherwise be lost. */
  function restartEngine(lane: Lane): void {
    startEngine(lane).catch(() => {
      if (closed) return;
      lane.busy = true;
      lane.retryTimer = setTimeout(() => {
        lane.retryTimer = null;
        if (!closed) restartEngine(lane);
      }, RESTART_RETRY_MS);
      lane.retryTimer.unref();
    });
  }

  function replaceEngine(lane: Lane, engine: TesseractWorker): void {
    lane.engine = null;
    void engine.terminate();
    restartEngine(lane);
  }

  function onEngineCrash(lane: Lane, reason: string): void {
    const engine = lane.engine;
    if (!engine || closed) return;
    if (lane.interrupt) {
      // The running job ends as failed; its completion replaces the engine.
      lane.interrupt({ kind: 'failed', reason: `the OCR engine crashed: ${reason}` });
      return;
    }
    counters.replaced += 1;
    replaceEngine(lane, engine);
  }

  function pump(): void {
    if (closed) return;
    for (const lane of lanes) {
      if (queue.length === 0) return;
      if (lane.busy || !lane.engine) continue;
      const job = queue.shift()!;
      job.leaveQueue();
      void run(lane, lane.engine, job);
    }
  }

  async function run(lane: Lane, engine: TesseractWorker, job: Job): Promise<void> {
    lane.busy = true;
    const attempt = await attemptOn(lane, engine, job.request);
    lane.jobsOnEngine += 1;

    if (attempt.kind === 'aborted') job.fail(job.request.signal?.reason);
    else if (attempt.kind === 'closed') job.fail(new OcrClosedError());
    else job.settle(attempt);

    if (closed) return;
    if (attempt.kind !== 'ok') {
      // Stopped mid-recognition or failed: the engine's state cannot be trusted any more.
      counters.replaced += 1;
      replaceEngine(lane, engine);
    } else if (lane.jobsOnEngine >= options.recycleAfter) {
      counters.recycled += 1;
      replaceEngine(lane, engine);
    } else {
      lane.busy = false;
      pump();
    }
  }

  function attemptOn(lane: Lane, engine: TesseractWorker, request: PassRequest): Promise<Attempt> {
    return new Promise((resolve) => {
      const startedAt = performance.now();
      let timer: NodeJS.Timeout | undefined;
      let done = false;
      const finish = (attempt: Attempt): void => {
        if (done) return;
        done = true;
        if (lane.interrupt === finish) lane.interrupt = null;
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
        resolve(attempt);
      };
      const onAbort = (): void => finish({ kind: 'aborted' });

      if (request.signal?.aborted) return finish({ kind: 'aborted' });
      timer = setTimeout(() => finish({ kind: 'timeout' }), request.timeoutMs);
      request.signal?.addEventListener('abort', onAbort, { once: true });
      lane.interrupt = finish;
      engine.recognize(request.image, {}, { text: true, tsv: true }).then(
        ({ data }) =>
          finish({
            kind: 'ok',
            text: data.text,
            confidence: data.confidence,
            tsv: data.tsv ?? '',
            elapsedMs: performance.now() - startedAt,
          }),
        (error: unknown) => finish({ kind: 'failed', reason: String(error) }),
      );
    });
  }

  function warm(): Promise<void> {
    if (closed) return Promise.reject(new OcrClosedError());
    // Lanes already running, starting, or waiting to retry a start are left as they are.
    const startLane = (lane: Lane) => lane.starting ?? (lane.engine || lane.retryTimer ? undefined : startEngine(lane));
    warming ??= Promise.all(lanes.map(startLane))
      .then(() => {})
      .catch((error: unknown) => {
        // A later call tries again (the lanes that did start keep their engine).
        warming = null;
        throw error;
      });
    return warming;
  }

  function hasCapacity(): boolean {
    return !closed && queue.length + admission.queued < options.maxQueue;
  }

  async function recognize(request: PassRequest): Promise<PassResult> {
    await warm();
    if (closed) throw new OcrClosedError();
    request.signal?.throwIfAborted();
    const waiting = queue.length + admission.queued;
    if (!request.continuation && waiting >= options.maxQueue) throw new OcrBusyError(waiting);
    const admitted = await admission.acquire(request.tenant ?? SYSTEM_TENANT, { signal: request.signal, front: request.continuation });
    if (closed) {
      admitted();
      throw new OcrClosedError();
    }

    return new Promise<PassResult>((settle, fail) => {
      const resolve = (result: PassResult): void => {
        admitted();
        settle(result);
      };
      const reject = (error: unknown): void => {
        admitted();
        fail(error);
      };
      const signal = request.signal;
      if (signal?.aborted) return reject(signal.reason);
      const onQueuedAbort = (): void => {
        const index = queue.indexOf(job);
        if (index >= 0) queue.splice(index, 1);
        reject(signal?.reason);
      };
      const job: Job = {
        request,
        settle: resolve,
        fail: reject,
        leaveQueue: () => signal?.removeEventListener('abort', onQueuedAbort),
      };
      signal?.addEventListener('abort', onQueuedAbort, { once: true });
      if (request.continuation) queue.unshift(job);
      else queue.push(job);
      pump();
    });
  }

  function stats(): PoolStats {
    return {
      workers: lanes.length,
      idle: lanes.filter((lane) => lane.engine && !lane.busy).length,
      queued: queue.length + admission.queued,
      ...counters,
    };
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    admission.rejectAll(new OcrClosedError());
    for (const job of queue.splice(0)) {
      job.leaveQueue();
      job.fail(new OcrClosedError());
    }
    for (const lane of lanes) {
      lane.interrupt?.({ kind: 'closed' });
      if (lane.retryTimer) clearTimeout(lane.retryTimer);
    }
    // Engines still starting terminate themselves once started (see startEngine).
    await Promise.all(lanes.map((lane) => lane.starting?.catch(() => {})));
    await Promise.all(
      lanes.map((lane) => {
        const engine = lane.engine;
        lane.engine = null;
        return engine?.terminate();
      }),
    );
  }

  return { warm, hasCapacity, recognize, stats, fairness: () => admission.stats(), close };
}
