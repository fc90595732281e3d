/**
 * The durable queue under every job (docs/jobs.md): pg-boss, in the service's own database. On
 * PostgreSQL it keeps its own small pool and wakes workers with LISTEN/NOTIFY; embedded, it runs
 * on the same PGlite instance as everything else. Either way a task lives in a table: it survives
 * a restart or a `kill -9`, any replica may run it, and a worker that stops heart-beating has its
 * task handed to another.
 *
 * Tasks are small and idempotent (one page of a crawl, one webhook delivery); the state users read
 * lives in our own tables (src/jobs/store.ts). A task is enqueued in the same transaction as the
 * state that calls for it, so neither exists without the other.
 */
import { fromPglite, PgBoss, type Job, type JobInsert, type Queue, type WorkOptions } from 'pg-boss';
import type { FastifyBaseLogger } from 'fastify';
import type { Database, Queryable } from '../storage/db.ts';
import { withDefaultUser } from '../storage/db.ts';
import type { JobSettings } from './settings.ts';

/** The queues, each with its retry and expiry rules. */
export const QUEUES = {
  /** Starts a job: reads robots.txt and sitemaps, admits the first pages. */
  start: 'gleaner-job-start',
  /** One page of a crawl or batch. */
  page: 'gleaner-job-page',
  /** Pages whose every attempt died: failed there, so their job can complete. */
  pageDead: 'gleaner-job-page-dead',
  /** One webhook delivery attempt (retried with back-off for 24 h). */
  webhook: 'gleaner-webhook',
  /** Hourly: deletes jobs, pages and events past their 7 days. */
  cleanup: 'gleaner-job-cleanup',
} as const;

/** Attempts of one page after its first (a worker that died, a fault); the last one fails the page. */
export const PAGE_RETRY_LIMIT = 10;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

/** A task to enqueue: its data, and the group (a target host) whose concurrency it counts against. */
export interface Task {
  data: object;
  group?: string;
  /** Not before this many seconds from now. */
  delaySeconds?: number;
}

export interface JobQueue {
  /** Enqueues tasks inside the caller's transaction: they exist only if it commits. */
  enqueue(tx: Queryable, queue: QueueName, tasks: Task[]): Promise<void>;
  /** Runs `handler` for tasks of `queue`; a handler that throws is retried by the queue's rules. */
  work<T extends object>(queue: QueueName, options: WorkOptions, handler: (task: Job<T>) => Promise<void>): Promise<void>;
  /** Tasks waiting (created or retry) and running, per queue, for the metrics. */
  depth(): Promise<Array<{ queue: string; queued: number; active: number }>>;
  /** False after the queue reported an error it could not recover from (readiness). */
  healthy(): boolean;
  /** Stops taking tasks; waits up to `graceMs` for the ones in hand (their signals abort after it). */
  stop(graceMs: number): Promise<void>;
}

interface OpenOptions {
  db: Database;
  databaseUrl?: string;
  settings: JobSettings;
  logger?: FastifyBaseLogger;
}

