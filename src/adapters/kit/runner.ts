/**
 * The runner every adapter goes through: it fetches an adapter's request through the outbound
 * client (or renders it in the headless browser), decodes the body, applies the time limit and
 * the caller's abort, runs the pure parser, and logs which upstream and operation failed.
 */
import { raceAbort } from '../../core/abort.ts';
import { OutboundError, type OutboundClient } from '../../outbound/types.ts';
import type { BrowserPool } from '../../browser/types.ts';
import { decodeBody, headerValue } from './decode.ts';
import type { Adapter, ParseOutcome, UpstreamRequest, UpstreamResponse } from './types.ts';

/** Cap on one upstream answer's decoded body, unless a call sets its own. */
export const DEFAULT_MAX_UPSTREAM_BYTES = 10 * 1024 * 1024;

/** The subset of a pino/fastify logger the runner writes to. */
export interface UpstreamLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

/** Where pages that need a browser are rendered; null when no Chromium is installed. */
export type BrowserSource = () => Promise<Pick<BrowserPool, 'fetchPage'> | null>;

export interface FetchOptions {
  /** The upstream and operation, for the log ("reddit", "listing"). */
  upstream: string;
  operation: string;
  /** Deadline of the whole fetch (connect, body, render). */
  timeoutMs: number;
  maxBytes?: number;
  /** The caller went away: the fetch stops and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Route through PROXY_URL with the username rewritten for this country (ignored without it). */
  proxyCountry?: string;
  /** Load in the headless browser instead of plain HTTP. */
  via?: 'http' | 'browser';
  /** Log failures, blocks and unreadable answers (default true); a caller with its own log turns it off. */
  log?: boolean;
}

/**
 * What one upstream call came to, for whoever watches (the HTTP layer's metrics): the parser's
 * verdict, or `timeout`/`failed`/`aborted` for a fetch that produced nothing to parse.
 */
export interface UpstreamEvent {
  upstream: string;
  operation: string;
  verdict: ParseOutcome<unknown>['kind'] | 'timeout' | 'failed' | 'aborted';
  durationMs: number;
}

/** An outcome of the parser, or a fetch that never produced an answer to parse. */
export type RunOutcome<T> = ParseOutcome<T> | { kind: 'failed'; reason: string; error: unknown };

export interface UpstreamRunner {
  /** Fetches and decodes. Rejects with an `OutboundError`, or with the signal's reason on abort. */
  fetch(request: UpstreamRequest, options: FetchOptions): Promise<UpstreamResponse>;
  /**
   * Fetches and parses. Never rejects: a network failure or an abort is `failed` (a caller that
   * may have been aborted checks its signal), and a parser that throws is `changed` (the upstream
   * sent something it cannot read).
   */
  run<T>(request: UpstreamRequest, parse: (response: UpstreamResponse) => ParseOutcome<T>, options: FetchOptions): Promise<RunOutcome<T>>;
  /** Builds the adapter's request, runs it and parses the answer. */
  call<P, T>(adapter: Adapter<P, T>, params: P, options: Omit<FetchOptions, 'upstream' | 'operation' | 'via'> & { baseUrl: string }): Promise<RunOutcome<T>>;
}

export interface UpstreamRunnerOptions {
  outbound: OutboundClient;
  browser?: BrowserSource;
  logger?: UpstreamLogger;
  /** Clock handed to adapters whose requests carry dates. */
  now?: () => Date;
  /** Told the verdict of every call `run`/`call` makes (never throws into the call). */
  observe?: (event: UpstreamEvent) => void;
}

export function describeError(error: unknown): string {
  if (error instanceof OutboundError) return `${error.code}: ${error.message}`;
  if (error instanceof Error) return error.message;
  return String(error);
}

