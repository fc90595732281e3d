/**
 * The search chain: tries the configured engines in order and returns the first clean answer.
 *
 * - The user's page is the window of results `(page - 1) * perPage + 1` to `page * perPage`. It
 *   maps onto the upstream pages (10 results each) of one engine that hold it: `ceil(perPage / 10)`
 *   of them, one more when the window starts inside an upstream page (`perPage` 15, page 2:
 *   results 16–30, upstream pages 2 and 3). They are fetched concurrently and merged in page
 *   order, and the results before the window are skipped. So paging with any `perPage` neither
 *   skips nor repeats results.
 * - A page whose fetch failed (network error, timeout) is tried once more before it counts.
 * - The first upstream page decides: blocked, a network error or a timeout there moves on to
 *   the next engine (the reason is recorded). A later page of the fan-out that fails is
 *   dropped and the pages that answered are kept.
 * - `no_results` from an engine that answered cleanly is final: the next engine is not asked,
 *   because a clean "nothing found" is an answer, and asking every engine would multiply the
 *   upstream load for exactly the queries that have nothing to show.
 * - After merging and skipping: when the first two results share a URL the first is dropped, then
 *   the list is trimmed to `perPage`.
 */
import type { OutboundClient } from '../../outbound/types.ts';
import { createUpstreamRunner, describeError, DEFAULT_MAX_UPSTREAM_BYTES, type BrowserSource, type RunOutcome, type UpstreamLogger } from '../kit/runner.ts';
import { searchCacheKey } from './cache.ts';
import type { SearchCache } from './cache.ts';
import type { CallContext } from '../kit/types.ts';
import { DEFAULT_BASE_URLS, ENGINES, isEngineName } from './engines/index.ts';
import type { EngineName, SearchEngine, SearchParams, SearchResult } from './types.ts';

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
  fetch: OutboundClient;
  /** Per-engine base URL; engines not listed use DEFAULT_BASE_URLS. */
  baseUrls?: Partial<Record<string, string>>;
  /** Deadline of one upstream request (connect + body). */
  timeoutMs: number;
  cache?: SearchCache;
  /** SEARCH_CACHE_TTL; required with `cache`. */
  cacheTtlSeconds?: number;
  /** Renders the pages of engines flagged `needsBrowser`; without it they leave the chain. */
  browser?: BrowserSource;
  logger?: SearchLogger;
  /** Clock for engines whose time filters are dates. */
  now?: () => Date;
}

export interface SearchChain {
  /** The engines actually in use, in order. */
  readonly engines: readonly EngineName[];
  /** `signal` stops the search (the caller went away): it rejects with the signal's reason. */
  find(request: SearchRequest, context?: CallContext): Promise<SearchOutcome>;
}

/** A SEARCH_* setting the service cannot start with. */
export class SearchConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SearchConfigError';
  }
}

type PageOutcome = RunOutcome<SearchResult[]>;

type EngineOutcome =
  | { kind: 'results'; results: SearchResult[] }
  | { kind: 'no_results' }
  | { kind: 'failed'; reason: string };

