/**
 * DuckDuckGo's JavaScript-free endpoint (html.duckduckgo.com/html/), queried the way its own
 * form does: a POST of form fields.
 *
 * Region: `kl` (e.g. "us-en", "uk-en", "wt-wt" for no region), as a field and a cookie.
 * Paging: `s` (offset) and `dc` (offset + 1) plus the fixed fields of the "Next" form.
 * Time: `df` = d/w/m/y; DuckDuckGo has no past-hour filter, so hour uses the past day.
 *
 * The parser also reads the lite endpoint's table layout (lite.duckduckgo.com/lite/), which
 * costs a few lines and lets the same adapter read either page.
 */
import type { Cheerio, CheerioAPI } from 'cheerio';
import type { AnyNode } from 'domhandler';
import type { SearchLanguage, SearchParams, SearchResult, UpstreamRequest } from '../types.ts';
import { defineEngine } from '../types.ts';
import type { RequestContext } from '../../kit/types.ts';
import { resolveLink, textOf } from '../../kit/html.ts';
import { buildUrl, cookieHeader, formBody } from '../../kit/request.ts';
import { browserHeaders, serpParser, isEngineUrl, letterTimeFilter, pushResult } from './serp.ts';

/** The regions of DuckDuckGo's region selector: "<region>-<language>". */
const REGIONS = [
  'ar-es', 'au-en', 'at-de', 'be-fr', 'be-nl', 'br-pt', 'bg-bg', 'ca-en', 'ca-fr', 'ct-ca', 'cl-es', 'cn-zh',
  'co-es', 'hr-hr', 'cz-cs', 'dk-da', 'ee-et', 'fi-fi', 'fr-fr', 'de-de', 'gr-el', 'hk-tzh', 'hu-hu', 'is-is',
  'in-en', 'id-en', 'ie-en', 'il-en', 'it-it', 'jp-jp', 'kr-kr', 'lv-lv', 'lt-lt', 'my-en', 'mx-es', 'nl-nl',
  'nz-en', 'no-no', 'pk-en', 'pe-es', 'ph-en', 'pl-pl', 'pt-pt', 'ro-ro', 'ru-ru', 'xa-ar', 'sg-en', 'sk-sk',
  'sl-sl', 'za-en', 'es-ca', 'es-es', 'se-sv', 'ch-de', 'ch-fr', 'tw-tzh', 'th-en', 'tr-tr', 'us-en', 'us-es',
  'ua-uk', 'uk-en', 'vn-en',
];

/** Where DuckDuckGo's region code differs from ISO 3166. */
const REGION_ALIASES: Record<string, string> = { gb: 'uk', si: 'sl' };

/** DuckDuckGo's language suffix where it differs from ISO 639-1. */
const LANGUAGE_SUFFIX: Partial<Record<SearchLanguage, string>> = { ja: 'jp', ko: 'kr', zh: 'tzh' };

export function regionCode(country: string, language: SearchLanguage): string {
  const region = REGION_ALIASES[country] ?? country;
  const candidates = REGIONS.filter((code) => code.startsWith(`${region}-`));
  const wanted = [`${region}-${language}`, `${region}-${LANGUAGE_SUFFIX[language] ?? language}`];
  const match = candidates.find((code) => wanted.includes(code)) ?? candidates[0];
  if (match) return match;
  return language === 'ar' ? 'xa-ar' : 'wt-wt';
}

function buildRequest(params: SearchParams, { baseUrl }: RequestContext): UpstreamRequest {
  const page = params.page;
  const kl = regionCode(params.country, params.language);
  const df = letterTimeFilter(params.timeRange);
  const offset = (page - 1) * 10;
  const url = buildUrl(baseUrl, 'html/', {});
  const cookies: Record<string, string> = { kl };
  if (df) cookies.df = df;
  return {
    url,
    method: 'POST',
    headers: {
      ...browserHeaders(params.language, params.country),
      'Content-Type': 'application/x-www-form-urlencoded',
      Referer: url,
      Cookie: cookieHeader(cookies),
    },
    // Field order and values mirror the page's own search and "Next" forms.
    body: formBody({
      q: params.query,
      s: page > 1 ? String(offset) : undefined,
      nextParams: page > 1 ? '' : undefined,
      v: page > 1 ? 'l' : undefined,
      o: page > 1 ? 'json' : undefined,
      dc: page > 1 ? String(offset + 1) : undefined,
      api: page > 1 ? 'd.js' : undefined,
      kl,
      df,
    }),
  };
}