export function createUpstreamRunner(options: UpstreamRunnerOptions): UpstreamRunner {
  const { outbound, browser, logger } = options;
  const now = options.now ?? (() => new Date());

  /** The fetch under one deadline, whichever path serves it: both paths also get the signal. */
  async function fetchUpstream(request: UpstreamRequest, fetch: FetchOptions): Promise<UpstreamResponse> {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new OutboundError('timeout', `no answer within ${fetch.timeoutMs} ms`, request.url)), fetch.timeoutMs);
    const signal = fetch.signal ? AbortSignal.any([fetch.signal, deadline.signal]) : deadline.signal;
    try {
      return await raceAbort(fetchOnce(request, { ...fetch, signal }), signal);
    } finally {
      clearTimeout(timer);
    }
  }

  async function fetchOnce(request: UpstreamRequest, fetch: FetchOptions): Promise<UpstreamResponse> {
    const maxBytes = fetch.maxBytes ?? DEFAULT_MAX_UPSTREAM_BYTES;
    if (fetch.via === 'browser') {
      const pool = browser ? await browser() : null;
      if (!pool) throw new OutboundError('network', 'No headless browser is available.', request.url);
      const page = await pool.fetchPage({
        url: request.url,
        headers: request.headers,
        render: request.render,
        timeoutMs: fetch.timeoutMs,
        maxBytes,
        proxyCountry: fetch.proxyCountry,
        signal: fetch.signal,
      });
      return { status: page.status, url: page.url, headers: page.headers, body: page.body };
    }
    const response = await outbound.fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      maxBytes,
      timeoutMs: fetch.timeoutMs,
      proxyCountry: fetch.proxyCountry,
      signal: fetch.signal,
    });
    return {
      status: response.status,
      url: response.url,
      headers: response.headers,
      body: decodeBody(response.body, headerValue(response.headers, 'content-type')),
    };
  }

  function report<T>(outcome: RunOutcome<T>, request: UpstreamRequest, fetch: FetchOptions, status?: number): RunOutcome<T> {
    if (fetch.log === false || outcome.kind === 'ok' || outcome.kind === 'empty' || outcome.kind === 'not_found') return outcome;
    logger?.warn(
      { upstream: fetch.upstream, operation: fetch.operation, verdict: outcome.kind, status, reason: outcome.reason, url: redact(request.url) },
      `upstream ${fetch.upstream} ${fetch.operation}: ${outcome.kind}`,
    );
    return outcome;
  }

  async function run<T>(request: UpstreamRequest, parse: (response: UpstreamResponse) => ParseOutcome<T>, fetch: FetchOptions): Promise<RunOutcome<T>> {
    const started = performance.now();
    const outcome = await runOnce(request, parse, fetch);
    if (options.observe) {
      const verdict: UpstreamEvent['verdict'] =
        outcome.kind !== 'failed' ? outcome.kind : outcome.reason === 'aborted' ? 'aborted' : outcome.error instanceof OutboundError && outcome.error.code === 'timeout' ? 'timeout' : 'failed';
      try {
        options.observe({ upstream: fetch.upstream, operation: fetch.operation, verdict, durationMs: performance.now() - started });
      } catch {
        // A watcher's failure is not the upstream's.
      }
    }
    return outcome;
  }

  async function runOnce<T>(request: UpstreamRequest, parse: (response: UpstreamResponse) => ParseOutcome<T>, fetch: FetchOptions): Promise<RunOutcome<T>> {
    let response: UpstreamResponse;
    try {
      response = await fetchUpstream(request, fetch);
    } catch (error) {
      // An abort is the caller's own doing, not news about the upstream.
      if (fetch.signal?.aborted) return { kind: 'failed', reason: 'aborted', error };
      return report({ kind: 'failed', reason: describeError(error), error }, request, fetch);
    }
    let outcome: ParseOutcome<T>;
    try {
      outcome = parse(response);
    } catch (error) {
      outcome = { kind: 'changed', reason: `unreadable answer: ${describeError(error)}` };
    }
    return report(outcome, request, fetch, response.status);
  }

  return {
    fetch: fetchUpstream,
    run,
    call(adapter, params, call) {
      const request = adapter.buildRequest(params, { baseUrl: call.baseUrl, now: now() });
      return run(request, (response) => adapter.parse(response, params), {
        ...call,
        upstream: adapter.upstream,
        operation: adapter.operation,
        via: adapter.via,
      });
    },
  };
}

/** The URL without its query: queries can carry tokens, and logs should not. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '';
  }
}
