/**
 * The upstream runtime: the one runner every upstream call goes through (search engines, Reddit,
 * X, web pages, the captcha solver, document downloads). An adapter stays a pure pair
 * (`buildRequest`, `parse`); the runtime owns every side effect of a call:
 *
 *   circuit breaker → interceptors (retry, auth refresh, rate budget, account rotation) → transport → parse
 *
 * - one deadline per call, set once when the call starts and shared by every attempt, interceptor
 *   and transport (the outbound client and the browser get what remains of it);
 * - the caller's abort signal stops the call at once: it rejects with the signal's reason;
 * - the transport is the outbound client or the headless browser (`via: 'browser'`);
 * - a parser that throws read an answer it cannot: `changed`;
 * - every call ends in one verdict, told to the watchers (metrics, the drift report) and, when it
 *   is a failure, logged once on the request's logger with the request id, the upstream, the
 *   operation, the verdict, the status and the duration (never the query, a body or a credential).
 */
import { OutboundError, type OutboundClient } from '../../outbound/types.ts';
import { CaptchaUnsolvedError } from '../../browser/challenges.ts';
import type { BrowserPool } from '../../browser/types.ts';
import { raceAbort } from '../../core/abort.ts';
import { CircuitBreaker, type BreakerPolicy, type BreakerStore } from './breaker.ts';
import { decodeBody, headerValue } from './decode.ts';
import type { Adapter, CallContext, CallOutcome, RuntimeEvent, UpstreamLogger, UpstreamRequest, UpstreamResponse } from './types.ts';

/** Cap on one upstream answer's decoded body, unless a call sets its own. */
export const DEFAULT_MAX_UPSTREAM_BYTES = 10 * 1024 * 1024;

/** Where pages that need a browser are rendered; null when no Chromium is installed. */
export type BrowserSource = () => Promise<Pick<BrowserPool, 'fetchPage'> | null>;

/** One exchange with the upstream, as interceptors see it. */
export interface Exchange {
  readonly upstream: string;
  readonly operation: string;
  /** The request as built; an interceptor sends a changed copy (auth headers) through `next`. */
  readonly request: UpstreamRequest;
  /** Safe to send twice (GET, or declared so by the adapter): only such calls are retried. */
  readonly idempotent: boolean;
  /** The caller's signal and the call's deadline together. */
  readonly signal: AbortSignal;
  /** When the call's time is up (ms since the epoch). */
  readonly deadline: number;
  readonly log: UpstreamLogger;
  /** Facts interceptors add to the call's log line (which session served it). Never secrets. */
  readonly notes: Record<string, unknown>;
}

/** What one pass through the stack came to: the outcome, and the answer when there was one. */
export interface Attempt {
  outcome: CallOutcome<unknown>;
  response?: UpstreamResponse;
}

export type Send = (exchange: Exchange) => Promise<Attempt>;

/** Cross-cutting behaviour around one exchange: may change the request, send it again, or answer itself. */
export type Interceptor = (exchange: Exchange, next: Send) => Promise<Attempt>;

/** Per-call settings; an upstream's defaults come from its profile. */
export interface CallOptions {
  /** The upstream's base URL (configurable, so tests and operators can point it elsewhere). */
  baseUrl?: string;
  /** The call's deadline, all attempts included. */
  timeoutMs?: number;
  maxBytes?: number;
  /** Redirect hops followed (plain HTTP); default the outbound client's. */
  maxRedirects?: number;
  /** Route through PROXY_URL with the username rewritten for this country (ignored without it). */
  proxyCountry?: string;
  /** Called with every URL before it is requested (first and each redirect hop, plain or browser). Throw to refuse. */
  checkUrl?: (url: URL) => void;
  /** Called with every host a rendered page requests (the browser's guard proxy). Throw to refuse. */
  checkHost?: (hostname: string) => void;
  /** How to render, for `via: 'browser'` adapters (captcha solving needs a live function, so it is not the adapter's). */
  render?: UpstreamRequest['render'];
  /** Interceptors of this call only, inside the profile's. */
  interceptors?: readonly Interceptor[];
}

