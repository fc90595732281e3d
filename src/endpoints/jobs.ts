/**
 * Crawl and batch jobs (contract §9, docs/jobs.md): POST creates the job and answers at once;
 * GET reads its status and pages of results; DELETE cancels it. The pages are billed one by one
 * by the job's workers as they are delivered (1 credit each, price `crawl_page`), never here: the
 * rows declare the product and the price so that history and the docs show them, and hold nothing.
 */
import { Type } from '@sinclair/typebox';
import { httpErrors, type FieldErrors } from '../core/errors.ts';
import { between, boolean, custom, httpUrlOrNull, integer, isAbsent, min, object, oneOf, publicAddress, required, string, stringList, url, urlMessage } from '../validation/rules.ts';
import { OUTPUT_FORMATS } from '../adapters/web/index.ts';
import { compilePathPatterns } from '../adapters/site/urls.ts';
import { defineEndpoint, type Endpoint, type EndpointContext, type HandlerServices, type PriceText } from '../pipeline/endpoint.ts';
import type { Fields, InputOf } from '../validation/schema.ts';
import type { JobKind, JobRow, PageRow, WebhookTarget } from '../jobs/store.ts';
import { WEB_MESSAGES } from './web.ts';
import { isoMicros } from '../core/time.ts';

export const JOB_EVENTS = ['started', 'page', 'completed', 'failed'] as const;
export const CRAWL_LIMITS = { maxPages: 10_000, defaultPages: 100, maxDepth: 20, defaultDepth: 3, maxBatchUrls: 1_000 } as const;
/** Pages of results per answer, and the content they may add up to before `next` takes over. */
const RESULTS_PER_PAGE = 100;
const RESULTS_MAX_BYTES = 10 * 1024 * 1024;

const webhookShape = custom('webhook', () => true, '', {
  describe: (schema) =>
    Object.assign(schema, {
      type: 'object',
      required: ['url'],
      properties: {
        url: { type: 'string', format: 'uri', description: 'Where events are POSTed.' },
        events: { type: 'array', items: { type: 'string', enum: [...JOB_EVENTS] }, description: 'Default: all of them.' },
      },
    }),
});

const webhookField = {
  rules: [object(), webhookShape],
  description: "POSTed a signed event (docs/webhooks.md) at each of `events` (default: all of started, page, completed, failed). The URL must be public when each event is delivered.",
  example: { url: 'https://example.com/hooks/gleaner', events: ['completed'] },
};

const formatField = { rules: [string(), oneOf(OUTPUT_FORMATS)], default: 'markdown', description: 'Each page as `markdown` (main content), `text`, or `raw` HTML.' };
const linksField = { rules: [boolean()], default: false, description: "Add each page's links (absolute, deduplicated, in page order)." };

/** `webhook`: an object with an http(s) `url` and known `events`; errors keyed as Laravel keys nested fields. */
function checkWebhook(value: unknown, errors: FieldErrors): void {
  if (isAbsent(value) || typeof value !== 'object' || value === null) return;
  const hook = value as Record<string, unknown>;
  if (typeof hook.url !== 'string' || hook.url.trim() === '') errors['webhook.url'] = ['The webhook.url field is required.'];
  else if (!httpUrlOrNull(hook.url)) errors['webhook.url'] = [urlMessage('webhook.url', hook.url)];
  if (hook.events !== undefined && hook.events !== null) {
    if (!Array.isArray(hook.events)) errors['webhook.events'] = ['The webhook.events must be an array.'];
    else {
      hook.events.forEach((event, index) => {
        if (!(JOB_EVENTS as readonly unknown[]).includes(event)) errors[`webhook.events.${index}`] = [`The selected webhook.events.${index} is invalid.`];
      });
    }
  }
}

function webhookTarget(value: unknown): WebhookTarget | null {
  if (isAbsent(value) || typeof value !== 'object' || value === null) return null;
  const hook = value as { url: string; events?: string[] | null };
  return { url: hook.url.trim(), events: hook.events?.length ? [...new Set(hook.events)] : [...JOB_EVENTS] };
}