const DDG_HOSTS = /(^|\.)duckduckgo\.com$/i;

/** `//duckduckgo.com/l/?uddg=<target>&rut=...` is DuckDuckGo's click redirect. */
function unwrapDuckDuckGo(pageUrl: string) {
  return (url: URL): string | undefined => {
    if (url.pathname !== '/l/' || !isEngineUrl(url, pageUrl, DDG_HOSTS)) return undefined;
    return url.searchParams.get('uddg') ?? undefined;
  };
}

/** Ad clicks go through duckduckgo.com/y.js; they are never organic. */
function isAdLink(href: string | undefined): boolean {
  return href !== undefined && /duckduckgo\.com\/y\.js|[?&]ad_provider=/i.test(href);
}

/** A result of either layout: its link's text, its snippet's, its display URL's, and where the link leads. */
function resultOf(link: Cheerio<AnyNode>, snippet: Cheerio<AnyNode>, displayUrl: Cheerio<AnyNode>, url: string | undefined): SearchResult {
  return { title: textOf(link), description: textOf(snippet), meta_data: textOf(displayUrl), url: url ?? '' };
}

function parseHtmlLayout($: CheerioAPI, pageUrl: string): SearchResult[] {
  const unwrap = unwrapDuckDuckGo(pageUrl);
  const results: SearchResult[] = [];
  $('.result').each((_, element) => {
    const item = $(element);
    if (item.is('.result--ad, .result--ad--small') || item.find('.badge--ad').length > 0) return;
    const link = item.find('a.result__a').first();
    const href = link.attr('href');
    if (isAdLink(href)) return;
    return pushResult(results, resultOf(link, item.find('.result__snippet'), item.find('.result__url'), resolveLink(href, pageUrl, unwrap)));
  });
  return results;
}

/** Lite: one table, each result spread over rows (link, snippet, display URL). */
function parseLiteLayout($: CheerioAPI, pageUrl: string): SearchResult[] {
  const unwrap = unwrapDuckDuckGo(pageUrl);
  const results: SearchResult[] = [];
  $('a.result-link').each((_, element) => {
    const link = $(element);
    const row = link.closest('tr');
    const href = link.attr('href');
    if (row.is('.result-sponsored') || isAdLink(href)) return;
    const rows = row.nextUntil('tr:has(a.result-link)');
    return pushResult(results, resultOf(link, rows.find('.result-snippet'), rows.find('.link-text'), resolveLink(href, pageUrl, unwrap)));
  });
  return results;
}

const parse = serpParser(
  ($, response, results) => {
    const isLite = $('a.result-link').length > 0;
    results.push(...(isLite ? parseLiteLayout($, response.url) : parseHtmlLayout($, response.url)));
  },
  ($, response, pageText) => ({
    blockReason: () => {
      if ($('.anomaly-modal, .anomaly-modal__modal, form#challenge-form, form[action*="anomaly" i]').length > 0) {
        return 'DuckDuckGo anomaly challenge';
      }
      const text = pageText();
      if (/bots use DuckDuckGo too/i.test(text)) return 'DuckDuckGo anomaly challenge';
      if (/being redirected to the non-JavaScript site/i.test(text)) return 'DuckDuckGo JavaScript page (no results in HTML)';
      return undefined;
    },
    hasNoResultsMarker: () => $('.no-results, .result--no-result').length > 0,
  }),
);

export const duckduckgo = defineEngine({ name: 'duckduckgo', via: 'http', baseUrl: 'https://html.duckduckgo.com', buildRequest, parse });
