/**
 * Jobs as the rest of the service sees them (docs/jobs.md): create a crawl or a batch, read it
 * back, cancel it. Behind it, the durable queue (queue.ts) and the workers (worker.ts), started
 * by the server process only: the operator's command line reads and cancels through the tables.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from '../storage/db.ts';
import { WebhookEventStore } from '../webhooks/events.ts';
import { openJobQueue, QUEUES, type JobQueue } from './queue.ts';
import { JOB_RETENTION_DAYS } from './settings.ts';
import { JobStore, type JobKind, type JobRow, type PageRow, type WebhookTarget } from './store.ts';
import { JobMetrics, type JobEvent } from './metrics.ts';
import { JobWorker, type JobEnvironment } from './worker.ts';
import type { MonitorService } from '../monitors/service.ts';

export interface JobServiceDeps extends JobEnvironment {
  databaseUrl?: string;
}

export interface NewJob {
  kind: JobKind;
  userId: number;
  /** The request that creates it: its history row later shows what the job cost. */
  requestId: string;
  params: Record<string, unknown>;
  webhook: WebhookTarget | null;
  /** Pages delivered at most. */
  limit: number;
}

export class JobService {
  readonly store: JobStore;
  readonly events: WebhookEventStore;
  readonly #queue: JobQueue;
  readonly #worker: JobWorker;
  readonly #metrics: JobMetrics;
  readonly #db: Database;
  /** The wallet monitors (src/monitors): their follower and deliveries run beside the job workers, started and stopped with them. */
  #monitors: MonitorService | undefined;
  #started = false;
  #stopping: Promise<void> | undefined;

  private constructor(db: Database, queue: JobQueue, worker: JobWorker, store: JobStore, events: WebhookEventStore, metrics: JobMetrics) {
    this.#db = db;
    this.#queue = queue;
    this.#worker = worker;
    this.store = store;
    this.events = events;
    this.#metrics = metrics;
  }

  /** Opens the queue (installing or upgrading its schema); workers start with `startWorkers`. */
  static async open(deps: JobServiceDeps): Promise<JobService> {
    const queue = await openJobQueue({ db: deps.db, databaseUrl: deps.databaseUrl, settings: deps.settings, logger: deps.logger });
    const store = new JobStore(deps.db);
    const events = new WebhookEventStore(deps.db);
    const metrics = new JobMetrics();
    const worker = new JobWorker({ ...deps, store, queue, events, metrics });
    return new JobService(deps.db, queue, worker, store, events, metrics);
  }

  /** Starts taking tasks (the server; never the command line). */
  async startWorkers(): Promise<void> {
    await this.#worker.start();
    this.#started = true;
    this.#monitors?.start();
  }

  /** Runs the wallet monitors beside the workers: started with them (at once if they run), stopped with the queue. */
  attachMonitors(monitors: MonitorService): void {
    this.#monitors = monitors;
    if (this.#started) monitors.start();
  }

  /** The wallet monitors, for the endpoint rows (which reach services through the jobs). */
  get monitors(): MonitorService {
    if (!this.#monitors) throw new Error('The wallet monitors are not attached to the job service.');
    return this.#monitors;
  }

  /** Creates a job and queues its start, in one transaction. */
  async create(job: NewJob): Promise<JobRow> {
    return this.#db.transaction(async (tx) => {
      const row = await this.store.create(tx, { ...job, id: randomUUID(), retentionDays: JOB_RETENTION_DAYS });
      await this.#queue.enqueue(tx, QUEUES.start, [{ data: { jobId: row.id } }]);
      return row;
    });
  }

  /** The job, when it exists and (given a user) belongs to that user. */
  get(id: string, userId?: number): Promise<JobRow | undefined> {
    return this.store.get(id, userId);
  }

  pages(id: string, skip: number, limit: number): Promise<PageRow[]> {
    return this.store.pages(id, skip, limit);
  }

  /**
   * Cancels a job still queued or running: nothing more is fetched or billed (pages fetched at that
   * moment are released, not delivered). Answers the job as it is now, or undefined when unknown.
   */
  async cancel(id: string, userId?: number): Promise<JobRow | undefined> {
    const ended = await this.store.finish(this.#db, id, 'cancelled', undefined, userId);
    if (ended) {
      this.#worker.cancelled(id);
      await this.store.settleHistory(ended);
    }
    return ended ?? (await this.store.get(id, userId));
  }

  /** Watches pages, deliveries and job ends (metrics). */
  observe(listener: (event: JobEvent) => void): () => void {
    return this.#metrics.observe(listener);
  }

  /** Tasks waiting and running per queue. */
  depth() {
    return this.#queue.depth();
  }

  healthy(): boolean {
    return this.#queue.healthy();
  }

  /**
   * Stops taking tasks and waits up to `graceMs` for the pages in hand; past it, aborts them: each
   * goes back to the queue with its hold released, and the next process starts it over.
   */
  stop(graceMs: number): Promise<void> {
    this.#stopping ??= (async () => {
      const abort = setTimeout(() => this.#worker.abortAll(), graceMs);
      try {
        await this.#monitors?.stop();
        await this.#queue.stop(graceMs + 2_000);
      } finally {
        clearTimeout(abort);
      }
    })();
    return this.#stopping;
  }
}
