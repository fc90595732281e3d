/**
 * The shared contract of every upstream adapter (search engines, forums, microblogs, web pages).
 *
 * An adapter is a pure pair, as SearXNG's engines are: `buildRequest` turns our parameters into
 * one upstream request, `parse` turns the upstream answer into an outcome. Neither touches the
 * network; the upstream runtime (runtime.ts) owns every side effect: fetching through the outbound
 * client or the browser, decoding, the deadline, the caller's abort, retries, the circuit breaker,
 * and logging what failed.
 */
import type { RenderOptions } from '../../browser/types.ts';

export type UpstreamMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface UpstreamRequest {
  url: string;
  method: UpstreamMethod;
  headers: Record<string, string>;
  body?: string;
  /** How to render the page when the request is loaded in the browser (`via: 'browser'`). */
  render?: RenderOptions;
}

export interface UpstreamResponse {
  status: number;
  /** The final URL after redirects (a redirect to a captcha page is a block signal). */
  url: string;
  headers: Record<string, string>;
  /** The body decoded to text by its declared charset (decoded on first read). */
  readonly body: string;
  /** The body as it came (a rendered page's HTML in UTF-8), for parsers that sniff bytes; the runtime always sets it. */
  bytes?: Uint8Array;
}

/**
 * What a parser concluded. Only `ok` carries a value. Everything else says why there is none,
 * because "nothing there" and "we were refused" must never be confused:
 * - `empty`: a clean answer with nothing in it (a search without results);
 * - `not_found`: the thing asked for does not exist upstream (a deleted post, an unknown user);
 * - `blocked`: refused, rate-limited, a captcha, consent wall or JavaScript-only shell;
 * - `changed`: an answer the parser cannot read: the upstream changed its markup or schema.
 */
export type ParseOutcome<T> =
  | { kind: 'ok'; value: T }
  | { kind: 'empty' }
  | { kind: 'not_found'; reason?: string }
  | { kind: 'blocked'; reason: string }
  | { kind: 'changed'; reason: string };

/**
 * What one upstream call came to: the parser's outcome, or why there was nothing to parse.
 * - `timeout`: the call's deadline passed;
 * - `unreachable`: no answer (DNS, refused, reset, TLS, a transport that refused the URL), `error` says which;
 * - `suspended`: not called at all, the upstream's circuit is open (it was blocked or unreachable lately).
 * Every non-ok outcome carries the upstream's HTTP status when an answer came.
 * A call whose caller went away does not end in an outcome: it rejects with the signal's reason.
 */
export type CallOutcome<T> =
  | (ParseOutcome<T> & { status?: number; error?: unknown })
  | { kind: 'timeout'; reason: string; error: unknown; status?: undefined }
  | { kind: 'unreachable'; reason: string; error: unknown; status?: undefined }
  | { kind: 'suspended'; reason: string; status?: undefined };

export { VERDICTS } from '../../core/upstream-events.ts';
export type { RuntimeEvent, Verdict } from '../../core/upstream-events.ts';

/** The subset of a pino/fastify logger the runtime writes to (a request's logger carries its id). */
export interface UpstreamLogger {
  warn(details: Record<string, unknown>, message: string): void;
  info?(details: Record<string, unknown>, message: string): void;
  debug?(details: Record<string, unknown>, message: string): void;
  child?(bindings: Record<string, unknown>): UpstreamLogger;
}

/**
 * The per-call context every upstream call gets from the request it serves (as Firecrawl's
 * `Meta`): the request's abort signal, its logger and id. It reaches every adapter call, every
 * interceptor and the browser. Work done for no request (a probe, a shared token refresh) passes
 * the runtime's own logger and no signal.
 */
export interface CallContext {
  /** The caller went away: the call stops and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Where the call's failures are logged: the request's logger. */
  log?: UpstreamLogger;
  requestId?: string;
  /**
   * Whose work it is (the user's id): the shared pools (browser pages, page conversions, PDF and
   * OCR) bound the work of one tenant and serve waiting tenants in turn. Work for no user leaves it
   * unset and is counted as the system's.
   */
  tenant?: string;
}


/** One upstream operation as a pure pair, plus what the runtime needs to know about it. */
export interface Adapter<P, T> {
  /** The upstream, for logs and metrics ("reddit", "x", "bing"). */
  upstream: string;
  /** The operation on it ("listing", "TweetResultByRestId"). */
  operation: string;
  /** Load the request in the headless browser instead of plain HTTP. */
  via?: 'http' | 'browser';
  /** The upstream's public base URL, when it has one of its own (operators may override it). */
  baseUrl?: string;
  /** Safe to send twice even though not a GET (so a retry may repeat it). Default: GET only. */
  idempotent?: boolean;
  buildRequest(params: P, context: RequestContext): UpstreamRequest;
  /** A promise when the parser reads a large answer in slices, yielding to the event loop (sitemaps). */
  parse(response: UpstreamResponse, params: P): ParseOutcome<T> | Promise<ParseOutcome<T>>;
}

export interface RequestContext {
  /** The upstream's base URL (configurable, so tests and operators can point it elsewhere). */
  baseUrl: string;
  now: Date;
}
