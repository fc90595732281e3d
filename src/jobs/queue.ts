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
import { pollSecondsFor, type JobSettings } from './settings.ts';

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

/** How often a worker slot other than a queue's polling one looks on its own: a backstop, as wakes reach it. */
const FOLLOWER_BACKSTOP_SECONDS = 60;
/** How long after a delayed task's time its wake-up comes, so that the task is due when the fetch runs. */
const DUE_MARGIN_MS = 50;

/** One worker registration of a queue: it works on one task at a time. */
interface Slot {
  id: string;
  busy: boolean;
  /** Woken for tasks counted for it (an enqueue here, its own next fetch): a task it finds calls for no sibling. */
  counted: boolean;
}

/** A queue's worker slots here, the first of which polls while idle, and its tasks running here per group. */
interface Pool {
  slots: Slot[];
  groupLimit: number | undefined;
  running: Map<string, number>;
}

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

  const idleSeconds = pollSecondsFor(settings, !databaseUrl);
  const pools = new Map<QueueName, Pool>();
  const timers = new Set<NodeJS.Timeout>();
  /**
   * Wakes up to `count` idle slots of `queue`, the polling one first: each fetches now. `counted`:
   * the wake is for tasks known here, so a slot that finds one need not wake a sibling in turn.
   */
  const wake = (queue: QueueName, count: number, counted: boolean) => {
    for (const slot of pools.get(queue)?.slots ?? []) {
      if (count <= 0) return;
      if (slot.busy) continue;
      slot.counted = counted;
      boss.notifyWorker(slot.id);
      count--;
    }
  };
  /** Of new tasks, those a fetch may hand out now: a host whose places are all taken here gets none (embedded, here is everywhere). */
  const claimable = (pool: Pool, tasks: Task[]) => {
    const taken = new Map<string, number>();
    let count = 0;
    for (const task of tasks) {
      if (task.group && pool.groupLimit) {
        const used = (pool.running.get(task.group) ?? 0) + (taken.get(task.group) ?? 0);
        if (used >= pool.groupLimit) continue;
        taken.set(task.group, (taken.get(task.group) ?? 0) + 1);
      }
      count++;
    }
    return count;
  };
  const later = (queue: QueueName, seconds: number) => {
    if (stopped) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      wake(queue, 1, false);
    }, seconds * 1000 + DUE_MARGIN_MS);
    timer.unref();
    timers.add(timer);
  };

  return {
    async enqueue(tx, queue, tasks) {
      if (tasks.length === 0) return;
      const jobs: JobInsert[] = tasks.map((task) => ({
        data: task.data,
        ...(task.group ? { group: { id: task.group } } : {}),
        ...(task.delaySeconds ? { startAfter: new Date(Date.now() + task.delaySeconds * 1000) } : {}),
      }));
      await boss.insert(queue, jobs, { db: transactionAdapter(tx) });
      // Embedded, this process is the only one enqueueing: its idle workers look at once instead of at
      // their next poll (PGlite runs their fetch after this transaction ends). Woken on the next turn
      // of the event loop, so that what the caller does right after its commit (a page's capture)
      // goes to the database before their fetches. PostgreSQL's NOTIFY, sent at commit, wakes the
      // workers of every process.
      const pool = pools.get(queue);
      const count = !notify && pool ? claimable(pool, tasks.filter((task) => !task.delaySeconds)) : 0;
      if (count > 0) setImmediate(() => wake(queue, count, true));
      // A delayed task wakes nobody when it comes due: a timer here looks for it then, not a poll later.
      for (const task of tasks) if (task.delaySeconds) later(queue, task.delaySeconds);
    },
    async work(queue, options, handler) {
      // One registration per slot, so each slot fetches again at once after its task (a backlog never
      // waits a poll interval). pg-boss's batches would fetch for several slots at once, but a batch's
      // worker fetches again only once its whole batch has ended: one slow page (a crawl-delay, a
      // stalled site) would hold every other slot idle. Only the first slot polls on a timer; the
      // others sleep until woken (a task enqueued here, a poll that found one, NOTIFY), so an idle
      // queue costs one poll per interval whatever JOB_CONCURRENCY is (docs/jobs.md#polling).
      const { localConcurrency = 1, ...rest } = options;
      const pool: Pool = { slots: [], groupLimit: typeof options.groupConcurrency === 'number' ? options.groupConcurrency : undefined, running: new Map() };
      pools.set(queue, pool);
      for (let i = 0; i < localConcurrency; i++) {
        const slot: Slot = { id: '', busy: false, counted: false };
        pool.slots.push(slot);
        const seconds = i === 0 ? idleSeconds : Math.max(idleSeconds, FOLLOWER_BACKSTOP_SECONDS);
        // NOTIFY wakes workers for new tasks only; a retry coming due wakes nobody, so the first slot keeps polling.
        const polling = { pollingIntervalSeconds: seconds, notifyPollingIntervalSeconds: Math.max(seconds, 1) };
        slot.id = await boss.work(queue, { ...polling, ...rest, localConcurrency: 1 }, async (jobs: Job<object>[]) => {
          slot.busy = true;
          const groups = jobs.map((job) => job.groupId).filter((group): group is string => Boolean(group));
          for (const group of groups) pool.running.set(group, (pool.running.get(group) ?? 0) + 1);
          // A task found by a poll (a retry come due, a backlog at start) may not be alone: an idle
          // slot looks too, and so on down the line while each finds one.
          if (!slot.counted) wake(queue, 1, false);
          slot.counted = false;
          // While the polling slot is busy, an idle one looks for tasks coming due in its place.
          const standIn = i === 0 && localConcurrency > 1 ? setInterval(() => wake(queue, 1, false), idleSeconds * 1000).unref() : undefined;
          try {
            for (const job of jobs) await handler(job as Job<never>);
          } finally {
            clearInterval(standIn);
            for (const group of groups) {
              const left = (pool.running.get(group) ?? 1) - 1;
              if (left > 0) pool.running.set(group, left);
              else pool.running.delete(group);
            }
            slot.busy = false;
            // Fetches again at once: where this task came from there may be more, and its host's place is free.
            slot.counted = true;
            boss.notifyWorker(slot.id);
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
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
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