function resolveEngines(options: SearchChainOptions): SearchEngine[] {
  const engines: SearchEngine[] = [];
  for (const name of options.engines) {
    if (!isEngineName(name)) {
      throw new SearchConfigError(`Unknown search engine "${name}" in SEARCH_ENGINES (known: ${Object.keys(ENGINES).join(', ')})`);
    }
    const engine = ENGINES[name];
    if (engines.includes(engine)) continue;
    if (engine.needsBrowser && !options.browser) {
      options.logger?.warn({ engine: name }, 'search engine needs a browser and none is configured; leaving it out of the chain');
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

/** The upstream pages holding the user's window of results, and how many results precede it. */
export function upstreamWindow(page: number, perPage: number): { pages: number[]; skip: number } {
  const offset = (page - 1) * perPage;
  const first = Math.floor(offset / UPSTREAM_PAGE_SIZE) + 1;
  const skip = offset % UPSTREAM_PAGE_SIZE;
  const span = Math.ceil((skip + perPage) / UPSTREAM_PAGE_SIZE);
  return { pages: Array.from({ length: span }, (_, index) => first + index), skip };
}

export function createSearchChain(options: SearchChainOptions): SearchChain {
  validateOptions(options);
  const engines = resolveEngines(options);
  const { timeoutMs, cache, logger } = options;
  const cacheTtlSeconds = options.cacheTtlSeconds ?? 0;
  const now = options.now ?? (() => new Date());
  // The chain logs its own decisions (which engine failed, what it tried next).
  const runner = createUpstreamRunner({ outbound: options.fetch, browser: options.browser, logger, now });

  /**
   * One upstream page, tried twice when the fetch itself failed (a render that timed out under
   * load, a dropped connection): one slow page must not fail a whole request. A block is not
   * retried: a captcha does not go away by asking again at once.
   */
  async function fetchPage(engine: SearchEngine, params: SearchParams, page: number, signal: AbortSignal): Promise<PageOutcome> {
    const first = await fetchPageOnce(engine, params, page, signal);
    if (first.kind !== 'failed' || signal.aborted) return first;
    return fetchPageOnce(engine, params, page, signal);
  }

  function fetchPageOnce(engine: SearchEngine, params: SearchParams, page: number, signal: AbortSignal): Promise<PageOutcome> {
    const baseUrl = options.baseUrls?.[engine.name] ?? DEFAULT_BASE_URLS[engine.name];
    return runner.run(engine.buildRequest(params, page, baseUrl, now()), (response) => engine.parse(response), {
      upstream: engine.name,
      operation: 'search',
      via: engine.needsBrowser ? 'browser' : 'http',
      timeoutMs,
      maxBytes: MAX_UPSTREAM_BYTES,
      // Results are localised by the exit's location too; the client ignores this without a proxy.
      proxyCountry: params.country || undefined,
      signal,
      log: false,
    });
  }

  async function searchEngine(engine: SearchEngine, request: SearchRequest, caller?: AbortSignal): Promise<EngineOutcome> {
    const { perPage, ...params } = request;
    const { pages, skip } = upstreamWindow(request.page, perPage);
    const abort = new AbortController();
    const signal = caller ? AbortSignal.any([abort.signal, caller]) : abort.signal;
    // fetchPage never rejects, so pages left running after an early return cannot go unhandled.
    const pending = pages.map((page) => fetchPage(engine, params, page, signal));

    const first = await pending[0];
    if (first.kind === 'empty') {
      abort.abort();
      return { kind: 'no_results' };
    }
    if (first.kind !== 'ok') {
      abort.abort();
      return { kind: 'failed', reason: first.kind === 'not_found' ? 'not found' : first.reason };
    }

    const outcomes = await Promise.all(pending);
    const merged: SearchResult[] = [];
    outcomes.forEach((outcome, index) => {
      if (outcome.kind === 'ok') {
        merged.push(...outcome.value);
      } else if (outcome.kind !== 'empty') {
        // A later page with no results is the normal end of the list; only failures are news.
        const reason = outcome.kind === 'not_found' ? 'not found' : outcome.reason;
        logger?.warn({ engine: engine.name, upstreamPage: pages[index], reason }, 'an additional search page failed; keeping the others');
      }
    });
    const window = merged.slice(skip);
    // Results there were, all before the window: this page is past the end of the list.
    if (window.length === 0) return { kind: 'no_results' };
    return { kind: 'results', results: dropLeadingDuplicate(window).slice(0, perPage) };
  }

  async function readCache(key: string) {
    try {
      return await cache?.get(key);
    } catch (error) {
      logger?.warn({ error: describeError(error) }, 'search cache read failed; searching upstream');
      return undefined;
    }
  }

  async function writeCache(key: string, results: SearchResult[], engine: EngineName): Promise<void> {
    try {
      await cache?.set(key, { results, engine }, cacheTtlSeconds);
    } catch (error) {
      logger?.warn({ error: describeError(error) }, 'search cache write failed');
    }
  }

  async function find(request: SearchRequest, context: CallContext = {}): Promise<SearchOutcome> {
    const signal = context.signal;
    if (!Number.isInteger(request.page) || request.page < 1) throw new RangeError('page must be an integer >= 1');
    if (!Number.isInteger(request.perPage) || request.perPage < 1) throw new RangeError('perPage must be an integer >= 1');

    const key = searchCacheKey(request);
    const cached = await readCache(key);
    if (cached) return { kind: 'results', results: cached.results, engine: cached.engine };

    const attempts: EngineAttempt[] = [];
    for (const engine of engines) {
      signal?.throwIfAborted();
      const outcome = await searchEngine(engine, request, signal);
      signal?.throwIfAborted();
      if (outcome.kind === 'results') {
        await writeCache(key, outcome.results, engine.name);
        return { kind: 'results', results: outcome.results, engine: engine.name };
      }
      if (outcome.kind === 'no_results') return { kind: 'no_results', engine: engine.name };
      attempts.push({ engine: engine.name, reason: outcome.reason });
      logger?.warn({ engine: engine.name, reason: outcome.reason }, 'search engine failed; trying the next one');
    }
    return { kind: 'unavailable', attempts };
  }

  return { engines: engines.map((engine) => engine.name), find };
}
