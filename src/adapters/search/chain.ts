/**
 * The search chain: tries the configured engines in order and returns the first clean answer.
 *
 * - The user's page is the window of results `(page - 1) * perPage + 1` to `page * perPage`. It
 *   maps onto the upstream pages (10 results each) of one engine that hold it: `ceil(perPage / 10)`
 *   of them, one more when the window starts inside an upstream page (`perPage` 15, page 2:
 *   results 16–30, upstream pages 2 and 3). They are fetched concurrently and merged in page
 *   order, and the results before the window are skipped. So paging with any `perPage` neither
 *   skips nor repeats results. An engine that serves larger pages on request (`maxPageSize`,
 *   Google's `num`) is asked for pages of `perPage` rounded up to 10, at most its maximum: one
 *   browser render of 100 results fits the deadline where ten concurrent renders did not.
 * - Pages go through the upstream runtime: a page whose exchange failed on the network is tried
 *   once more within its deadline, and an engine that answered a block page or kept failing is
 *   suspended for a while (its circuit is open), so the chain skips it at once.
 * - The first upstream page decides: blocked, a network error or a timeout there moves on to
 *   the next engine (the reason is recorded). A later page of the fan-out that fails is
 *   dropped and the pages that answered are kept.
 * - `no_results` from an engine that answered cleanly is final: the next engine is not asked,
 *   because a clean "nothing found" is an answer, and asking every engine would multiply the
 *   upstream load for exactly the queries that have nothing to show.
 * - After merging and skipping: when the first two results share a URL the first is dropped, then
 *   the list is trimmed to `perPage`.
 */
import { DEFAULT_MAX_UPSTREAM_BYTES, describeError, type UpstreamRuntime } from '../kit/runtime.ts';
import type { CallContext, CallOutcome, UpstreamLogger } from '../kit/types.ts';
import { searchCacheKey } from './cache.ts';
import type { SearchCache } from './cache.ts';
import { ENGINES, isEngineName, type EngineName } from './engines/index.ts';
import { SEARCH_PROBE, type SearchEngine, type SearchParams, type SearchResult } from './types.ts';

/** Results per upstream page the chain plans with. */
export const UPSTREAM_PAGE_SIZE = 10;
/** Cap on one upstream page's decoded body. */
export const MAX_UPSTREAM_BYTES = DEFAULT_MAX_UPSTREAM_BYTES;

/** Engines that need no browser, in the order used when SEARCH_ENGINES is not set. */
export const DEFAULT_SEARCH_ENGINES: readonly EngineName[] = ['bing', 'duckduckgo', 'brave', 'mojeek', 'startpage'];

/** The default order for a deployment: Google first only when a browser can fetch it. */
export function defaultSearchEngines(hasBrowser: boolean): EngineName[] {
  return hasBrowser ? ['google', ...DEFAULT_SEARCH_ENGINES] : [...DEFAULT_SEARCH_ENGINES];
}

export interface SearchRequest extends SearchParams {
  perPage: number;
}

export interface EngineAttempt {
  engine: EngineName;
  reason: string;
}

export type SearchOutcome =
  | { kind: 'results'; results: SearchResult[]; engine: EngineName }
  | { kind: 'no_results'; engine: EngineName }
  | { kind: 'unavailable'; attempts: EngineAttempt[] };

/** The subset of a pino/fastify logger the chain writes to. */
export type SearchLogger = UpstreamLogger;

export interface SearchChainOptions {
  /** Engine names in the order to try them (SEARCH_ENGINES). */
  engines: readonly string[];
  /** The upstream runtime every engine's pages go through (breaker, retry, logs, metrics). */
  runtime: UpstreamRuntime;
  /** Per-engine base URL; engines not listed use their own public one. */
  baseUrls?: Partial<Record<string, string>>;
  /** Deadline of one upstream page, its retry included. */
  timeoutMs: number;
  cache?: SearchCache;
  /** SEARCH_CACHE_TTL; required with `cache`. */
  cacheTtlSeconds?: number;
  /** A browser can render the engines whose pages need one (`via: 'browser'`); without it they leave the chain. */
  hasBrowser?: boolean;
  /** Where the chain's own decisions are logged when no request logger is given. */
  logger?: SearchLogger;
}

