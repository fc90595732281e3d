/**
 * Crawl and batch jobs as the operator sees them, every user's: list, show (with its webhook
 * deliveries), cancel. Read and changed through the tables alone, so the command line can do it
 * from another process: the server's workers skip a cancelled job's remaining pages and deliver
 * none of them (they check the job's status at delivery), so no process needs to be told.
 */
import { FINAL_STATUSES, JOB_STATUSES, JobStore, type JobRow, type JobStatus } from '../jobs/store.ts';
import { WebhookEventStore, type WebhookEventSummary } from '../webhooks/events.ts';
import { OperationError } from './errors.ts';
import { filterIssue, idIssue, notOneOfIssue, oneOfIssue, ownedBy, wholeNumberIssue } from './rules.ts';
import { requireUser } from './users.ts';
import type { OperationStores } from './stores.ts';
import { isoMicros } from '../core/time.ts';

export const DEFAULT_JOB_LIST_LIMIT = 50;
export const MAX_JOB_LIST_LIMIT = 500;

export interface JobListRow {
  id: string;
  user: number;
  kind: JobRow['kind'];
  status: JobStatus;
  /** A crawl's start URL; a batch's size ("3 URLs"). */
  url: string;
  /** Pages queued, being fetched or delivered (the `total` users read). */
  total: number;
  completed: number;
  failed_pages: number;
  credits_used: number;
  created_at: string;
  finished_at: string | null;
  expires_at: string;
}

export interface JobDetail extends JobListRow {
  started_at: string | null;
  /** The request that created the job: its history row shows what the job cost. */
  request_id: string;
  params: Record<string, unknown>;
  error: string | null;
  /** Where the job's events go and which ones; the signing secret is the user's and never shown. */
  webhook: { url: string; events: string[] } | null;
  /** Why the webhook could not be delivered (a private address...). */
  webhook_error: string | null;
  /** The job's events and how their delivery went, oldest first. */
  webhook_events: WebhookEventSummary[];
}

/** ISO 8601 UTC with microseconds, as every timestamp of the service. */
const iso = (date: Date | string) => isoMicros(date);
const isoOrNull = (date: Date | string | null) => (date === null ? null : iso(date));

const noJob = (job: string) => OperationError.notFound(`There is no job ${job}.`);

function described(job: JobRow): string {
  if (job.kind === 'crawl') return String(job.params.url ?? '');
  const count = Array.isArray(job.params.urls) ? job.params.urls.length : 0;
  return `${count} URL${count === 1 ? '' : 's'}`;
}

function listRow(job: JobRow): JobListRow {
  return {
    ...ownedBy(job),
    kind: job.kind,
    status: job.status,
    url: described(job),
    total: job.admitted,
    completed: job.completed,
    failed_pages: job.failed_pages,
    credits_used: job.credits_used,
    created_at: iso(job.created_at),
    finished_at: isoOrNull(job.finished_at),
    expires_at: iso(job.expires_at),
  };
}

const statusIssue = (value: unknown) => (typeof value === 'string' ? oneOfIssue('status', value, JOB_STATUSES) : notOneOfIssue('status', JOB_STATUSES));

/** Newest first; `user` and `status` narrow it. */
export async function listJobs(stores: OperationStores, input: { user?: number; status?: JobStatus; limit?: number } = {}): Promise<JobListRow[]> {
  OperationError.throwIfAny([
    filterIssue('user', input.user, (value) => idIssue('user', value)),
    filterIssue('status', input.status, statusIssue),
    filterIssue('limit', input.limit, (value) => wholeNumberIssue('limit', value, 1, MAX_JOB_LIST_LIMIT)),
  ]);
  const user = input.user === undefined ? undefined : await requireUser(stores, input.user);
  const rows = await new JobStore(stores.db).list({ userId: user, status: input.status, limit: input.limit ?? DEFAULT_JOB_LIST_LIMIT });
  return rows.map(listRow);
}

/** One job, whoever it belongs to, with its parameters and webhook deliveries. */
export async function showJob(stores: OperationStores, input: { job: string }): Promise<JobDetail> {
  const store = new JobStore(stores.db);
  const job = await store.get(input.job);
  if (!job) throw noJob(input.job);
  if (FINAL_STATUSES.includes(job.status)) {
    // Pages that were settling when the job ended are charged after it: the creating request's
    // history row catches up with them here.
    await store.settleHistory(job);
  }
  const events = await new WebhookEventStore(stores.db).listForJob(job.id);
  return {
    ...listRow(job),
    started_at: isoOrNull(job.started_at),
    request_id: job.request_id,
    params: job.params,
    error: job.error,
    webhook: job.webhook ? { url: job.webhook.url, events: job.webhook.events } : null,
    webhook_error: job.webhook_error,
    webhook_events: events,
  };
}

/**
 * Cancels a job still queued or running: nothing more is fetched, delivered or billed. A job that
 * already ended answers its status unchanged.
 */
export async function cancelJob(stores: OperationStores, input: { job: string }): Promise<{ id: string; status: JobStatus }> {
  const store = new JobStore(stores.db);
  // Looked up first: an id that is no UUID names no job (and would be an error in SQL).
  const job = await store.get(input.job);
  if (!job) throw noJob(input.job);
  const ended = await store.finish(stores.db, job.id, 'cancelled');
  if (ended) {
    await store.settleHistory(ended);
    return { id: ended.id, status: ended.status };
  }
  // Ended meanwhile (completed, or cancelled by someone else): its status as it is now.
  const now = await store.get(job.id);
  return { id: job.id, status: now?.status ?? job.status };
}
