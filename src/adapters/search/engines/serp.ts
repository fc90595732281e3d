/**
 * What every results page shares: the headers engines expect, time filters, and the common
 * decision of what a page without results means (a real "nothing found", or a block).
 */
import * as cheerio from 'cheerio';
import type { CheerioAPI } from 'cheerio';
import { MAX_PAGE_ITEMS } from '../../kit/limits.ts';
import { cleanText, genericChallenge, pageTextReader } from '../../kit/html.ts';
import type { SearchLanguage, SearchResult, SerpOutcome, TimeRange, UpstreamResponse } from '../types.ts';

/** Engines serve their plain-HTML pages to ordinary desktop browsers; a library UA gets a block page. */
const USER_AGENT =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

export function browserHeaders(language: SearchLanguage, country: string): Record<string, string> {
  return {
    'User-Agent': USER_AGENT,
    Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
    'Accept-Language': acceptLanguage(language, country),
  };
}

/** "de-AT,de;q=0.9,en;q=0.5": the user's language first, English as a last resort. */
export function acceptLanguage(language: SearchLanguage, country: string): string {
  const tag = country ? `${language}-${country.toUpperCase()}` : language;
  return language === 'en' ? `${tag},en;q=0.9` : `${tag},${language};q=0.9,en;q=0.5`;
}




/** Days since the Unix epoch (UTC), the unit of Bing's custom date ranges. */
export function epochDay(now: Date): number {
  return Math.floor(now.getTime() / 86_400_000);
}








/** True when `url` is served by the page's own origin or by one of the engine's hosts. */
export function isEngineUrl(url: URL, pageUrl: string, hosts: { test(hostname: string): boolean }): boolean {
  if (hosts.test(url.hostname)) return true;
  try {
    return new URL(pageUrl).origin === url.origin;
  } catch {
    return false;
  }
}

/** HTTP statuses that mean the engine refused or could not answer, whatever the body says. */
export function statusBlock(status: number): SerpOutcome | undefined {
  if (status === 403 || status === 429) return { kind: 'blocked', reason: `HTTP ${status}` };
  if (status >= 500) return { kind: 'blocked', reason: `HTTP ${status} (engine unavailable)` };
  if (status < 200 || status >= 300) return { kind: 'blocked', reason: `unexpected HTTP ${status}` };
  return undefined;
}

export interface PageVerdict {
  /** Engine-specific block signals, checked when the page holds no result. */
  blockReason?: () => string | undefined;
  /** The engine's explicit "no results" marker. */
  hasNoResultsMarker: () => boolean;
}

/** Below this much text, a page without results is a shell rather than a layout we cannot read. */
const UNKNOWN_LAYOUT_MIN_TEXT = 400;

/**
 * Results win; an empty page is `blocked` when it carries a block signal, `empty` only with
 * the engine's explicit marker, and otherwise `blocked` (little text, or a page asking for
 * JavaScript: a shell) or `changed` (plenty of text in a layout we do not know: parser drift),
 * never a real "nothing found".
 */
export function pageVerdict(
  $: CheerioAPI,
  response: UpstreamResponse,
  results: SearchResult[],
  verdict: PageVerdict,
): SerpOutcome {
  if (results.length > 0) return { kind: 'ok', value: results };
  const reason = verdict.blockReason?.() ?? genericChallenge($, response);
  if (reason) return { kind: 'blocked', reason };
  if (verdict.hasNoResultsMarker()) return { kind: 'empty' };
  // Neither results nor a "no results" marker. A page with little text, or one that asks for
  // JavaScript, is a shell we were given instead of results (blocked); a page full of text in a
  // layout the parser does not know means the engine changed its markup (changed): the operator's
  // drift report must tell the two apart, and a parser's drift must not suspend the engine.
  // A page without a <body> tag has its content at the root (htmlparser2 adds no implied body).
  const body = $('body');
  const text = cleanText(body.length > 0 ? body.text() : $.root().text());
  if (text.length < UNKNOWN_LAYOUT_MIN_TEXT || /enable javascript|javascript is (disabled|required)/i.test(text)) {
    return { kind: 'blocked', reason: 'no result container and no "no results" marker (JavaScript-only page)' };
  }
  return { kind: 'changed', reason: `a page of ${text.length} characters with neither results nor a "no results" marker: the layout may have changed` };
}

/**
 * The status check and HTML load every parser starts with. Scripts, styles and templates are
 * dropped up front: inline `<style>` tags sit inside result markup on some engines and would
 * leak CSS into extracted text.
 *
 * Pages are parsed with htmlparser2 rather than the spec-exact parse5 tree builder: a results
 * page of 100 KB takes several times less to read, and the pages of one fan-out are parsed one
 * after another on the event loop, so that time adds up per page (ten pages for 100 results).
 * The parsers only select result blocks, links and text, where the two trees agree (the
 * recorded pages of test/corpus read the same either way). `<noscript>` content is markup in
 * both, as some engines put a result's display URL inside one.
 */
export function openPage(response: UpstreamResponse): { blocked: SerpOutcome } | { $: CheerioAPI } {
  const blocked = statusBlock(response.status);
  if (blocked) return { blocked };
  if (response.body.trim() === '') return { blocked: { kind: 'blocked', reason: 'empty response body' } };
  const $ = loadSerpHtml(response.body);
  $('script, style, template').remove();
  return { $ };
}

/** HTML mode of htmlparser2: lenient, no implied `<html>`/`<body>` when the page has none. */
export function loadSerpHtml(body: string): CheerioAPI {
  return cheerio.load(body, { xml: { xmlMode: false, decodeEntities: true } });
}

/**
 * An engine's `parse`: a refused status or an empty body first (`openPage`), then `read` pushes
 * the page's organic results (`pushResult`), then `pageVerdict` tells an empty page from a block
 * by the engine's `verdict` (`pageText` reads the page's text once, when first asked).
 */
export function serpParser(
  read: ($: CheerioAPI, response: UpstreamResponse, results: SearchResult[]) => void,
  verdict: ($: CheerioAPI, response: UpstreamResponse, pageText: () => string) => PageVerdict,
): (response: UpstreamResponse) => SerpOutcome {
  return (response) => {
    const page = openPage(response);
    if ('blocked' in page) return page.blocked;
    const { $ } = page;
    const results: SearchResult[] = [];
    read($, response, results);
    return pageVerdict($, response, results, verdict($, response, pageTextReader($)));
  };
}

/**
 * Pushes a result when it has the two fields a result cannot lack, and answers whether the page
 * has room for more: an upstream page keeps at most MAX_PAGE_ITEMS results (the largest
 * `per_page`), so a parser's `.each` returns this and stops reading a longer page (issue 33).
 */
export function pushResult(results: SearchResult[], result: SearchResult): boolean {
  if (results.length < MAX_PAGE_ITEMS && result.url && result.title) results.push(result);
  return results.length < MAX_PAGE_ITEMS;
}

/**
 * The one-letter time filter DuckDuckGo and Startpage share (d, w, m, y); neither has an hour
 * filter, so "hour" narrows to the past day. "" when no range is asked for.
 */
export function letterTimeFilter(range: TimeRange | undefined): string {
  switch (range) {
    case undefined:
      return '';
    case 'hour':
    case 'day':
      return 'd';
    case 'week':
      return 'w';
    case 'month':
      return 'm';
    case 'year':
      return 'y';
  }
}