function checkPatterns(name: 'include_paths' | 'exclude_paths', value: unknown, errors: FieldErrors): void {
  if (isAbsent(value) || !Array.isArray(value)) return;
  const compiled = compilePathPatterns(value);
  if (!compiled.ok) {
    const key = compiled.index === null ? name : `${name}.${compiled.index}`;
    errors[key] = [compiled.message(name)];
  }
}

const JobCreated = Type.Object({ id: Type.String(), status: Type.String(), url: Type.String() });

const JobView = Type.Object({
  id: Type.String(),
  status: Type.String({ description: 'queued, running, completed, cancelled, failed or stopped_no_credits.' }),
  total: Type.Integer({ description: 'Pages queued, being fetched or delivered.' }),
  completed: Type.Integer({ description: 'Pages delivered.' }),
  credits_used: Type.Integer(),
  created_at: Type.String(),
  expires_at: Type.String({ description: 'When the job and its results are deleted (7 days after creation).' }),
  error: Type.Optional(Type.String({ description: 'Why a failed job failed.' })),
  data: Type.Array(
    Type.Object({
      url: Type.String(),
      status_code: Type.Integer(),
      content: Type.String(),
      links: Type.Optional(Type.Array(Type.String())),
    }),
  ),
  next: Type.Union([Type.String(), Type.Null()], { description: 'The next page of results, or null.' }),
});

const jobViewExample = {
  id: '0b9f0d8e-3c1a-4f6e-9d2b-7a5c4e3f2a10',
  status: 'running',
  total: 12,
  completed: 2,
  credits_used: 2,
  created_at: '2026-11-26T10:00:00.000000Z',
  expires_at: '2026-12-03T10:00:00.000000Z',
  data: [{ url: 'https://example.com/', status_code: 200, content: '# Example Domain\n\nThis domain is for use in examples.' }],
  next: null,
};

/** Refuses a job the user cannot pay one page of, before anything is queued. */
async function requireOnePage(meter: EndpointContext<unknown>['meter']): Promise<void> {
  if ((await meter.affordable()) < 1) throw await meter.shortOf(1);
}

/**
 * The `POST` that creates a job of `kind`: it holds nothing (each page is billed as it is
 * delivered, at the `crawl_page` price), refuses a balance that cannot pay one page and a blocked
 * domain, and answers 201 with the job's id and URL at once. `job` reads the job's parameters,
 * its page limit, its webhook and the URL the blocked-domain rule judges (a crawl's start) from
 * the input.
 */
function createJobRow<const F extends Fields>(row: {
  kind: JobKind;
  operationId: string;
  summary: string;
  description: (prices: PriceText) => string;
  fields: F;
  refine(input: Record<string, unknown>, errors: FieldErrors): void;
  answer: string;
  job(input: InputOf<F>): { params: Record<string, unknown>; limit: number; url?: string; webhook: unknown };
}): Endpoint {
  return defineEndpoint<F>({
    method: 'POST',
    path: `/v1/${row.kind}`,
    operationId: row.operationId,
    summary: row.summary,
    description: row.description,
    tag: 'Jobs',
    input: 'body',
    objectBody: true,
    schema: { fields: row.fields, refine: row.refine },
    billing: { product: 'scraping', operation: 'crawl_page', units: () => 0 },
    history: true,
    success: { status: 201, description: row.answer, schema: JobCreated, example: { id: jobViewExample.id, status: 'queued', url: `https://api.example.com/v1/${row.kind}/${jobViewExample.id}` } },
    errors: [403],
    async handler({ input, services, user, requestId, routeUrl, meter }) {
      const { params, limit, url, webhook } = row.job(input);
      if (url !== undefined && services.capabilities.web().isBlocked(url)) throw httpErrors.forbidden(WEB_MESSAGES.domainNotSupported);
      await requireOnePage(meter);
      const created = await services.jobs.create({ kind: row.kind, userId: user.id, requestId, params, webhook: webhookTarget(webhook), limit });
      return { status: 201, body: { id: created.id, status: created.status, url: `${routeUrl}/${created.id}` } };
    },
  });
}

