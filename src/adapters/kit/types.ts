/**
 * The shared contract of every upstream adapter (search engines, forums, microblogs, web pages).
 *
 * An adapter is a pure pair, as SearXNG's engines are: `buildRequest` turns our parameters into
 * one upstream request, `parse` turns the upstream answer into an outcome. Neither touches the
 * network; the runner (runner.ts) owns every side effect: fetching through the outbound client or
 * the browser, decoding, the time limit, the caller's abort, and logging what failed.
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
  /** The body decoded to text by its declared charset. */
  body: string;
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

export type Verdict = ParseOutcome<unknown>['kind'];

/** One upstream operation as a pure pair, plus what the runner needs to know about it. */
export interface Adapter<P, T> {
  /** The upstream, for logs and metrics ("reddit", "x", "bing"). */
  upstream: string;
  /** The operation on it ("listing", "TweetResultByRestId"). */
  operation: string;
  /** Load the request in the headless browser instead of plain HTTP. */
  via?: 'http' | 'browser';
  buildRequest(params: P, context: RequestContext): UpstreamRequest;
  parse(response: UpstreamResponse, params: P): ParseOutcome<T>;
}

export interface RequestContext {
  /** The upstream's base URL (configurable, so tests and operators can point it elsewhere). */
  baseUrl: string;
  now: Date;
}