export interface SearchChain {
  /** The engines actually in use, in order. */
  readonly engines: readonly EngineName[];
  /** `signal` stops the search (the caller went away): it rejects with the signal's reason. */
  find(request: SearchRequest, context?: CallContext): Promise<SearchOutcome>;
  /** One first page of a harmless query per engine of the chain (`gleaner upstreams probe`). */
  probes(): Array<{ upstream: string; operation: string; run(context: CallContext): Promise<CallOutcome<unknown>> }>;
}

/** A SEARCH_* setting the service cannot start with. */
export class SearchConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SearchConfigError';
  }
}

type PageOutcome = CallOutcome<SearchResult[]> | { kind: 'aborted' };

type EngineOutcome =
  | { kind: 'results'; results: SearchResult[] }
  | { kind: 'no_results' }
  | { kind: 'failed'; reason: string };

/** An engine of the chain, under the name it was configured by. */
type ChainEngine = SearchEngine & { name: EngineName };

function resolveEngines(options: SearchChainOptions): ChainEngine[] {
  const engines: ChainEngine[] = [];
  for (const name of options.engines) {
    if (!isEngineName(name)) {
      throw new SearchConfigError(`Unknown search engine "${name}" in SEARCH_ENGINES (known: ${Object.keys(ENGINES).join(', ')})`);
    }
    if (engines.some((engine) => engine.name === name)) continue;
    const engine: ChainEngine = { ...ENGINES[name], name };
    if (engine.via === 'browser' && !options.hasBrowser) {
      (options.logger ?? options.runtime.log).warn({ engine: name }, 'search engine needs a browser and none is configured; leaving it out of the chain');
      continue;
    }
    engines.push(engine);
  }
  if (engines.length === 0) throw new SearchConfigError('SEARCH_ENGINES leaves no usable search engine');
  return engines;
}

function validateOptions(options: SearchChainOptions): void {
  if (!(options.timeoutMs > 0)) throw new SearchConfigError('search timeoutMs must be a positive number');
  if (options.cache && !(options.cacheTtlSeconds !== undefined && options.cacheTtlSeconds > 0)) {
    throw new SearchConfigError('a search cache needs a positive cacheTtlSeconds (SEARCH_CACHE_TTL)');
  }
  for (const [name, url] of Object.entries(options.baseUrls ?? {})) {
    if (url === undefined) continue;
    try {
      new URL(url);
    } catch {
      throw new SearchConfigError(`Invalid base URL for search engine "${name}": ${url}`);
    }
  }
}

/** Drops the first result when the first two share a URL (the original service's rule). */
export function dropLeadingDuplicate(results: SearchResult[]): SearchResult[] {
  return results.length >= 2 && results[0].url === results[1].url ? results.slice(1) : results;
}

/**
 * The upstream pages (of `pageSize` results) holding the user's window of results, and how many
 * results precede it.
 */
export function upstreamWindow(page: number, perPage: number, pageSize = UPSTREAM_PAGE_SIZE): { pages: number[]; skip: number } {
  const offset = (page - 1) * perPage;
  const first = Math.floor(offset / pageSize) + 1;
  const skip = offset % pageSize;
  const span = Math.ceil((skip + perPage) / pageSize);
  return { pages: Array.from({ length: span }, (_, index) => first + index), skip };
}

/** The upstream page size asked of `engine` for `perPage` results: 10 unless it serves larger pages. */
export function upstreamPageSize(engine: Pick<SearchEngine, 'maxPageSize'>, perPage: number): number {
  if (!engine.maxPageSize) return UPSTREAM_PAGE_SIZE;
  return Math.min(engine.maxPageSize, Math.ceil(perPage / UPSTREAM_PAGE_SIZE) * UPSTREAM_PAGE_SIZE);
}

