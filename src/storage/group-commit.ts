/**
 * Group commit: calls that arrive while earlier statements are still running wait, and the next
 * statement carries all of them at once. Under load one round trip, one transaction and one WAL
 * flush then serve a whole batch of requests. No timer: a batch leaves at the end of the event
 * loop turn in which its first call arrived (setImmediate), so an idle server adds no latency,
 * and calls made in the same turn travel together. That turn boundary matters for the embedded
 * database, whose statements run synchronously on this thread: a statement there is never "in
 * flight" while requests arrive, but the requests that queued up behind it in the socket buffers
 * are all read in the next turn, and leave as one batch.
 *
 * A batch is all-or-nothing in the database. When one fails, its calls are retried one by one,
 * so one bad call (or a deadlock victim) never fails the calls that happened to share its batch.
 */
export interface GroupCommitOptions {
  /** Statements of this kind running at once; more calls queue for the next batch. */
  maxInFlight: number;
  /** Most calls per statement. */
  maxBatch: number;
}

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit<I, O> {
  readonly #run: (items: I[]) => Promise<O[]>;
  readonly #options: GroupCommitOptions;
  #queue: Array<Waiting<I, O>> = [];
  #running = 0;
  #scheduled = false;

  /** `run` executes one batch and answers each item, in order. */
  constructor(run: (items: I[]) => Promise<O[]>, options: GroupCommitOptions) {
    if (!(options.maxInFlight >= 1) || !(options.maxBatch >= 1)) throw new Error('GroupCommit needs maxInFlight and maxBatch of at least 1.');
    this.#run = run;
    this.#options = options;
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          this.#pump();
        });
      }
    });
  }

  /** Calls waiting for a statement (not counting those in running statements). */
  get queued(): number {
    return this.#queue.length;
  }

  #pump(): void {
    while (this.#running < this.#options.maxInFlight && this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#options.maxBatch);
      this.#running++;
      void this.#flush(batch).finally(() => {
        this.#running--;
        this.#pump();
      });
    }
  }

  async #flush(batch: Array<Waiting<I, O>>): Promise<void> {
    try {
      const results = await this.#run(batch.map((w) => w.item));
      batch.forEach((w, i) => w.resolve(results[i]));
    } catch (error) {
      if (batch.length === 1) {
        batch[0].reject(error);
        return;
      }
      await Promise.all(
        batch.map(async (w) => {
          try {
            w.resolve((await this.#run([w.item]))[0]);
          } catch (single) {
            w.reject(single);
          }
        }),
      );
    }
  }
}
