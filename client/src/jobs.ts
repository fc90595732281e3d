/**
 * A crawl's or a batch's results as they arrive: an async iterator over the pages the job
 * delivers, polling `GET /v1/crawl/{id}` (or `/v1/batch/{id}`) until the job ends. Each answer
 * lists pages in delivery order from `skip`; `next` says more are ready now.
 */
import type { CallOptions, GleanerClient, OutputOf } from './index.ts';
import { sleep } from './sleep.ts';

/** One delivered page: its final URL, the status the site answered, the content, and its links when asked. */
export type JobPage = OutputOf<'getCrawl'>['data'][number];
/** What GET /v1/crawl/{id} and GET /v1/batch/{id} answer. */
export type JobView = OutputOf<'getCrawl'>;

/** Statuses a job never leaves: no page is delivered after them. */
export const FINAL_JOB_STATUSES: readonly string[] = ['completed', 'cancelled', 'failed', 'stopped_no_credits'];

export interface JobPagesOptions {
  /** Wait between two polls while the job is queued or running and no page is waiting (default 2000 ms). */
  intervalMs?: number;
  /** Stops the iteration: the call or wait in progress rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Pages already read (from an earlier iteration): start after them. Default 0. */
  skip?: number;
}

type ReadJob = (input: { id: string; skip: number }, options?: CallOptions) => Promise<JobView>;

/** Every page a crawl delivers, each once, in delivery order; ends once the crawl has ended and every page was yielded. */
export function crawlPages(client: Pick<GleanerClient, 'getCrawl'>, id: string, options: JobPagesOptions = {}): AsyncGenerator<JobPage, void, undefined> {
  return jobPages((input, callOptions) => client.getCrawl(input, callOptions), id, options);
}

/** Every page a batch delivers, each once, in delivery order; ends once the batch has ended and every page was yielded. */
export function batchPages(client: Pick<GleanerClient, 'getBatch'>, id: string, options: JobPagesOptions = {}): AsyncGenerator<JobPage, void, undefined> {
  return jobPages((input, callOptions) => client.getBatch(input, callOptions), id, options);
}

async function* jobPages(read: ReadJob, id: string, options: JobPagesOptions): AsyncGenerator<JobPage, void, undefined> {
  const intervalMs = options.intervalMs ?? 2_000;
  const { signal } = options;
  let skip = options.skip ?? 0;
  for (;;) {
    signal?.throwIfAborted();
    const job = await read({ id, skip }, { signal });
    for (const page of job.data) yield page;
    skip = skipOf(job.next) ?? skip + job.data.length;
    // More pages are ready now: no wait. (An answer with `next` always carries a page.)
    if (job.next !== null && job.data.length > 0) continue;
    if (settled(job)) return;
    await sleep(intervalMs, signal);
  }
}

/**
 * Whether no page can be delivered after this answer. The server reads the job before its pages,
 * so a settled job's answer held the last of them. A job stopped for lack of credits still
 * delivers the pages that held their credit before it stopped: it is settled once every page it
 * counts (`total`: queued, being fetched or delivered) is delivered.
 */
function settled(job: JobView): boolean {
  if (!FINAL_JOB_STATUSES.includes(job.status)) return false;
  return job.status !== 'stopped_no_credits' || job.total <= job.completed;
}

/** The `skip` parameter of a `next` URL. */
function skipOf(next: string | null): number | undefined {
  if (next === null) return undefined;
  try {
    const skip = Number(new URL(next).searchParams.get('skip'));
    return Number.isSafeInteger(skip) && skip > 0 ? skip : undefined;
  } catch {
    return undefined;
  }
}