export async function openJobQueue({ db, databaseUrl, settings, logger }: OpenOptions): Promise<JobQueue> {
  const common = {
    // Our metrics and /admin views cover the jobs; pg-boss's own registry and stats are not needed.
    registerInstance: false,
    superviseIntervalSeconds: settings.superviseSeconds,
    monitorIntervalSeconds: settings.superviseSeconds,
    schedule: true,
    openTelemetry: { enabled: false },
  };
  const boss = databaseUrl
    ? new PgBoss({ ...common, connectionString: withDefaultUser(databaseUrl), max: settings.poolSize, useListenNotify: true, application_name: 'gleaner-jobs' })
    : new PgBoss({ ...common, db: fromPglite(embeddedHandle(db)), backend: 'pglite' });

  let stopped = false;
  boss.on('error', (error: Error) => {
    logger?.error({ err: error }, 'job queue error');
  });
  boss.on('warning', (warning: { message: string }) => logger?.warn({ warning: warning.message }, 'job queue warning'));

  await boss.start();
  const notify = Boolean(databaseUrl);
  await ensureQueue(boss, QUEUES.start, { retryLimit: 10, retryDelay: 3, retryBackoff: true, retryDelayMax: 300, expireInSeconds: 300, heartbeatSeconds: 10, notify });
  await ensureQueue(boss, QUEUES.pageDead, { retryLimit: 5, retryDelay: 5, expireInSeconds: 120, deleteAfterSeconds: 86_400 });
  await ensureQueue(boss, QUEUES.page, {
    deadLetter: QUEUES.pageDead,
    retryLimit: PAGE_RETRY_LIMIT,
    retryDelay: 2,
    retryBackoff: true,
    retryDelayMax: 120,
    // A page is fetched within its own deadline (WEB_TIMEOUT_MS) and converted within its own; a
    // worker that dies stops heart-beating and its page goes to another worker within ~20 s.
    expireInSeconds: 600,
    heartbeatSeconds: 10,
    deleteAfterSeconds: 86_400,
    notify,
  });
  await ensureQueue(boss, QUEUES.webhook, {
    // ≈ 24 h of exponential back-off: base, 2×base… capped at one hour between attempts.
    retryLimit: settings.webhookRetryLimit,
    retryDelay: settings.webhookRetryBaseSeconds,
    retryBackoff: true,
    retryDelayMax: 3_600,
    expireInSeconds: 60,
    deleteAfterSeconds: 86_400 * 7,
    notify,
  });
  await ensureQueue(boss, QUEUES.cleanup, { retryLimit: 1, expireInSeconds: 600 });
  await boss.schedule(QUEUES.cleanup, '17 * * * *');
  // The queue cache is read by every enqueue: filled now, so an enqueue inside an embedded
  // transaction never has to read it through the (then busy) single connection.
  for (const name of Object.values(QUEUES)) await boss.insert(name, []);

  return {
    async enqueue(tx, queue, tasks) {
      if (tasks.length === 0) return;
      const jobs: JobInsert[] = tasks.map((task) => ({
        data: task.data,
        ...(task.group ? { group: { id: task.group } } : {}),
        ...(task.delaySeconds ? { startAfter: new Date(Date.now() + task.delaySeconds * 1000) } : {}),
      }));
      await boss.insert(queue, jobs, { db: transactionAdapter(tx) });
    },
    async work(queue, options, handler) {
      // One registration per worker, so each can be told to fetch again at once after a task: a
      // worker with work waiting goes on without sleeping its poll interval (pg-boss's burst mode
      // needs batches, and a batch would hold several pages of one host at once).
      const { localConcurrency = 1, ...rest } = options;
      for (let i = 0; i < localConcurrency; i++) {
        let id = '';
        // NOTIFY wakes workers for new tasks only; a retry coming due wakes nobody, so the poll stays short.
        const polling = { pollingIntervalSeconds: settings.pollSeconds, notifyPollingIntervalSeconds: Math.max(settings.pollSeconds, 1) };
        id = await boss.work(queue, { ...polling, ...rest, localConcurrency: 1 }, async (jobs: Job<object>[]) => {
          try {
            for (const job of jobs) await handler(job as Job<never>);
          } finally {
            boss.notifyWorker(id);
          }
        });
      }
    },
    async depth() {
      const rows = await db.query<{ name: string; queued: number; active: number }>(
        // pgboss.job is the parent of every queue's partition.
        `SELECT name, count(*) FILTER (WHERE state IN ('created', 'retry'))::int AS queued, count(*) FILTER (WHERE state = 'active')::int AS active
           FROM pgboss.job WHERE name = ANY($1::text[]) GROUP BY name`,
        [Object.values(QUEUES)],
      );
      return Object.values(QUEUES).map((queue) => {
        const row = rows.find((r) => r.name === queue);
        return { queue, queued: Number(row?.queued ?? 0), active: Number(row?.active ?? 0) };
      });
    },
    healthy: () => !stopped,
    async stop(graceMs) {
      stopped = true;
      await boss.stop({ graceful: true, timeout: graceMs, close: true });
    },
  };
}

/**
 * Creates the queue, or brings an existing one to these options (a changed setting, an upgrade):
 * `createQueue` leaves an existing queue as it was.
 */
async function ensureQueue(boss: PgBoss, name: string, options: Omit<Queue, 'name'>): Promise<void> {
  await boss.createQueue(name, options);
  await boss.updateQueue(name, options);
}

/** Statements of one of our transactions, as pg-boss runs them (`db` option). */
function transactionAdapter(tx: Queryable) {
  return {
    async executeSql(text: string, values?: unknown[]) {
      return { rows: await tx.query(text, values ?? []) };
    },
  };
}

function embeddedHandle(db: Database): Parameters<typeof fromPglite>[0] {
  if (!db.embedded) throw new Error('The embedded job queue needs the embedded database.');
  return db.embedded;
}
