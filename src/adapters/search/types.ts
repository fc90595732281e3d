/**
 * Types shared by the search engine adapters and the chain that drives them. An engine is an
 * adapter of the kit (../kit/types.ts): a pure `buildRequest` / `parse` pair; the chain runs it.
 */
import type { ParseOutcome, UpstreamRequest, UpstreamResponse } from '../kit/types.ts';

export type { UpstreamRequest, UpstreamResponse } from '../kit/types.ts';

export const SEARCH_LANGUAGES = ['en', 'es', 'fr', 'de', 'it', 'pt', 'ja', 'ko', 'zh', 'ar', 'hi', 'ru', 'tr', 'ur'] as const;
export type SearchLanguage = (typeof SEARCH_LANGUAGES)[number];

export const TIME_RANGES = ['hour', 'day', 'week', 'month', 'year'] as const;
export type TimeRange = (typeof TIME_RANGES)[number];

export const ENGINE_NAMES = ['google', 'bing', 'duckduckgo', 'brave', 'mojeek', 'startpage'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

export interface SearchParams {
  query: string;
  /** Lowercase ISO 3166-1 alpha-2 code, e.g. "us". */
  country: string;
  language: SearchLanguage;
  /** The user's page (>= 1); the chain maps it onto upstream pages of 10 results. */
  page: number;
  timeRange?: TimeRange;
}

export interface SearchResult {
  title: string;
  description: string;
  /** The display link / breadcrumb shown with the result ("example.com › docs"), "" when none. */
  meta_data: string;
  url: string;
}

/** What a results page came to: `ok` with results, `empty` (the engine's own "no results"), or `blocked`. */
export type SerpOutcome = Extract<ParseOutcome<SearchResult[]>, { kind: 'ok' | 'empty' | 'blocked' }>;

export interface SearchEngine {
  name: EngineName;
  /** The engine only answers a JavaScript-capable browser (the chain loads it there). */
  needsBrowser: boolean;
  /**
   * `page` is the upstream page of (nominally) 10 results, 1-based. `now` only feeds engines
   * whose time filters are absolute dates; it defaults to the current time.
   */
  buildRequest(params: SearchParams, page: number, baseUrl: string, now?: Date): UpstreamRequest;
  parse(response: UpstreamResponse): SerpOutcome;
}
