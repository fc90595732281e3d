/**
 * Types shared by the search engine adapters and the chain that drives them. An engine is an
 * adapter of the kit (../kit/types.ts): a pure `buildRequest` / `parse` pair; the chain runs it.
 */
import type { Adapter, ParseOutcome, RequestContext, UpstreamRequest, UpstreamResponse } from '../kit/types.ts';

export type { UpstreamRequest, UpstreamResponse } from '../kit/types.ts';
export type { EngineName } from './engines/index.ts';

export const SEARCH_LANGUAGES = ['en', 'es', 'fr', 'de', 'it', 'pt', 'ja', 'ko', 'zh', 'ar', 'hi', 'ru', 'tr', 'ur'] as const;
export type SearchLanguage = (typeof SEARCH_LANGUAGES)[number];

export const TIME_RANGES = ['hour', 'day', 'week', 'month', 'year'] as const;
export type TimeRange = (typeof TIME_RANGES)[number];

export interface SearchParams {
  query: string;
  /** Lowercase ISO 3166-1 alpha-2 code, e.g. "us". */
  country: string;
  language: SearchLanguage;
  /**
   * The page: for the chain, the user's page (>= 1); for an engine, the upstream page of
   * (nominally) 10 results, 1-based, which the chain maps the user's page onto.
   */
  page: number;
  /**
   * Results per upstream page, for an engine that takes a page size (`maxPageSize`); 10 when
   * absent. Upstream page `page` then starts at result `(page - 1) * pageSize + 1`.
   */
  pageSize?: number;
  timeRange?: TimeRange;
}

export interface SearchResult {
  title: string;
  description: string;
  /** The display link / breadcrumb shown with the result ("example.com › docs"), "" when none. */
  meta_data: string;
  url: string;
}

/**
 * What a results page came to: `ok` with results, `empty` (the engine's own "no results"),
 * `blocked` (a block page, captcha, consent wall or JavaScript-only shell), or `changed` (a full
 * page in a layout the parser cannot read).
 */
export type SerpOutcome = Extract<ParseOutcome<SearchResult[]>, { kind: 'ok' | 'empty' | 'blocked' | 'changed' }>;

/** One search engine: an adapter like any other, whose parameters carry the upstream page. */
export interface SearchEngine extends Adapter<SearchParams, SearchResult[]> {
  /** The engine's name in SEARCH_ENGINES, logs and metrics (its upstream). */
  readonly name: string;
  readonly baseUrl: string;
  /**
   * The largest page of results the engine serves on request (a multiple of 10); absent when its
   * pages always hold 10. The chain asks such an engine for fewer, larger pages: one browser
   * render of 100 results instead of ten of 10.
   */
  readonly maxPageSize?: number;
  parse(response: UpstreamResponse): SerpOutcome;
}

/** The harmless query `gleaner upstreams probe` asks every engine. */
export const SEARCH_PROBE: SearchParams = { query: 'weather', country: 'us', language: 'en', page: 1 };

/** An engine from its pure pair: `name`, whether only a browser gets its pages, its public base URL. */
export function defineEngine(engine: {
  name: string;
  via: 'http' | 'browser';
  baseUrl: string;
  maxPageSize?: number;
  buildRequest(params: SearchParams, context: RequestContext): UpstreamRequest;
  parse(response: UpstreamResponse): SerpOutcome;
}): SearchEngine {
  // A search is safe to ask twice, even as a POST form (DuckDuckGo, Startpage).
  return { ...engine, upstream: engine.name, operation: 'search', idempotent: true };
}
