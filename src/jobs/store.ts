/**
 * What users and operators read back about jobs: the `jobs` and `job_pages` tables (migration
 * 0008). Every state change is one conditional statement, so two replicas working on one crawl
 * can never both deliver a page, admit past the limit, or finish the job twice.
 */
import type { Database, Queryable } from '../storage/db.ts';
import { jsonbText } from '../storage/jsonb.ts';
import { isUuid } from '../core/uuid.ts';

export const JOB_KINDS = ['crawl', 'batch'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

export const JOB_STATUSES = ['queued', 'running', 'completed', 'cancelled', 'failed', 'stopped_no_credits'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
/** Statuses a job never leaves. */
export const FINAL_STATUSES: readonly JobStatus[] = ['completed', 'cancelled', 'failed', 'stopped_no_credits'];

export interface WebhookTarget {
  url: string;
  events: string[];
}

export interface JobRow {
  id: string;
  user_id: number;
  kind: JobKind;
  status: JobStatus;
  params: Record<string, unknown>;
  webhook: WebhookTarget | null;
  page_limit: number;
  request_id: string;
  robots: string | null;
  crawl_delay_ms: number;
  admitted: number;
  completed: number;
  failed_pages: number;
  credits_used: number;
  error: string | null;
  webhook_error: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  expires_at: Date;
}

export interface PageRow {
  url: string;
  status_code: number;
  content: string;
  links: string[] | null;
}

/** A page to look at: its canonical key, the URL to fetch and how far from the start it is. */
export interface FoundPage {
  key: string;
  url: string;
  depth: number;
}

export interface PageClaim {
  url: string;
  depth: number;
  attempt: number;
}

const JOB_COLUMNS = `id, user_id::int AS user_id, kind, status, params, webhook, page_limit, request_id, robots, crawl_delay_ms, admitted,
  completed, failed_pages, credits_used::int AS credits_used, error, webhook_error, created_at, started_at, finished_at, expires_at`;

export class JobStore {
  readonly db: Database;
  /** Hosts whose slot rows this process has made (see `claimHostSlot`). */
  readonly #seededHosts = new Set<string>();

  constructor(db: Database) {
    this.db = db;
  }

  async create(
    tx: Queryable,
    job: { id: string; userId: number; kind: JobKind; params: Record<string, unknown>; webhook: WebhookTarget | null; limit: number; requestId: string; retentionDays: number },
  ): Promise<JobRow> {
    const [row] = await tx.query<JobRow>(
      `INSERT INTO jobs (id, user_id, kind, status, params, webhook, page_limit, request_id, expires_at)
       VALUES ($1, $2, $3, 'queued', $4::jsonb, $5::jsonb, $6, $7, clock_timestamp() + make_interval(days => $8))
       RETURNING ${JOB_COLUMNS}`,
      [job.id, job.userId, job.kind, jsonbText(job.params), job.webhook ? jsonbText(job.webhook) : null, job.limit, job.requestId, job.retentionDays],
    );
    return row;
  }

  async get(id: string, userId?: number, q: Queryable = this.db): Promise<JobRow | undefined> {
    if (!isUuid(id)) return undefined;
    // A user's job is gone once it expires, whether or not the hourly cleanup has deleted it yet.
    const [row] = await q.query<JobRow>(
      `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1 AND ($2::bigint IS NULL OR (user_id = $2 AND expires_at > clock_timestamp()))`,
      [id, userId ?? null],
    );
    return row;
  }

  async list(filter: { userId?: number; status?: string; limit: number }): Promise<JobRow[]> {
    return this.db.query<JobRow>(
      `SELECT ${JOB_COLUMNS} FROM jobs WHERE ($1::bigint IS NULL OR user_id = $1) AND ($2::text IS NULL OR status = $2)
        ORDER BY created_at DESC LIMIT $3`,
      [filter.userId ?? null, filter.status ?? null, filter.limit],
    );
  }

  /** Delivered pages in delivery order, from `skip`; one more than `limit` tells whether more follow. */
  async pages(jobId: string, skip: number, limit: number): Promise<PageRow[]> {
    return this.db.query<PageRow>(
      `SELECT COALESCE(final_url, url) AS url, status_code, content, links FROM job_pages
        WHERE job_id = $1 AND seq IS NOT NULL ORDER BY seq OFFSET $2 LIMIT $3`,
      [jobId, skip, limit],
    );
  }

  /** queued → running, with what the start found (robots.txt, crawl-delay). False when it was not queued. */
  async markRunning(tx: Queryable, jobId: string, robots: { text: string | null; crawlDelayMs: number }): Promise<boolean> {
    const rows = await tx.query(
      `UPDATE jobs SET status = 'running', started_at = clock_timestamp(), robots = $2, crawl_delay_ms = $3 WHERE id = $1 AND status = 'queued' RETURNING id`,
      [jobId, robots.text, robots.crawlDelayMs],
    );
    return rows.length > 0;
  }

  /** Ends a job that is still going; answers the row only to the one call that ended it. */
  async finish(q: Queryable, jobId: string, status: JobStatus, error?: string, userId?: number): Promise<JobRow | undefined> {
    // Pages still queued will not be fetched: skipped at once, so `total` says what is left.
    const [row] = await q.query<JobRow>(
      `WITH ending AS (
         SELECT id FROM jobs WHERE id = $1 AND status IN ('queued', 'running') AND ($4::bigint IS NULL OR user_id = $4) FOR UPDATE),
       skipped AS (
         UPDATE job_pages SET state = 'skipped', error = 'the job ended first'
          WHERE job_id = (SELECT id FROM ending) AND state = 'queued' RETURNING 1)
       UPDATE jobs SET status = $2, error = COALESCE($3, error), finished_at = clock_timestamp(), admitted = admitted - (SELECT count(*) FROM skipped)
        WHERE id = (SELECT id FROM ending) RETURNING ${JOB_COLUMNS}`,
      [jobId, status, error ?? null, userId ?? null],
    );
    return row;
  }

  /** Whether the job may have nothing left to fetch (`completeIfDone` decides, under the job's lock). */
  async mayBeDone(jobId: string): Promise<boolean> {
    const rows = await this.db.query("SELECT 1 FROM job_pages WHERE job_id = $1 AND state IN ('queued', 'fetching') LIMIT 1", [jobId]);
    return rows.length === 0;
  }

  /** Completes a running job with nothing left to fetch or to admit; the row to the one call that did. */
  async completeIfDone(q: Queryable, jobId: string): Promise<JobRow | undefined> {
    const [row] = await q.query<JobRow>(
      `UPDATE jobs j SET status = 'completed', finished_at = clock_timestamp()
        WHERE j.id = $1 AND j.status = 'running'
          AND NOT EXISTS (SELECT 1 FROM job_pages p WHERE p.job_id = $1 AND p.state IN ('queued', 'fetching'))
          AND (j.completed >= j.page_limit OR NOT EXISTS (SELECT 1 FROM job_pages p WHERE p.job_id = $1 AND p.state = 'waiting'))
        RETURNING ${JOB_COLUMNS}`,
      [jobId],
    );
    return row;
  }

  /** Records pages found (once per canonical key); answers how many were new. */
  async addFound(tx: Queryable, jobId: string, pages: FoundPage[]): Promise<number> {
    if (pages.length === 0) return 0;
    const rows = await tx.query(
      `INSERT INTO job_pages (job_id, url_key, url, depth, state)
       SELECT $1, k, u, d, 'waiting' FROM unnest($2::text[], $3::text[], $4::int[]) AS f(k, u, d)
       ON CONFLICT (job_id, url_key) DO NOTHING RETURNING url_key`,
      [jobId, pages.map((p) => p.key), pages.map((p) => p.url), pages.map((p) => p.depth)],
    );
    return rows.length;
  }

  /**
   * Admits waiting pages, shallowest and earliest found first, up to the limit: under the job row's
   * lock, so two replicas never admit past it. Answers the pages admitted (now `queued`).
   */
  async admit(tx: Queryable, jobId: string): Promise<Array<{ key: string; url: string }>> {
    const [job] = await tx.query<{ status: string; room: number }>(
      'SELECT status, page_limit - admitted AS room FROM jobs WHERE id = $1 FOR UPDATE',
      [jobId],
    );
    if (!job || job.status !== 'running' || job.room <= 0) return [];
    const rows = await tx.query<{ key: string; url: string }>(
      `UPDATE job_pages SET state = 'queued'
        WHERE job_id = $1 AND url_key IN (
          SELECT url_key FROM job_pages WHERE job_id = $1 AND state = 'waiting' ORDER BY depth, found LIMIT $2)
        RETURNING url_key AS key, url`,
      [jobId, job.room],
    );
    if (rows.length) await tx.query('UPDATE jobs SET admitted = admitted + $2 WHERE id = $1', [jobId, rows.length]);
    return rows;
  }

  /**
   * A worker takes a page of a running job: queued (or fetching, when the worker before it died) →
   * fetching, one more attempt. Undefined when the page is already settled (another worker's task
   * did it) or the job no longer runs.
   */
  async claim(jobId: string, key: string): Promise<PageClaim | undefined> {
    const [row] = await this.db.query<PageClaim>(
      `UPDATE job_pages SET state = 'fetching', attempt = attempt + 1
        WHERE job_id = $1 AND url_key = $2 AND state IN ('queued', 'fetching')
          AND EXISTS (SELECT 1 FROM jobs WHERE id = $1 AND status = 'running')
        RETURNING url, depth, attempt`,
      [jobId, key],
    );
    return row;
  }

  /**
   * Delivers a page the worker fetched, if the job is still running and the page is still this
   * attempt's. False when it is not (cancelled meanwhile, or a later attempt took over). A job
   * that ended takes no more pages, so its counts are final with its status.
   */
  async deliver(
    tx: Queryable,
    jobId: string,
    key: string,
    attempt: number,
    page: { url: string; statusCode: number; content: string; links: string[] | null; credits: number },
  ): Promise<boolean> {
    const [running] = await tx.query("SELECT 1 FROM jobs WHERE id = $1 AND status = 'running' FOR UPDATE", [jobId]);
    if (!running) return false;
    const rows = await tx.query(
      `UPDATE job_pages SET state = 'done', seq = nextval('job_page_delivered'), final_url = $4, status_code = $5, content = $6, links = $7::jsonb, charged = $8
        WHERE job_id = $1 AND url_key = $2 AND attempt = $3 AND state = 'fetching' RETURNING url_key`,
      [jobId, key, attempt, page.url, page.statusCode, page.content, page.links ? jsonbText(page.links) : null, page.credits],
    );
    if (!rows.length) return false;
    // The page's credit counts with its delivery, in the same commit: whichever page completes the
    // job, its counts and `credits_used` agree (the capture follows; see `uncharged`).
    await tx.query('UPDATE jobs SET completed = completed + 1, credits_used = credits_used + $2 WHERE id = $1', [jobId, page.credits]);
    return true;
  }

  /**
   * Takes back what a delivered page was counted for but not charged (its hold was gone when it
   * was captured: returned by the sweeper after a long stall). Answers the job when it has ended.
   */
  async uncharged(jobId: string, key: string, credits: number): Promise<JobRow | undefined> {
    if (credits <= 0) return undefined;
    const [row] = await this.db.query<JobRow>(
      `WITH p AS (UPDATE job_pages SET charged = charged - $3 WHERE job_id = $1 AND url_key = $2 RETURNING job_id)
       UPDATE jobs SET credits_used = credits_used - $3 WHERE id = $1 RETURNING ${JOB_COLUMNS}`,
      [jobId, key, credits],
    );
    return row && row.status !== 'running' && row.status !== 'queued' ? row : undefined;
  }

  /**
   * A page that will not be delivered: `failed` (the target could not be read) or `skipped` (the
   * job ended first). It gives its place under the limit back to a waiting page.
   */
  async drop(q: Queryable, jobId: string, key: string, state: 'failed' | 'skipped', error: string | null, attempt?: number): Promise<boolean> {
    // The job row first, as every other statement of a job locks it: never a page, then the job.
    await q.query('SELECT 1 FROM jobs WHERE id = $1 FOR UPDATE', [jobId]);
    const rows = await q.query(
      `UPDATE job_pages SET state = $3, error = $4
        WHERE job_id = $1 AND url_key = $2 AND state IN ('queued', 'fetching') AND ($5::int IS NULL OR attempt = $5) RETURNING url_key`,
      [jobId, key, state, error, attempt ?? null],
    );
    if (!rows.length) return false;
    await q.query(`UPDATE jobs SET admitted = admitted - 1, failed_pages = failed_pages + $2 WHERE id = $1`, [jobId, state === 'failed' ? 1 : 0]);
    return true;
  }

  /** Puts a page back in the queue's hands (the process is stopping): the next attempt starts it over. */
  async unclaim(jobId: string, key: string, attempt: number, q: Queryable = this.db): Promise<boolean> {
    const rows = await q.query(
      `UPDATE job_pages SET state = 'queued' WHERE job_id = $1 AND url_key = $2 AND attempt = $3 AND state = 'fetching' RETURNING url_key`,
      [jobId, key, attempt],
    );
    return rows.length > 0;
  }

  /** Whether credits are held under this prefix of request ids (a job's pages in flight). */
  async pagesHolding(requestPrefix: string): Promise<boolean> {
    const rows = await this.db.query("SELECT 1 FROM credit_holds WHERE starts_with(request_id, $1) LIMIT 1", [requestPrefix]);
    return rows.length > 0;
  }

  /** Records why the job's webhook could not be delivered (a private address...). */
  async webhookFailed(jobId: string, reason: string): Promise<void> {
    await this.db.query('UPDATE jobs SET webhook_error = $2 WHERE id = $1', [jobId, reason]);
  }

  /** Sets the credits of the request that created the job, once the job has settled them all. */
  async settleHistory(job: JobRow): Promise<void> {
    await this.db.query('UPDATE request_history SET credits = $2 WHERE request_id = $1', [job.request_id, job.credits_used]);
  }

  /**
   * Takes one of `host`'s `slots` for a fetch: answers the slot, or 0 when all are taken (or
   * resting for the crawl-delay). The slot is leased for `leaseMs`, a fetch's longest time, so a
   * process that dies mid-fetch frees it when the lease ends. SKIP LOCKED: two processes asking at
   * once never take the same slot.
   */
  async claimHostSlot(host: string, slots: number, leaseMs: number): Promise<number> {
    const seeded = `${slots} ${host}`;
    // The slot rows are made on a host's first fetch here; when none is free they are made again
    // (they may be missing: the daily cleanup deletes idle hosts' rows, in any process).
    if (!this.#seededHosts.has(seeded)) await this.#seedHost(host, slots, seeded);
    let slot = await this.#takeSlot(host, slots, leaseMs);
    if (slot === 0) {
      await this.#seedHost(host, slots, seeded);
      slot = await this.#takeSlot(host, slots, leaseMs);
    }
    return slot;
  }

  async #seedHost(host: string, slots: number, seeded: string): Promise<void> {
    await this.db.query(
      `INSERT INTO job_host_slots (host, slot, free_at) SELECT $1, g, '-infinity' FROM generate_series(1, $2::int) AS g ON CONFLICT DO NOTHING`,
      [host, slots],
    );
    if (this.#seededHosts.size >= 10_000) this.#seededHosts.clear();
    this.#seededHosts.add(seeded);
  }

  async #takeSlot(host: string, slots: number, leaseMs: number): Promise<number> {
    const [row] = await this.db.query<{ slot: number }>(
      `UPDATE job_host_slots SET free_at = clock_timestamp() + make_interval(secs => $3::float8 / 1000)
        WHERE (host, slot) = (SELECT host, slot FROM job_host_slots WHERE host = $1 AND slot <= $2 AND free_at <= clock_timestamp()
                               ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING slot`,
      [host, slots, leaseMs],
    );
    return row ? Number(row.slot) : 0;
  }

  /**
   * The fetch on `slot` ended: the slot is free again after `delayMs` (the host's crawl-delay), so
   * the site sees that delay between one request's end and the next one's start, however late a
   * request left this process.
   */
  async releaseHostSlot(host: string, slot: number, delayMs: number): Promise<void> {
    await this.db.query(
      'UPDATE job_host_slots SET free_at = clock_timestamp() + make_interval(secs => $3::float8 / 1000) WHERE host = $1 AND slot = $2',
      [host, slot, delayMs],
    );
  }

  /** Deletes jobs (with their pages and events) past their retention, and stale host slots. */
  async deleteExpired(): Promise<number> {
    const rows = await this.db.query('DELETE FROM jobs WHERE expires_at < clock_timestamp() RETURNING id');
    await this.db.query("DELETE FROM webhook_events WHERE expires_at < clock_timestamp()");
    await this.db.query("DELETE FROM job_host_slots WHERE free_at < clock_timestamp() - interval '1 day'");
    return rows.length;
  }

  /** Jobs per status, for the metrics. */
  async countByStatus(): Promise<Array<{ status: string; jobs: number }>> {
    const rows = await this.db.query<{ status: string; jobs: number }>('SELECT status, count(*)::int AS jobs FROM jobs GROUP BY status');
    return rows.map((r) => ({ status: r.status, jobs: Number(r.jobs) }));
  }
}
