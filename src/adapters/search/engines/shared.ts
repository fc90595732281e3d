/**
 * Helpers shared by the engine adapters: request building blocks (headers, cookies, forms),
 * HTML text/URL extraction, and the common decision of what an answer without results means.
 */
import * as cheerio from 'cheerio';
import type { Cheerio, CheerioAPI } from 'cheerio';
import type { AnyNode } from 'domhandler';
import type { ParseOutcome, SearchLanguage, SearchResult, TimeRange, UpstreamResponse } from '../types.ts';

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

export function cookieHeader(cookies: Record<string, string>): string {
  return Object.entries(cookies)
    .map(([name, value]) => `${name}=${value}`)
    .join('; ');
}

/** `base` + `path` + the defined parameters, in the given order. */
export function buildUrl(base: string, path: string, params: Record<string, string | undefined>): string {
  const url = new URL(path, base.endsWith('/') ? base : `${base}/`);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.append(name, value);
  }
  return url.toString();
}

export function formBody(fields: Record<string, string | undefined>): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    if (value !== undefined) form.append(name, value);
  }
  return form.toString();
}

/** Days since the Unix epoch (UTC), the unit of Bing's custom date ranges. */
export function epochDay(now: Date): number {
  return Math.floor(now.getTime() / 86_400_000);
}

/**
 * Parses with scripting disabled so `<noscript>` content is markup, not text: some engines put
 * the display URL of a result inside one.
 */
export function loadHtml(body: string): CheerioAPI {
  return cheerio.load(body, { scriptingEnabled: false });
}

export function cleanText(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export function textOf(node: Cheerio<AnyNode>): string {
  return cleanText(node.first().text());
}

/** The first element under `scope` matching the first selector, in priority order, that matches. */
export function findFirst(scope: Cheerio<AnyNode>, selectors: string[]): Cheerio<AnyNode> | undefined {
  for (const selector of selectors) {
    const found = scope.find(selector);
    if (found.length > 0) return found.first();
  }
  return undefined;
}

export function textOfFirst(scope: Cheerio<AnyNode>, selectors: string[]): string {
  const found = findFirst(scope, selectors);
  return found ? textOf(found) : '';
}

/** The page's text (scripts and styles are gone since `openPage`), computed once on first use. */
export function pageTextReader($: CheerioAPI): () => string {
  let text: string | undefined;
  return () => (text ??= cleanText($.root().text()));
}

/**
 * Resolves `href` against the page URL, lets `unwrap` replace an engine's redirect link by its
 * target, and keeps only absolute http(s) URLs (javascript:, data:, fragments are dropped).
 */
export function resolveLink(
  href: string | undefined,
  pageUrl: string,
  unwrap?: (url: URL) => string | undefined,
): string | undefined {
  if (!href) return undefined;
  let url: URL;
  try {
    url = new URL(href.trim(), pageUrl);
  } catch {
    return undefined;
  }
  const target = unwrap?.(url);
  if (target !== undefined) return resolveLink(target, pageUrl);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : undefined;
}

/** True when `url` is served by the page's own origin or by one of the engine's hosts. */
export function isEngineUrl(url: URL, pageUrl: string, hosts: RegExp): boolean {
  if (hosts.test(url.hostname)) return true;
  try {
    return new URL(pageUrl).origin === url.origin;
  } catch {
    return false;
  }
}

/** HTTP statuses that mean the engine refused or could not answer, whatever the body says. */
export function statusBlock(status: number): ParseOutcome | undefined {
  if (status === 403 || status === 429) return { kind: 'blocked', reason: `HTTP ${status}` };
  if (status >= 500) return { kind: 'blocked', reason: `HTTP ${status} (engine unavailable)` };
  if (status < 200 || status >= 300) return { kind: 'blocked', reason: `unexpected HTTP ${status}` };
  return undefined;
}

/** Challenge widgets any engine may put in front of its results. */
const CHALLENGE_SELECTORS = [
  'form[action*="captcha" i]',
  '#captcha-form',
  '.g-recaptcha',
  'iframe[src*="recaptcha" i]',
  '.h-captcha',
  'iframe[src*="hcaptcha" i]',
  '.cf-turnstile',
  '#turnstile-widget',
  '#challenge-form',
  '#challenge-running',
].join(', ');

export function genericChallenge($: CheerioAPI, response: UpstreamResponse): string | undefined {
  if (/\/(captcha|sorry)\b/i.test(safePath(response.url))) return `redirected to a challenge page (${response.url})`;
  if ($(CHALLENGE_SELECTORS).length > 0) return 'captcha challenge';
  if (/captcha|are you a robot|verify you are human/i.test($('title').text())) return 'captcha challenge';
  return undefined;
}

function safePath(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '';
  }
}

export interface PageVerdict {
  /** Engine-specific block signals, checked when the page holds no result. */
  blockReason?: () => string | undefined;
  /** The engine's explicit "no results" marker. */
  hasNoResultsMarker: () => boolean;
}

/**
 * Results win; an empty page is `blocked` when it carries a block signal, `no_results` only with
 * the engine's explicit marker, and `blocked` otherwise: a page with neither results nor the
 * marker is a JavaScript shell or a layout we do not know, never a real "nothing found".
 */
export function settle(
  $: CheerioAPI,
  response: UpstreamResponse,
  results: SearchResult[],
  verdict: PageVerdict,
): ParseOutcome {
  if (results.length > 0) return { kind: 'results', results };
  const reason = verdict.blockReason?.() ?? genericChallenge($, response);
  if (reason) return { kind: 'blocked', reason };
  if (verdict.hasNoResultsMarker()) return { kind: 'no_results' };
  return { kind: 'blocked', reason: 'no result container and no "no results" marker (JavaScript-only or unknown page)' };
}

/**
 * The status check and HTML load every parser starts with. Scripts, styles and templates are
 * dropped up front: inline `<style>` tags sit inside result markup on some engines and would
 * leak CSS into extracted text.
 */
export function openPage(response: UpstreamResponse): { blocked: ParseOutcome } | { $: CheerioAPI } {
  const blocked = statusBlock(response.status);
  if (blocked) return { blocked };
  if (response.body.trim() === '') return { blocked: { kind: 'blocked', reason: 'empty response body' } };
  const $ = loadHtml(response.body);
  $('script, style, template').remove();
  return { $ };
}

/** Pushes a result when it has the two fields a result cannot lack. */
export function pushResult(results: SearchResult[], result: SearchResult): void {
  if (result.url && result.title) results.push(result);
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
