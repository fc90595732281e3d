/**
 * Child processes for CPU-heavy work on hostile input (page conversion): the same contract as
 * task-threads.ts (one task per worker, every worker started with the pool, a time limit counted
 * from the moment a worker starts on a task, aborts that end the worker at work, a bounded queue),
 * but each worker is a process of its own.
 *
 * Why processes and not threads: V8 enforces a worker thread's heap limit by terminating the
 * thread only when the overflowing allocation fits in a small allowance; a larger one (a big
 * string or array, which is just what a huge page makes) aborts the whole process, server
 * included (nodejs/node#47224, still open). A process that overflows its `--max-old-space-size`
 * takes only itself down: the pool reads the cause from its last words on stderr, answers
 * `out_of_memory` and starts a fresh one.
 *
 * The worker module's default export runs one task (sync or async); task-process-main.ts loads it.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TaskRun } from './task-threads.ts';
import type { ChildMessage, ParentMessage } from './task-process-main.ts';
import { FairLimiter, SYSTEM_TENANT, type FairLimiterStats, type TenantLeases } from './fair-limiter.ts';

export interface TaskProcessesOptions {
  /** The worker module (a file URL); its default export runs one task. */
  module: string;
  processes: number;
  timeoutMs: number;
  /** V8 old-generation limit of each process (`--max-old-space-size`); past it: `out_of_memory`. */
  maxHeapMb: number;
  /** Smallest V8 young-generation semi-space of each process (`--min-semi-space-size`); V8's default when absent. */
  minSemiSpaceMb?: number;
  /**
   * A process whose resident memory is past this many MB after a task leaves once it has
   * answered, and a fresh one takes its place: V8 never gives back the heap a large task grew.
   * None when absent.
   */
  recycleAboveMb?: number;
  /** Tasks allowed to wait for a process; past it a new task is `queue_full`. Unbounded when absent. */
  maxQueue?: number;
  /**
   * Processes one tenant (user) may keep busy at once; its further tasks wait in its own queue,
   * and the waiting tenants are served in turn (fair-limiter.ts). No bound when absent.
   */
  perTenant?: number;
  /** The pool's name for the shared leases. */
  name?: string;
  /** Shared per-tenant leases, so the bound holds across replicas (scaled mode). */
  leases?: TenantLeases;
}

export interface RunTaskOptions {
  signal?: AbortSignal;
  /** Whose task it is (a user id): the per-tenant bound and the turns are counted by it. */
  tenant?: string;
}

export interface TaskProcesses<T, R> {
  /**
   * Runs `task` in a process. Resolves with the result, `time_limit`, `out_of_memory` or (at once,
   * nothing queued) `queue_full`; rejects with the signal's reason when `signal` aborts, or when
   * the task fails otherwise (it threw, or its process died of something else than memory).
   */
  run(task: T, options?: RunTaskOptions): Promise<TaskRun<R>>;
  /** Whether a new task would be queued now rather than refused as `queue_full`. */
  hasCapacity(): boolean;
  /** Processes, tasks running, tasks waiting, and processes recycled past the memory high-water mark. */
  stats(): { processes: number; busy: number; queued: number; recycled: number };
  /** The fair admission's figures: per-tenant bound, tasks waiting, waits at the bound. */
  fairness(): FairLimiterStats;
  /** Waits for running and queued tasks, then stops the processes. */
  close(): Promise<void>;
}

const MAIN_FILE = fileURLToPath(new URL('./task-process-main.ts', import.meta.url));
/** What V8 prints when a heap overflows, whichever check caught it. */
const OUT_OF_MEMORY = /JavaScript heap out of memory/;
/** Enough of a dying process's stderr to hold V8's message and say what else went wrong. */
const STDERR_TAIL_CHARS = 8 * 1024;
/** A process that dies before it is ready (its module does not load) is not restarted in a loop. */
const RESTART_DELAY_MS = 1_000;
/** A process that does not leave once disconnected at close is killed after this. */
const CLOSE_GRACE_MS = 2_000;

interface Job<T, R> {
  id: number;
  task: T;
  settle(run: TaskRun<R>): void;
  fail(error: unknown): void;
}

