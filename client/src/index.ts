/**
 * The gleaner API client: one typed method per operation of the API (named by its operationId),
 * calls through openapi-fetch, errors thrown as `GleanerError` with the API's Laravel message and
 * field errors, opt-in waiting on `Retry-After` for 429 answers, and `requests()` walking the
 * request history page by page; `crawlPages`/`batchPages` follow a job to its end (jobs.ts) and
 * `verifyWebhook` checks a webhook's signature (webhooks.ts). Types and the operation table are
 * generated from /openapi.json (`npm run client:generate` in the gleaner repository).
 */
import createClient from 'openapi-fetch';
import type { components, operations, paths } from './schema.ts';
import { OPERATIONS } from './operations.ts';
import { sleep } from './sleep.ts';

export type { components, operations, paths };
export { OPERATIONS };
export { batchPages, crawlPages, FINAL_JOB_STATUSES, type JobPage, type JobPagesOptions, type JobView } from './jobs.ts';
export { verifyWebhook, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TOLERANCE_SECONDS, type VerifyWebhookOptions, type WebhookEvent } from './webhooks.ts';

export type OperationId = keyof typeof OPERATIONS & keyof operations;

type Json<T> = T extends { content: { 'application/json': infer J } } ? J : never;
type Present<T> = [T] extends [never] ? {} : [T] extends [undefined] ? {} : NonNullable<T>;
type PathParams<O> = O extends { parameters: { path?: infer P } } ? Present<P> : {};
type QueryParams<O> = O extends { parameters: { query?: infer Q } } ? Present<Q> : {};
type BodyParams<O> = O extends { requestBody: infer B } ? Present<Json<B>> : O extends { requestBody?: infer B } ? Partial<Present<Json<NonNullable<B>>>> : {};
type Flatten<T> = { [K in keyof T]: T[K] } & {};

/** What a method takes: its path parameters, query parameters and body fields, in one object. */
export type InputOf<K extends OperationId> = Flatten<PathParams<operations[K]> & QueryParams<operations[K]> & BodyParams<operations[K]>>;
/** What a method resolves to: the operation's success answer. */
export type OutputOf<K extends OperationId> = operations[K] extends { responses: infer R }
  ? { [S in keyof R]: S extends 200 | 201 ? Json<R[S]> : never }[keyof R]
  : never;

type NeedsInput<K extends OperationId> = {} extends InputOf<K> ? false : true;
export type GleanerMethods = {
  [K in OperationId]: NeedsInput<K> extends true ? (input: InputOf<K>, options?: CallOptions) => Promise<OutputOf<K>> : (input?: InputOf<K>, options?: CallOptions) => Promise<OutputOf<K>>;
};

export type HistoryRow = OutputOf<'listRequests'>['data'][number];
export type HistoryFilters = Omit<NonNullable<InputOf<'listRequests'>>, 'page'>;

/** Any answer other than a success: the API's message, its field errors (422) and Retry-After. */
export class GleanerError extends Error {
  readonly status: number;
  /** Field → messages, for a 422 ("The given data was invalid."). */
  readonly errors: Record<string, string[]>;
  /** Seconds to wait before retrying (429, 503), when the server said. */
  readonly retryAfter?: number;
  readonly operation: string;

  constructor(operation: string, status: number, body: unknown, retryAfter?: number) {
    const message = typeof (body as { message?: unknown })?.message === 'string' ? (body as { message: string }).message : `HTTP ${status}`;
    super(message);
    this.name = 'GleanerError';
    this.operation = operation;
    this.status = status;
    this.errors = ((body as { errors?: Record<string, string[]> })?.errors ?? {}) as Record<string, string[]>;
    this.retryAfter = retryAfter;
  }
}

export interface RetryOptions {
  /** Retries after the first attempt (default 3). */
  attempts?: number;
  /** A Retry-After longer than this is not waited for: the 429 is thrown (default 60 000 ms). */
  maxWaitMs?: number;
}

export interface GleanerClientOptions {
  /** The server, e.g. `http://localhost:8080`. */
  baseUrl: string;
  /** An API token, `<id>|<secret>`. */
  token: string;
  /** Wait for Retry-After and retry a 429 (opt-in: off unless given). */
  retry?: RetryOptions | boolean;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export type GleanerClient = GleanerMethods & {
  /** Every history row matching `filters`, newest first, fetching page after page as needed. */
  requests(filters?: HistoryFilters & { per_page?: number }, options?: CallOptions): AsyncIterableIterator<HistoryRow>;
};

/** Seconds of a Retry-After header (a number of seconds, or an HTTP date). */
function retryAfterSeconds(header: string | null): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

export function createGleanerClient(options: GleanerClientOptions): GleanerClient {
  const http = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { authorization: `Bearer ${options.token}`, accept: 'application/json' },
    fetch: options.fetch,
  });
  const retry = options.retry === true ? {} : options.retry || undefined;
  const attempts = retry ? (retry.attempts ?? 3) : 0;
  const maxWaitMs = retry?.maxWaitMs ?? 60_000;

  async function call(id: OperationId, input: Record<string, unknown> = {}, callOptions: CallOptions = {}): Promise<unknown> {
    const operation = OPERATIONS[id];
    const path: Record<string, unknown> = {};
    const rest: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(input)) ((operation.pathParams as readonly string[]).includes(key) ? path : rest)[key] = value;
    const init = {
      params: { path, query: operation.input === 'query' ? rest : undefined },
      body: operation.input === 'body' ? rest : undefined,
      signal: callOptions.signal,
    };
    for (let attempt = 0; ; attempt++) {
      const { data, error, response } = await (http.request as (method: string, url: string, init: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>)(
        operation.method.toLowerCase(),
        operation.path,
        init,
      );
      if (response.ok) return data;
      const wait = retryAfterSeconds(response.headers.get('retry-after'));
      if (response.status === 429 && attempt < attempts && wait !== undefined && wait * 1000 <= maxWaitMs) {
        await sleep(wait * 1000, callOptions.signal);
        continue;
      }
      throw new GleanerError(id, response.status, error, wait);
    }
  }

  const methods = Object.fromEntries(
    (Object.keys(OPERATIONS) as OperationId[]).map((id) => [id, (input?: Record<string, unknown>, callOptions?: CallOptions) => call(id, input, callOptions)]),
  ) as unknown as GleanerMethods;

  return {
    ...methods,
    async *requests(filters = {}, callOptions = {}) {
      for (let page = 1; ; page++) {
        const result = (await call('listRequests', { ...filters, page }, callOptions)) as OutputOf<'listRequests'>;
        yield* result.data;
        if (!result.next_page_url) return;
      }
    },
  };
}