export function createSearchChain(options: SearchChainOptions): SearchChain {
  validateOptions(options);
  const engines = resolveEngines(options);
  const { timeoutMs, cache } = options;
  const cacheTtlSeconds = options.cacheTtlSeconds ?? 0;
  // Each engine's pages go through the runtime: a page whose exchange failed on the network is
  // tried once more within its deadline, and an engine that answers a block page is suspended,
  // so the next request skips it at once instead of waiting for it again.
  const upstream = options.runtime.upstream({ timeoutMs, maxBytes: MAX_UPSTREAM_BYTES });

  /** One upstream page. Never rejects: a page abandoned because the chain moved on is `aborted`. */
  async function callPage(engine: ChainEngine, params: SearchParams, page: number, context: CallContext): Promise<PageOutcome> {
    try {
      return await upstream.call(engine, { ...params, page }, context, {
        baseUrl: options.baseUrls?.[engine.name] ?? engine.baseUrl,
        // Results are localised by the exit's location too; the client ignores this without a proxy.
        proxyCountry: params.country || undefined,
      });
    } catch (error) {
      if (context.signal?.aborted) return { kind: 'aborted' };
      throw error;
    }
  }

  async function searchEngine(engine: ChainEngine, request: SearchRequest, context: CallContext): Promise<EngineOutcome> {
    const { perPage, ...userParams } = request;
    const pageSize = upstreamPageSize(engine, perPage);
    const params: SearchParams = pageSize === UPSTREAM_PAGE_SIZE ? userParams : { ...userParams, pageSize };
    const { pages, skip } = upstreamWindow(request.page, perPage, pageSize);
    const abort = new AbortController();
    const signal = context.signal ? AbortSignal.any([abort.signal, context.signal]) : abort.signal;
    const pageContext = { ...context, signal };
    // callPage never rejects on an abort, so pages left running after an early return cannot go unhandled.
    const pending = pages.map((page) => callPage(engine, params, page, pageContext));

    const first = await pending[0];
    if (first.kind === 'empty') {
      abort.abort();
      return { kind: 'no_results' };
    }
    if (first.kind !== 'ok') {
      abort.abort();
      return { kind: 'failed', reason: first.kind === 'not_found' || first.kind === 'aborted' ? first.kind : `${first.kind}: ${first.reason}` };
    }

    const outcomes = await Promise.all(pending);
    const merged: SearchResult[] = [];
    for (const outcome of outcomes) {
      // A later page that failed is dropped (the runtime logged why) and the pages that answered are kept.
      if (outcome.kind === 'ok') merged.push(...outcome.value);
    }
    const window = merged.slice(skip);
    // Results there were, all before the window: this page is past the end of the list.
    if (window.length === 0) return { kind: 'no_results' };
    return { kind: 'results', results: dropLeadingDuplicate(window).slice(0, perPage) };
  }

  async function readCache(key: string, log: UpstreamLogger) {
    try {
      return await cache?.get(key);
    } catch (error) {
      log.warn({ err: describeError(error) }, 'search cache read failed; searching upstream');
      return undefined;
    }
  }

  async function writeCache(key: string, results: SearchResult[], engine: EngineName, log: UpstreamLogger): Promise<void> {
    try {
      await cache?.set(key, { results, engine }, cacheTtlSeconds);
    } catch (error) {
      log.warn({ err: describeError(error) }, 'search cache write failed');
    }
  }

  async function find(request: SearchRequest, context: CallContext = {}): Promise<SearchOutcome> {
    if (!Number.isInteger(request.page) || request.page < 1) throw new RangeError('page must be an integer >= 1');
    if (!Number.isInteger(request.perPage) || request.perPage < 1) throw new RangeError('perPage must be an integer >= 1');
    const { signal } = context;
    const log = context.log ?? options.logger ?? options.runtime.log;

    const key = searchCacheKey(request);
    const cached = await readCache(key, log);
    if (cached) return { kind: 'results', results: cached.results, engine: cached.engine };

    const attempts: EngineAttempt[] = [];
    for (const engine of engines) {
      signal?.throwIfAborted();
      const outcome = await searchEngine(engine, request, context);
      signal?.throwIfAborted();
      if (outcome.kind === 'results') {
        await writeCache(key, outcome.results, engine.name, log);
        return { kind: 'results', results: outcome.results, engine: engine.name };
      }
      if (outcome.kind === 'no_results') return { kind: 'no_results', engine: engine.name };
      attempts.push({ engine: engine.name, reason: outcome.reason });
    }
    log.warn({ requestId: context.requestId, engines: attempts.map((attempt) => `${attempt.engine}: ${attempt.reason.split(':')[0]}`) }, 'no search engine answered');
    return { kind: 'unavailable', attempts };
  }

  return {
    engines: engines.map((engine) => engine.name),
    find,
    probes: () =>
      engines.map((engine) => ({
        upstream: engine.upstream,
        operation: engine.operation,
        run: (context: CallContext) => upstream.call(engine, SEARCH_PROBE, context, { baseUrl: options.baseUrls?.[engine.name] ?? engine.baseUrl }),
      })),
  };
}