export const crawlEndpoint = createJobRow({
  kind: 'crawl',
  operationId: 'crawl',
  summary: 'Start a crawl of a site',
  description: ({ credits }) =>
    `Crawls the site from \`url\`: same-site links (subdomains with allow_subdomains) up to max_depth hops, plus the URLs of its sitemaps; robots.txt obeyed (user agent \`gleaner\`, its crawl-delay honoured); each URL once, by its canonical form. Each page is converted as /v1/web would (\`format\`) and costs ${credits('crawl_page')} when delivered; the crawl stops as \`stopped_no_credits\` when the balance runs out. Answers at once with the job's id; read the results with GET /v1/crawl/{id}.`,
  fields: {
    url: { rules: [required(), string(), url(), publicAddress()], example: 'https://example.com/docs/' },
    limit: { rules: [integer(), between(1, CRAWL_LIMITS.maxPages)], default: CRAWL_LIMITS.defaultPages, description: 'Pages delivered at most.' },
    max_depth: { rules: [integer(), between(0, CRAWL_LIMITS.maxDepth)], default: CRAWL_LIMITS.defaultDepth, description: 'Link hops from the start page (sitemap URLs count as one hop).' },
    include_paths: { rules: [stringList()], description: 'Regular expressions: only URLs whose path matches one of them are crawled (the start page is always fetched).', example: ['^/docs/'] },
    exclude_paths: { rules: [stringList()], description: 'Regular expressions: URLs whose path matches any of them are not crawled.', example: ['^/docs/archive/'] },
    allow_subdomains: { rules: [boolean()], default: false, description: "Follow links to any subdomain of the URL's registrable domain." },
    sitemap: { rules: [string(), oneOf(['include', 'skip', 'only'] as const)], default: 'include', description: '`include` the sitemaps’ URLs, `skip` them, or crawl `only` them (no link following).' },
    format: formatField,
    links: linksField,
    webhook: webhookField,
  },
  refine(input, errors) {
    checkPatterns('include_paths', input.include_paths, errors);
    checkPatterns('exclude_paths', input.exclude_paths, errors);
    checkWebhook(input.webhook, errors);
  },
  answer: 'The crawl is queued.',
  job: (input) => ({
    url: input.url,
    limit: input.limit,
    webhook: input.webhook,
    params: {
      url: input.url.trim(),
      limit: input.limit,
      max_depth: input.max_depth,
      include_paths: input.include_paths ?? [],
      exclude_paths: input.exclude_paths ?? [],
      allow_subdomains: input.allow_subdomains,
      sitemap: input.sitemap,
      format: input.format,
      links: input.links,
    },
  }),
});

export const batchEndpoint = createJobRow({
  kind: 'batch',
  operationId: 'batch',
  summary: 'Start a batch of pages',
  description: ({ credits }) =>
    `Fetches up to ${CRAWL_LIMITS.maxBatchUrls} URLs as one job, each as /v1/web would (\`format\`), each URL once by its canonical form; ${credits('crawl_page')} per page delivered. Read the results with GET /v1/batch/{id}.`,
  fields: {
    urls: { rules: [required(), stringList(), between(1, CRAWL_LIMITS.maxBatchUrls)], description: 'Absolute http(s) URLs.', example: ['https://example.com/', 'https://example.org/'] },
    format: formatField,
    links: linksField,
    webhook: webhookField,
  },
  refine(input, errors) {
    if (Array.isArray(input.urls)) {
      input.urls.forEach((value, index) => {
        if (typeof value !== 'string' || !httpUrlOrNull(value)) errors[`urls.${index}`] = [urlMessage(`urls.${index}`, value)];
      });
    }
    checkWebhook(input.webhook, errors);
  },
  answer: 'The batch is queued.',
  job: (input) => {
    const urls = input.urls.map((value) => value.trim());
    return { limit: urls.length, webhook: input.webhook, params: { urls, format: input.format, links: input.links } };
  },
});

