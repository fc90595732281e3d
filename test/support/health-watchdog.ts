/**
 * The reliability tier's event-loop watchdog: while a hostile input is being served, `GET /health`
 * is asked every 200 ms, and any answer slower than 1 s is a stall. One request or one crawled
 * site must never make every other caller wait.
 *
 * Two readings catch a stall wherever the server runs:
 * - the answer's own time (a server in another process, or a stall that began mid-request);
 * - the poll's lateness: when the server runs in this test's process, a stalled event loop
 *   also holds the poll's timer, so the poll starts late by the stall's length.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Stall {
  /** Milliseconds since the watchdog started. */
  at: number;
  /** How long the answer took, or how late the poll started. */
  ms: number;
  kind: 'slow answer' | 'late poll' | 'no answer';
}

export interface WatchdogReport {
  polls: number;
  /** The slowest answer, in ms. */
  slowestMs: number;
  stalls: Stall[];
}

export interface HealthWatchdog {
  /**
   * Stops polling and reports, once `minPolls` polls are done: a quick request is still watched
   * for a moment after its answer, when work it left behind could stall the loop.
   */
  stop(): Promise<WatchdogReport>;
}

export interface WatchdogOptions {
  intervalMs?: number;
  /** An answer (or a lateness) above this is a stall. */
  limitMs?: number;
  /** The fewest polls before `stop` reports (default 3). */
  minPolls?: number;
}

/** Starts polling `${baseUrl}/health`. */
export function watchHealth(baseUrl: string, options: WatchdogOptions = {}): HealthWatchdog {
  const intervalMs = options.intervalMs ?? 200;
  const limitMs = options.limitMs ?? 1000;
  const minPolls = options.minPolls ?? 3;
  const started = performance.now();
  const report: WatchdogReport = { polls: 0, slowestMs: 0, stalls: [] };
  let stopping = false;
  const loop = (async () => {
    let due = performance.now();
    while (!stopping || report.polls < minPolls) {
      const begin = performance.now();
      const late = begin - due;
      if (late > limitMs) report.stalls.push({ at: Math.round(due - started), ms: Math.round(late), kind: 'late poll' });
      try {
        // Ten times the limit at most, so that a hung server is reported instead of holding the test.
        const response = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(limitMs * 10) });
        await response.arrayBuffer();
        const took = performance.now() - begin;
        report.slowestMs = Math.max(report.slowestMs, Math.round(took));
        if (took > limitMs) report.stalls.push({ at: Math.round(begin - started), ms: Math.round(took), kind: 'slow answer' });
      } catch {
        report.stalls.push({ at: Math.round(begin - started), ms: Math.round(performance.now() - begin), kind: 'no answer' });
      }
      report.polls += 1;
      due = Math.max(performance.now(), begin + intervalMs);
      await sleep(Math.max(0, due - performance.now()));
    }
  })();
  return {
    async stop() {
      stopping = true;
      await loop;
      return report;
    },
  };
}

/** Fails when the watchdog saw any stall (or too few polls to have watched anything). */
export function assertNoStall(report: WatchdogReport, what: string): void {
  assert.ok(report.polls >= 2, `${what}: the watchdog polled /health only ${report.polls} time(s)`);
  assert.deepEqual(report.stalls, [], `${what}: /health stalled (${report.polls} polls, slowest ${report.slowestMs} ms): ${JSON.stringify(report.stalls.slice(0, 5))}`);
}

/** Runs `work` under the watchdog, then asserts no stall; returns what `work` returned. */
export async function withoutStall<T>(baseUrl: string, what: string, work: () => Promise<T>, options?: WatchdogOptions): Promise<T> {
  const watchdog = watchHealth(baseUrl, options);
  let result: T;
  try {
    result = await work();
  } catch (error) {
    await watchdog.stop();
    throw error;
  }
  assertNoStall(await watchdog.stop(), what);
  return result;
}

/**
 * The watchdog over a whole test file: `start` at the end of its `before` (fixtures built in the
 * test process before then would read as stalls), `assertClean` in its last test.
 */
export function fileWatchdog(what: string): { start(baseUrl: string): void; assertClean(): Promise<void> } {
  let watchdog: HealthWatchdog | undefined;
  return {
    start(baseUrl) {
      watchdog = watchHealth(baseUrl);
    },
    async assertClean() {
      assert.ok(watchdog, `${what}: the watchdog was never started`);
      assertNoStall(await watchdog.stop(), what);
    },
  };
}