interface Worker<T, R> {
  child: ChildProcess;
  ready: boolean;
  /** Set once the pool has let go of this process (killed, ended, or replaced). */
  gone: boolean;
  job?: Job<T, R>;
  timer?: NodeJS.Timeout;
  stderrTail: string;
  exited: Promise<void>;
}

export function createTaskProcesses<T, R>(options: TaskProcessesOptions): TaskProcesses<T, R> {
  const { processes, timeoutMs, maxHeapMb, maxQueue = Infinity } = options;
  if (!Number.isInteger(processes) || processes < 1) throw new RangeError(`processes must be an integer ≥ 1 (got ${processes})`);
  if (!(maxQueue >= 0)) throw new RangeError(`maxQueue must be ≥ 0 (got ${maxQueue})`);

  const workers = new Set<Worker<T, R>>();
  // Admission: at most one task per process is let through, so the queue below never holds more
  // than the processes can start; who goes next is the limiter's choice, by tenant in turn.
  const admission = new FairLimiter({ capacity: processes, perTenant: options.perTenant, name: options.name, leases: options.leases });
  const queue: Job<T, R>[] = [];
  let nextId = 1;
  let running = 0;
  /** Processes that left past the memory high-water mark, for `stats`. */
  let recycled = 0;
  let closing = false;
  let closed = false;
  let drained: (() => void) | undefined;

  function start(): void {
    const child = fork(MAIN_FILE, [options.module, String(options.recycleAboveMb ?? 0)], {
      // Only the heap sizes: the parent's flags (a test runner's, an inspector's) are not the worker's.
      execArgv: [`--max-old-space-size=${maxHeapMb}`, ...(options.minSemiSpaceMb === undefined ? [] : [`--min-semi-space-size=${options.minSemiSpaceMb}`])],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    });
    let exited!: () => void;
    const worker: Worker<T, R> = { child, ready: false, gone: false, stderrTail: '', exited: new Promise((resolve) => (exited = resolve)) };
    workers.add(worker);
    holdOpen(worker, running > 0);
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      worker.stderrTail = (worker.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
    });
    child.on('message', (message: ChildMessage<R>) => {
      if (message.type === 'ready') {
        worker.ready = true;
        pump();
        return;
      }
      const job = worker.job;
      if (!job || job.id !== message.id) return;
      if (message.retiring) {
        // It leaves on its own once the answer is sent; its replacement starts now.
        leave(worker);
        recycled++;
        replace();
      } else {
        release(worker);
      }
      if (message.type === 'done') job.settle({ kind: 'done', result: message.result });
      else job.fail(new Error(message.message));
      pump();
    });
    // The end is read once the process has exited and its stderr is read to the end, V8's last
    // words included. (Not 'close': it does not come for a process whose channel the pool closed.)
    const stderrRead = new Promise<void>((resolve) => child.stderr?.once('close', resolve) ?? resolve());
    let ending = false;
    const ended = async (code: number | null, signal: NodeJS.Signals | null): Promise<void> => {
      if (ending) return;
      ending = true;
      await stderrRead;
      exited();
      if (worker.gone) return;
      const wasReady = worker.ready;
      const job = worker.job;
      leave(worker);
      if (job) {
        if (OUT_OF_MEMORY.test(worker.stderrTail)) job.settle({ kind: 'out_of_memory' });
        else job.fail(new Error(`the task process ended (${signal ?? `exit code ${code}`}): ${lastLine(worker.stderrTail)}`));
      }
      if (!wasReady) {
        // The module did not load: the tasks waiting would wait for ever.
        const error = new Error(`a task process could not start (${signal ?? `exit code ${code}`}): ${lastLine(worker.stderrTail)}`);
        for (const waiting of queue.splice(0)) waiting.fail(error);
        if (!closed) setTimeout(replace, RESTART_DELAY_MS).unref();
      } else {
        replace();
      }
    };
    child.once('exit', ended);
    // A process that could not be spawned at all has no 'exit'; a failed send is followed by one.
    child.on('error', (error) => {
      if (child.pid === undefined) {
        worker.stderrTail += error.message;
        void ended(null, null);
      }
    });
  }

  /** Starts a process in place of one that left, unless the pool is closed. */
  function replace(): void {
    if (!closed) start();
    pump();
  }

  /** Takes `worker` out of the pool (it is ending or about to be killed). */
  function leave(worker: Worker<T, R>): void {
    worker.gone = true;
    workers.delete(worker);
    release(worker);
  }

  /** Ends a process at work (time limit, abort) and starts its replacement at once. */
  function kill(worker: Worker<T, R>): void {
    leave(worker);
    worker.child.kill('SIGKILL');
    replace();
  }

  /**
   * An idle pool does not keep the server (or a test) alive; one with tasks to answer does, its
   * starting processes included (a queued task waits for one of them).
   */
  function holdOpen(worker: Worker<T, R>, hold: boolean): void {
    const handles = [worker.child, worker.child.channel, worker.child.stderr] as ({ ref?: () => void; unref?: () => void } | null | undefined)[];
    for (const handle of handles) (hold ? handle?.ref : handle?.unref)?.call(handle);
  }
  function holdAllOpen(hold: boolean): void {
    for (const worker of workers) holdOpen(worker, hold);
  }

  function release(worker: Worker<T, R>): void {
    clearTimeout(worker.timer);
    worker.job = undefined;
  }

  function pump(): void {
    for (const worker of workers) {
      if (queue.length === 0) return;
      if (!worker.ready || worker.job) continue;
      const job = queue.shift()!;
      worker.job = job;
      worker.timer = setTimeout(() => {
        kill(worker);
        job.settle({ kind: 'time_limit' });
      }, timeoutMs);
      worker.child.send({ type: 'run', id: job.id, task: job.task } satisfies ParentMessage<T>);
    }
  }

  /** Tasks that would wait for a process once every process is ready and at work. */
  const waiting = (): number => Math.max(0, running - processes);
  const hasCapacity = (): boolean => waiting() < maxQueue;

  async function run(task: T, { signal, tenant = SYSTEM_TENANT }: RunTaskOptions = {}): Promise<TaskRun<R>> {
    if (closing) throw new Error('the task processes are closed');
    signal?.throwIfAborted();
    if (!hasCapacity()) return { kind: 'queue_full' };
    if (running++ === 0) holdAllOpen(true);
    const done = (): void => {
      if (--running === 0) {
        holdAllOpen(false);
        drained?.();
      }
    };
    let admitted: () => void;
    try {
      admitted = await admission.acquire(tenant, { signal });
    } catch (error) {
      done();
      throw error;
    }
    return new Promise<TaskRun<R>>((resolve, reject) => {
      let settled = false;
      const finish = (): boolean => {
        if (settled) return false;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        admitted();
        done();
        return true;
      };
      const job: Job<T, R> = {
        id: nextId++,
        task,
        settle: (outcome) => finish() && resolve(outcome),
        fail: (error) => finish() && reject(error),
      };
      function onAbort(): void {
        const queued = queue.indexOf(job);
        if (queued >= 0) queue.splice(queued, 1);
        for (const worker of workers) if (worker.job === job) kill(worker);
        job.fail(signal!.reason);
      }
      if (signal?.aborted) return job.fail(signal.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.push(job);
      pump();
    });
  }

  async function close(): Promise<void> {
    closing = true;
    if (running > 0) await new Promise<void>((resolve) => (drained = resolve));
    closed = true;
    const leaving = [...workers];
    for (const worker of leaving) {
      leave(worker);
      holdOpen(worker, true); // until it has left
      // Disconnecting lets the process leave on its own; one that does not is killed.
      if (worker.child.connected) worker.child.disconnect();
      const killer = setTimeout(() => worker.child.kill('SIGKILL'), CLOSE_GRACE_MS);
      void worker.exited.then(() => clearTimeout(killer));
    }
    await Promise.all(leaving.map((worker) => worker.exited));
  }

  for (let i = 0; i < processes; i++) start();

  return {
    run,
    hasCapacity,
    stats: () => {
      let working = 0;
      for (const worker of workers) if (worker.job) working++;
      return { processes, busy: working, queued: queue.length + admission.queued, recycled };
    },
    fairness: () => admission.stats(),
    close,
  };
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines[lines.length - 1]?.trim() || 'nothing on stderr';
}