const idField = { in: 'path' as const, rules: [required(), string()], description: 'The job id.', example: jobViewExample.id };

/** The caller's job of that id and kind; another user's, another kind's or an unknown id is 404. */
async function ownJob(services: HandlerServices, id: string, userId: number, kind: JobKind): Promise<JobRow> {
  const job = await services.jobs.get(id, userId);
  if (!job || job.kind !== kind) throw httpErrors.notFound();
  return job;
}

/** The rows on one job's URL: `GET` reads its status and results, `DELETE` cancels it. */
function jobUrlRows(kind: JobKind): Endpoint[] {
  const onJob = { path: `/v1/${kind}/{id}`, tag: 'Jobs', input: 'query' } as const;
  const name = kind === 'crawl' ? 'Crawl' : 'Batch';
  const view = defineEndpoint({
    ...onJob,
    method: 'GET',
    operationId: `get${name}`,
    summary: `A ${kind}: status and results`,
    description: `Status, counts and the pages delivered so far, oldest first, at most ${RESULTS_PER_PAGE} per answer: \`next\` is the URL of the next ones. Results are kept 7 days.`,
    schema: {
      fields: {
        id: idField,
        skip: { rules: [integer(), min(0)], default: 0, description: 'Pages of results to skip (what `next` sets).' },
      },
    },
    history: false,
    success: { status: 200, description: 'The job.', schema: JobView, example: jobViewExample },
    errors: [404],
    async handler({ input, services, user, routeUrl }) {
      const job = await ownJob(services, input.id, user.id, kind);
      const rows = await services.jobs.pages(job.id, input.skip, RESULTS_PER_PAGE + 1);
      const data = fitted(rows.slice(0, RESULTS_PER_PAGE));
      const more = rows.length > data.length;
      const base = routeUrl.replace('{id}', job.id);
      return { body: { ...jobSummary(job), data, next: more ? `${base}?skip=${input.skip + data.length}` : null } };
    },
  });
  const cancel = defineEndpoint({
    ...onJob,
    method: 'DELETE',
    operationId: `cancel${name}`,
    summary: `Cancel a ${kind}`,
    description: 'Stops the job: nothing more is fetched or billed. Pages already delivered stay readable. A job that already ended answers its own status.',
    schema: { fields: { id: idField } },
    history: true,
    success: { status: 200, description: 'The job’s status now.', schema: Type.Object({ status: Type.String() }), example: { status: 'cancelled' } },
    errors: [404],
    async handler({ input, services, user }) {
      const job = await ownJob(services, input.id, user.id, kind);
      const now = await services.jobs.cancel(job.id, user.id);
      return { body: { status: now?.status ?? job.status } };
    },
  });
  return [view, cancel];
}

/** The job's fields of the answer, as contract §9 names them. */
export function jobSummary(job: JobRow) {
  return {
    id: job.id,
    status: job.status,
    total: job.admitted,
    completed: job.completed,
    credits_used: job.credits_used,
    created_at: isoMicros(job.created_at),
    expires_at: isoMicros(job.expires_at),
    ...(job.error && job.status === 'failed' ? { error: job.error } : {}),
  };
}

/** As many result pages as fit in one answer (at least one, however large). */
function fitted(rows: PageRow[]) {
  const data = [];
  let bytes = 0;
  for (const row of rows) {
    bytes += row.content.length;
    if (data.length > 0 && bytes > RESULTS_MAX_BYTES) break;
    data.push({ url: row.url, status_code: row.status_code, content: row.content, ...(row.links ? { links: row.links } : {}) });
  }
  return data;
}

export const JOB_ENDPOINTS = [crawlEndpoint, ...jobUrlRows('crawl'), batchEndpoint, ...jobUrlRows('batch')];