/** How calls to one upstream are made: defaults and the policies around them. */
export interface UpstreamProfile extends Omit<CallOptions, 'interceptors'> {
  timeoutMs: number;
  /** Retry policy; `false` never retries (a user's own request to an arbitrary site). Default: 2 attempts. */
  retry?: RetryPolicy | false;
  /**
   * Suspend the upstream when it keeps refusing or failing; `false` for arbitrary sites (one
   * site refusing says nothing of others). Default: the runtime's breaker policy.
   */
  breaker?: boolean;
  /** Interceptors of every call (auth, rate budget, rotation), outermost first, inside retry. */
  interceptors?: readonly Interceptor[];
}

/** One upstream as its client uses it: calls with the profile's settings and policies. */
export interface Upstream {
  call<P, T>(adapter: Adapter<P, T>, params: P, context: CallContext, options?: CallOptions): Promise<CallOutcome<T>>;
}

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  /** Delay before the second attempt; doubled after each, with ±50 % jitter. */
  baseDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 2, baseDelayMs: 200 };

export interface UpstreamRuntime {
  /** A client's handle on one upstream: its defaults, retry, breaker and interceptors. */
  upstream(profile: UpstreamProfile): Upstream;
  /** The circuit breaker shared by every upstream of the process (state in Redis in scaled mode). */
  readonly breaker: CircuitBreaker;
  /** The runtime's own logger, for work done for no request (probes, shared token refreshes). */
  readonly log: UpstreamLogger;
  /** Watches every call's verdict and every circuit change; returns how to stop watching. */
  observe(listener: (event: RuntimeEvent) => void): () => void;
}

export interface UpstreamRuntimeOptions {
  outbound: OutboundClient;
  browser?: BrowserSource;
  /** The service's logger: circuit changes, Redis trouble, and calls made for no request. */
  logger?: UpstreamLogger;
  /** Clock handed to adapters whose requests carry dates. */
  now?: () => Date;
  /** `enabled: false` never suspends an upstream (UPSTREAM_SUSPEND_MS=0). */
  breaker?: { enabled?: boolean; policy?: Partial<BreakerPolicy>; store?: BreakerStore };
}

const SILENT: UpstreamLogger = { warn() {} };
/** A signal that never aborts, for calls made for no request. */
const NEVER = new AbortController().signal;

export function describeError(error: unknown): string {
  if (error instanceof OutboundError) return `${error.code}: ${error.message}`;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** URLs in a reason, cut to their origin: a query or path can carry what the caller asked for. */
export function redactUrls(text: string): string {
  return text.replace(/\bhttps?:\/\/[^\s)"']+/gi, (url) => {
    try {
      return `${new URL(url).origin}/…`;
    } catch {
      return '…';
    }
  });
}

/** Verdicts that are news about the upstream (logged as failures). */
const FAILURES = new Set(['blocked', 'changed', 'timeout', 'unreachable', 'suspended']);

