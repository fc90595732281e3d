/**
 * Public entry of the search-results adapter behind POST /v1/engine-search, plus the reading
 * of its SEARCH_* settings.
 */
import { SearchConfigError, defaultSearchEngines } from './chain.ts';

export {
  DEFAULT_SEARCH_ENGINES,
  MAX_UPSTREAM_BYTES,
  SearchConfigError,
  UPSTREAM_PAGE_SIZE,
  createSearchChain,
  defaultSearchEngines,
} from './chain.ts';
export type {
  BrowserFetch,
  EngineAttempt,
  SearchChain,
  SearchChainOptions,
  SearchLogger,
  SearchOutcome,
  SearchRequest,
} from './chain.ts';
export { MemorySearchCache, RedisSearchCache, searchCacheKey } from './cache.ts';
export type { CachedSearch, RedisStringClient, SearchCache } from './cache.ts';
export { DEFAULT_BASE_URLS, ENGINES, isEngineName } from './engines/index.ts';
export { ENGINE_NAMES, SEARCH_LANGUAGES, TIME_RANGES } from './types.ts';
export type {
  EngineName,
  ParseOutcome,
  SearchEngine,
  SearchLanguage,
  SearchParams,
  SearchResult,
  TimeRange,
  UpstreamRequest,
  UpstreamResponse,
} from './types.ts';

export interface SearchSettings {
  /** Engine names in order, as written (unknown names are rejected by createSearchChain). */
  engines: string[];
  /** 0 = cache off. */
  cacheTtlSeconds: number;
}

/**
 * SEARCH_ENGINES: comma-separated engine names in the order to try them; unset or empty means
 * the default order (google first only when a browser is available).
 * SEARCH_CACHE_TTL: seconds to keep successful searches; unset, empty or 0 turns the cache off.
 */
export function readSearchSettings(env: NodeJS.ProcessEnv, options: { hasBrowser: boolean }): SearchSettings {
  const listed = (env.SEARCH_ENGINES ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  return {
    engines: listed.length > 0 ? listed : defaultSearchEngines(options.hasBrowser),
    cacheTtlSeconds: parseCacheTtl(env.SEARCH_CACHE_TTL),
  };
}

export function parseCacheTtl(value: string | undefined): number {
  const text = value?.trim() ?? '';
  if (text === '') return 0;
  if (!/^\d+$/.test(text)) throw new SearchConfigError(`SEARCH_CACHE_TTL must be a whole number of seconds, got "${value}"`);
  return Number(text);
}
