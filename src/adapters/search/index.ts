/**
 * Public entry of the search-results adapter behind POST /v1/engine-search, plus the reading
 * of its SEARCH_* settings.
 */
import type { Capability } from '../../core/capability.ts';
import type { UpstreamRuntime } from '../kit/runtime.ts';
import type { UpstreamLogger } from '../kit/types.ts';
import { createSearchChain, SearchConfigError, defaultSearchEngines, type SearchChain } from './chain.ts';
import type { SearchCache } from './cache.ts';
import { ENGINE_NAMES, ENGINES, isEngineName } from './engines/index.ts';

export {
  DEFAULT_SEARCH_ENGINES,
  MAX_UPSTREAM_BYTES,
  SearchConfigError,
  UPSTREAM_PAGE_SIZE,
  createSearchChain,
  defaultSearchEngines,
} from './chain.ts';
export type {
  EngineAttempt,
  SearchChain,
  SearchChainOptions,
  SearchLogger,
  SearchOutcome,
  SearchRequest,
} from './chain.ts';
export { MemorySearchCache, RedisSearchCache, searchCacheKey } from './cache.ts';
export type { CachedSearch, RedisStringClient, SearchCache } from './cache.ts';
export { ENGINES, ENGINE_NAMES, isEngineName } from './engines/index.ts';
export { SEARCH_LANGUAGES, SEARCH_PROBE, TIME_RANGES, defineEngine } from './types.ts';
export type {
  EngineName,
  SearchEngine,
  SerpOutcome,
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

export interface SearchCapabilitySettings {
  /** SEARCH_ENGINES as listed; empty means the default order. */
  engines: string[];
  cacheTtlSeconds: number;
  /** SEARCH_TIMEOUT_MS: deadline of one upstream page. */
  timeoutMs: number;
  /** UPSTREAM_<ENGINE>_URL overrides. */
  baseUrls: Partial<Record<string, string>>;
}

export interface SearchCapabilityDeps {
  runtime: UpstreamRuntime;
  /** A headless browser can render the engines that need one. */
  hasBrowser: boolean;
  /** Present when SEARCH_CACHE_TTL turns the cache on. */
  cache?: SearchCache;
  logger?: UpstreamLogger;
}

/** The search engine chain, as a capability. */
export const searchCapability: Capability<SearchCapabilitySettings, SearchChain, SearchCapabilityDeps> = {
  name: 'search',
  settings(env) {
    const listed = env.list('SEARCH_ENGINES').map((name) => name.toLowerCase());
    return {
      engines: listed,
      cacheTtlSeconds: parseCacheTtl(env.env.SEARCH_CACHE_TTL),
      timeoutMs: env.positiveInteger('SEARCH_TIMEOUT_MS') ?? 15_000,
      baseUrls: Object.fromEntries(
        ENGINE_NAMES.flatMap((engine) => {
          const url = env.url(`UPSTREAM_${engine.toUpperCase()}_URL`);
          return url ? [[engine, url]] : [];
        }),
      ),
    };
  },
  start: (settings, deps) =>
    createSearchChain({
      engines: settings.engines.length > 0 ? settings.engines : defaultSearchEngines(deps.hasBrowser),
      runtime: deps.runtime,
      hasBrowser: deps.hasBrowser,
      baseUrls: settings.baseUrls,
      timeoutMs: settings.timeoutMs,
      cacheTtlSeconds: settings.cacheTtlSeconds,
      cache: settings.cacheTtlSeconds > 0 ? deps.cache : undefined,
      logger: deps.logger,
    }),
  close: async () => {},
};

/** True when the listed engines (or the default order) may want a browser. */
export function searchWantsBrowser(settings: SearchCapabilitySettings): boolean {
  return settings.engines.length === 0 || settings.engines.some((name) => isEngineName(name) && ENGINES[name].via === 'browser');
}