export function createUpstreamRuntime(options: UpstreamRuntimeOptions): UpstreamRuntime {
  const { outbound, browser } = options;
  const baseLog = options.logger ?? SILENT;
  const now = options.now ?? (() => new Date());
  const listeners = new Set<(event: RuntimeEvent) => void>();
  const emit = (event: RuntimeEvent) => {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch {
        // A watcher's failure is not the upstream's.
      }
    }
  };
  const breaker = new CircuitBreaker({ policy: options.breaker?.policy, store: options.breaker?.store, log: baseLog, emit });

  /** The transport: the outbound client or the browser, under the exchange's signal and what remains of its deadline. */
  async function transport(exchange: Exchange, options: CallOptions, via: 'http' | 'browser', tenant: string | undefined): Promise<UpstreamResponse> {
    const { request, signal } = exchange;
    const timeoutMs = Math.max(1, exchange.deadline - Date.now());
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_UPSTREAM_BYTES;
    if (via === 'browser') {
      const pool = browser ? await raceAbort(browser(), signal) : null;
      if (!pool) throw new OutboundError('network', 'No headless browser is available.', request.url);
      const page = await pool.fetchPage({
        url: request.url,
        headers: request.headers,
        render: options.render ?? request.render,
        timeoutMs,
        maxBytes,
        proxyCountry: options.proxyCountry,
        checkUrl: options.checkUrl,
        checkHost: options.checkHost,
        signal,
        tenant,
      });
      return { status: page.status, url: page.url, headers: page.headers, body: page.body, bytes: Buffer.from(page.body, 'utf8') };
    }
    const response = await outbound.fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      maxBytes,
      maxRedirects: options.maxRedirects,
      timeoutMs,
      proxyCountry: options.proxyCountry,
      checkUrl: options.checkUrl,
      signal,
    });
    return decodedResponse(response.status, response.url, response.headers, response.body);
  }

  function upstream(profile: UpstreamProfile): Upstream {
    const retry = profile.retry === false ? null : (profile.retry ?? DEFAULT_RETRY);
    return {
      async call<P, T>(adapter: Adapter<P, T>, params: P, context: CallContext, callOptions: CallOptions = {}): Promise<CallOutcome<T>> {
        const settings: CallOptions = { ...profile, ...callOptions };
        const timeoutMs = settings.timeoutMs ?? profile.timeoutMs;
        const baseUrl = settings.baseUrl ?? adapter.baseUrl ?? '';
        const log = context.log ?? baseLog;
        const started = performance.now();
        const useBreaker = profile.breaker !== false && options.breaker?.enabled !== false;
        let attempts = 0;
        const finish = (outcome: CallOutcome<unknown>, notes: Record<string, unknown>, admission?: { probe: boolean }) => {
          const durationMs = Math.round(performance.now() - started);
          if (useBreaker && admission) {
            // The breaker learns from the upstream's answers only: an interceptor that refused on
            // its own (a spent rate budget, no token) sent nothing, so it says nothing new.
            if (attempts > 0) breaker.record(adapter.upstream, outcome.kind, admission.probe, outcome.status);
            else if (admission.probe) breaker.release(adapter.upstream);
          }
          emit({ type: 'call', upstream: adapter.upstream, operation: adapter.operation, verdict: outcome.kind, status: outcome.status, durationMs, attempts, at: Date.now() });
          if (FAILURES.has(outcome.kind)) {
            log.warn(
              {
                requestId: context.requestId,
                upstream: adapter.upstream,
                operation: adapter.operation,
                verdict: outcome.kind,
                status: outcome.status,
                durationMs,
                attempts,
                reason: 'reason' in outcome && outcome.reason ? redactUrls(outcome.reason) : undefined,
                ...notes,
              },
              `upstream ${adapter.upstream} ${adapter.operation}: ${outcome.kind}`,
            );
          }
          return outcome as CallOutcome<T>;
        };

        context.signal?.throwIfAborted();
        const admission = useBreaker ? await raceAbort(breaker.admit(adapter.upstream), context.signal ?? NEVER) : { allowed: true as const, probe: false };
        if (!admission.allowed) {
          return finish({ kind: 'suspended', reason: `circuit open until ${new Date(admission.until).toISOString()}` }, {});
        }

        let request: UpstreamRequest;
        try {
          request = adapter.buildRequest(params, { baseUrl, now: now() });
        } catch (error) {
          // A request that cannot be built is our bug, not news about the upstream: free the probe slot.
          if (useBreaker && admission.probe) breaker.release(adapter.upstream);
          throw error;
        }
        const deadline = Date.now() + timeoutMs;
        const timer = new AbortController();
        const timeout = setTimeout(() => timer.abort(new OutboundError('timeout', `no answer within ${timeoutMs} ms`, adapter.upstream)), timeoutMs);
        const signal = context.signal ? AbortSignal.any([context.signal, timer.signal]) : timer.signal;
        const via = adapter.via ?? 'http';
        const exchange: Exchange = {
          upstream: adapter.upstream,
          operation: adapter.operation,
          request,
          idempotent: adapter.idempotent ?? request.method === 'GET',
          signal,
          deadline,
          log,
          notes: {},
        };

        /** The innermost step: one exchange on the wire, then the pure parser. */
        const send: Send = async (current) => {
          attempts += 1;
          let response: UpstreamResponse;
          try {
            response = await raceAbort(transport(current, settings, via, context.tenant), current.signal);
          } catch (error) {
            if (context.signal?.aborted) throw context.signal.reason;
            return { outcome: transportFailure(error, timer.signal.aborted) };
          }
          let outcome: CallOutcome<unknown>;
          try {
            outcome = await adapter.parse(response, params);
          } catch (error) {
            outcome = { kind: 'changed', reason: `unreadable answer: ${describeError(error)}` };
          }
          if (outcome.kind !== 'ok' && outcome.status === undefined) outcome = { ...outcome, status: response.status } as CallOutcome<unknown>;
          return { outcome, response };
        };

        const stack = [...(retry ? [retrying(retry)] : []), ...(profile.interceptors ?? []), ...(callOptions.interceptors ?? [])];
        const run = stack.reduceRight<Send>((next, interceptor) => (current) => interceptor(current, next), send);
        try {
          const attempt = await run(exchange);
          return finish(attempt.outcome, exchange.notes, admission);
        } catch (error) {
          if (context.signal?.aborted) {
            if (useBreaker && admission.probe) breaker.release(adapter.upstream);
            emit({ type: 'call', upstream: adapter.upstream, operation: adapter.operation, verdict: 'aborted', durationMs: Math.round(performance.now() - started), attempts, at: Date.now() });
            throw context.signal.reason;
          }
          if (timer.signal.aborted) return finish({ kind: 'timeout', reason: describeError(timer.signal.reason), error }, exchange.notes, admission);
          // An interceptor that threw (a bug, or a store that failed): the call failed, the request goes on.
          return finish({ kind: 'unreachable', reason: describeError(error), error }, exchange.notes, admission);
        } finally {
          clearTimeout(timeout);
        }
      },
    };
  }

  return {
    upstream,
    breaker,
    log: baseLog,
    observe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** A decoded answer of the plain transport: bytes kept, text decoded by charset on first use. */
export function decodedResponse(status: number, url: string, headers: Record<string, string>, bytes: Uint8Array): UpstreamResponse {
  let text: string | undefined;
  return {
    status,
    url,
    headers,
    bytes,
    get body() {
      return (text ??= decodeBody(bytes, headerValue(headers, 'content-type')));
    },
  };
}

/** A transport that produced no answer: why, as a verdict. */
function transportFailure(error: unknown, deadlinePassed: boolean): CallOutcome<unknown> {
  if (deadlinePassed || (error instanceof OutboundError && error.code === 'timeout')) return { kind: 'timeout', reason: describeError(error), error };
  // A captcha the browser could not get past is the upstream refusing us, not a network failure.
  if (error instanceof CaptchaUnsolvedError) return { kind: 'blocked', reason: `captcha unsolved: ${error.message}`, error };
  return { kind: 'unreachable', reason: describeError(error), error };
}

/** Outcomes a second attempt may change: the network failed us (not a refusal, not our own URL rules). */
function retryable(outcome: CallOutcome<unknown>): boolean {
  if (outcome.kind !== 'unreachable') return false;
  return !(outcome.error instanceof OutboundError) || outcome.error.code === 'network';
}

/**
 * Retry with jitter, only for idempotent requests whose exchange failed on the network, and only
 * while the call's deadline leaves room: a block or a captcha does not go away by asking again at once.
 */
export function retrying(policy: RetryPolicy): Interceptor {
  return async (exchange, next) => {
    let attempt = await next(exchange);
    for (let tries = 1; tries < policy.attempts && exchange.idempotent && retryable(attempt.outcome); tries++) {
      const delay = policy.baseDelayMs * 2 ** (tries - 1) * (0.5 + Math.random());
      if (Date.now() + delay + 250 >= exchange.deadline) break;
      await sleep(delay, exchange.signal);
      exchange.notes.retried = tries;
      attempt = await next(exchange);
    }
    return attempt;
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
