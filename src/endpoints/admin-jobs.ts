/**
 * Every user's crawl and batch jobs, for an owner account's token (src/operations/jobs.ts):
 * `gleaner jobs list|show|cancel` are the same operations on the command line. Unbilled, not
 * recorded in history. An unknown job is 404 `Not found.`, as a user's own job routes answer it.
 */
import { Type } from '@sinclair/typebox';
import { integer, max, min, oneOf, required, string } from '../validation/rules.ts';
import { field } from '../validation/schema.ts';
import { JOB_KINDS, JOB_STATUSES } from '../jobs/store.ts';
import type { Endpoint } from '../pipeline/endpoint.ts';
import { cancelJob, DEFAULT_JOB_LIST_LIMIT, listJobs, MAX_JOB_LIST_LIMIT, showJob } from '../operations/index.ts';
import { admin, adminRecordRows, deliveryAttempts, filled, literals, nullable, timestamp, userFilter } from './admin.ts';

const status = literals(JOB_STATUSES, 'queued, running, completed, cancelled, failed or stopped_no_credits.');

const JobRow = Type.Object({
  id: Type.String({ description: 'The job id (a UUID).' }),
  user: Type.Integer({ description: 'The user the job belongs to.' }),
  kind: literals(JOB_KINDS, '`crawl` or `batch`.'),
  status,
  url: Type.String({ description: "A crawl's start URL; a batch's size (`3 URLs`)." }),
  total: Type.Integer({ description: 'Pages queued, being fetched or delivered.' }),
  completed: Type.Integer({ description: 'Pages delivered.' }),
  failed_pages: Type.Integer({ description: 'Pages whose target could not be read (not billed).' }),
  credits_used: Type.Integer(),
  created_at: timestamp,
  finished_at: nullable(timestamp, 'When it ended; null while queued or running.'),
  expires_at: Type.String({ description: 'When the job and its results are deleted (7 days after creation).' }),
});

const WebhookEvent = Type.Object({
  id: Type.String({ description: 'The event id, the same in every delivery attempt.' }),
  type: Type.String({ description: '`crawl.page`, `batch.completed`…' }),
  state: literals(['pending', 'delivered', 'failed'] as const, '`pending` (being retried), `delivered` (answered 2xx) or `failed` (given up).'),
  ...deliveryAttempts,
});

const JobDetail = Type.Composite([
  JobRow,
  Type.Object({
    started_at: nullable(timestamp, 'When it started running; null while queued.'),
    request_id: Type.String({ description: 'The request that created it: its history row shows what the job cost.' }),
    params: Type.Record(Type.String(), Type.Unknown(), { description: 'What the job was created with (`POST /v1/crawl` or `/v1/batch`).' }),
    error: nullable(Type.String(), 'Why it failed or stopped.'),
    webhook: nullable(Type.Object({ url: Type.String(), events: Type.Array(Type.String()) }), "Where its events are POSTed; the user's signing secret is never shown."),
    webhook_error: nullable(Type.String(), 'Why its webhook could not be delivered.'),
    webhook_events: Type.Array(WebhookEvent, { description: 'Oldest first.' }),
  }),
]);

const jobExample = {
  id: '0b9f0d8e-3c1a-4f6e-9d2b-7a5c4e3f2a10',
  user: 2,
  kind: 'crawl',
  status: 'running',
  url: 'https://example.com/docs/',
  total: 12,
  completed: 2,
  failed_pages: 0,
  credits_used: 2,
  created_at: '2026-11-22T10:15:30.123000Z',
  finished_at: null,
  expires_at: '2026-11-29T10:15:30.123000Z',
};

const jobParam = field({ in: 'path', rules: [required(), string()], description: 'The job id (a UUID).', example: jobExample.id });

const listFields = {
  user: userFilter,
  status: field({ rules: [filled(), string(), oneOf(JOB_STATUSES)], description: 'Only jobs in this status.', example: 'running' }),
  limit: field({ rules: [filled(), integer(), min(1), max(MAX_JOB_LIST_LIMIT)], default: DEFAULT_JOB_LIST_LIMIT, description: 'Jobs at most.', example: 20 }),
};

export const ADMIN_JOB_ENDPOINTS: readonly Endpoint[] = [
  ...adminRecordRows({
    path: '/admin/jobs',
    key: 'job',
    list: {
      summary: 'List jobs',
      description: "Every user's crawls and batches, newest first; `user` and `status` narrow the list. A field the route does not take is a 422.",
      fields: listFields,
      answer: 'The jobs.',
      row: JobRow,
      example: jobExample,
      read: listJobs,
    },
    show: {
      summary: 'A job',
      description: 'Any user’s job, with its parameters, its webhook (never the signing secret) and how each of its webhook events was delivered.',
      fields: { job: jobParam },
      answer: 'The job.',
      detail: JobDetail,
      example: {
        ...jobExample,
        started_at: '2026-11-22T10:15:30.456000Z',
        request_id: '9b2c4e1a-7d3f-4a5b-8c6d-1e2f3a4b5c6d',
        params: { url: 'https://example.com/docs/', limit: 100, max_depth: 3, format: 'markdown' },
        error: null,
        webhook: { url: 'https://example.com/hooks/gleaner', events: ['completed'] },
        webhook_error: null,
        webhook_events: [],
      },
      read: showJob,
    },
  }),
  admin({
    method: 'DELETE',
    path: '/admin/jobs/{job}',
    summary: 'Cancel a job',
    description:
      'Stops any user’s queued or running job: nothing more is fetched, delivered or billed; pages already delivered stay readable. A job that already ended answers its status unchanged.',
    fields: { job: jobParam },
    answer: 'The job’s status now.',
    schema: Type.Object({ id: Type.String(), status }),
    example: { id: jobExample.id, status: 'cancelled' },
    errors: [404],
    ownRouteNotFound: true,
    handler: ({ input, stores }) => cancelJob(stores, input),
  }),
];
