/**
 * Long loops over hostile input (a crawled page's links, a sitemap's URLs) run in short slices on
 * the shared event loop, with a budget: no single call holds every other request, `/health` and
 * the job loops for more than a slice, and one page's work stops at its budget, however its
 * content was built to be slow.
 */
import { setImmediate as yieldToLoop } from 'node:timers/promises';

/** How long a slice runs before other work gets its turn. */
export const SLICE_MS = 8;

export interface SlicedRun {
  /** How many items were processed (from the start, in order). */
  processed: number;
  /** True when the budget ran out before the last item. */
  cut: boolean;
}

/**
 * Calls `step` on each item in order, yielding to the event loop every `SLICE_MS` of work, until
 * the items or `budgetMs` of work run out, or `step` answers `false` (it needs no more). Time spent
 * waiting for a turn is not counted. Rejects with the signal's reason when it aborts.
 */
export async function runSliced<T>(items: Iterable<T>, step: (item: T) => boolean | void, options: { budgetMs: number; signal?: AbortSignal }): Promise<SlicedRun> {
  let processed = 0;
  let spent = 0;
  let sliceStart = performance.now();
  for (const item of items) {
    const now = performance.now();
    if (now - sliceStart >= SLICE_MS) {
      spent += now - sliceStart;
      if (spent >= options.budgetMs) return { processed, cut: true };
      await yieldToLoop();
      options.signal?.throwIfAborted();
      sliceStart = performance.now();
    }
    processed += 1;
    if (step(item) === false) break;
  }
  return { processed, cut: false };
}
