/**
 * Google web search (www.google.com/search). Google answers plain HTTP clients with a page
 * that needs JavaScript, so the chain only uses this engine through a browser (`via: 'browser'`);
 * the parser reads the rendered desktop page and the older JavaScript-free layout alike.
 *
 * Locale: `hl` (interface, "<lang>-<COUNTRY>"), `gl` (country), `lr` (result language).
 * Paging: `start` = zero-based offset, `num` = results per page (10, or up to 100 when the chain
 * asks for larger pages: one render instead of ten). Time: `tbs=qdr:h|d|w|m|y`.
 * `filter=0` keeps Google from folding "similar" results; the `CONSENT` cookie pre-answers
 * the cookie wall shown in the EU.
 */
import type { Cheerio, CheerioAPI } from 'cheerio';
import type { AnyNode } from 'domhandler';
import type { SearchParams, TimeRange, UpstreamRequest, UpstreamResponse } from '../types.ts';
import { defineEngine } from '../types.ts';
import type { RequestContext } from '../../kit/types.ts';
import { resolveLink, textOf, textOfFirst } from '../../kit/html.ts';
import { buildUrl } from '../../kit/request.ts';
import { browserHeaders, serpParser, isEngineUrl, pushResult } from './serp.ts';

const TIME_UNITS: Record<TimeRange, string> = { hour: 'h', day: 'd', week: 'w', month: 'm', year: 'y' };

function resultLanguage(params: SearchParams): string {
  if (params.language !== 'zh') return `lang_${params.language}`;
  return params.country === 'tw' || params.country === 'hk' ? 'lang_zh-TW' : 'lang_zh-CN';
}

function buildRequest(params: SearchParams, { baseUrl }: RequestContext): UpstreamRequest {
  const page = params.page;
  const size = params.pageSize ?? 10;
  return {
    url: buildUrl(baseUrl, 'search', {
      q: params.query,
      hl: params.country ? `${params.language}-${params.country.toUpperCase()}` : params.language,
      gl: params.country || undefined,
      lr: resultLanguage(params),
      start: page > 1 ? String((page - 1) * size) : undefined,
      num: String(size),
      filter: '0',
      tbs: params.timeRange ? `qdr:${TIME_UNITS[params.timeRange]}` : undefined,
      ie: 'utf8',
      oe: 'utf8',
    }),
    method: 'GET',
    headers: { ...browserHeaders(params.language, params.country), Cookie: 'CONSENT=YES+' },
  };
}

/**
 * Google's hosts: `/(^|\.)google\.[a-z.]+$/i.test(hostname)` in linear time. Such a `google.` is in
 * the trailing run of letters and dots, at its start (the hostname's) or after a dot, with at least
 * one character after it.
 */
export function isGoogleHost(hostname: string): boolean {
  let start = hostname.length;
  while (start > 0 && /[a-z.]/i.test(hostname[start - 1])) start -= 1;
  const tail = hostname.slice(start).toLowerCase();
  for (let at = tail.indexOf('google.'); at !== -1; at = tail.indexOf('google.', at + 1)) {
    if ((at === 0 ? start === 0 : tail[at - 1] === '.') && at + 'google.'.length < tail.length) return true;
  }
  return false;
}

const GOOGLE_HOSTS = { test: isGoogleHost };

/** `/url?q=<target>` (or `url=`) is Google's click redirect. */
function unwrapGoogle(pageUrl: string) {
  return (url: URL): string | undefined => {
    if (url.pathname !== '/url' || !isEngineUrl(url, pageUrl, GOOGLE_HOSTS)) return undefined;
    return url.searchParams.get('q') ?? url.searchParams.get('url') ?? undefined;
  };
}

/** Blocks that are not organic results: ads, "People also ask", carousels, knowledge panels. */
const NOT_ORGANIC = [
  '#tads',
  '#tadsb',
  '#bottomads',
  '[data-text-ad]',
  '.commercial-unit-desktop-top',
  '.commercial-unit-desktop-rhs',
  '.related-question-pair',
  '[data-initq]',
  'g-section-with-header',
  'g-scrolling-carousel',
  'g-inner-card',
  'video-voyager',
  '#rhs',
  '.kp-wholepage',
  '.knowledge-panel',
  '.kno-kp',
].join(', ');

/** The smallest block that holds one result, in the rendered and in the JavaScript-free layout. */
const RESULT_BLOCK = 'div.g, div.tF2Cxc, div.MjjYud, div.Gx5Zad';

/**
 * Google's own navigation in result slots ("More results", image strips, ad clicks, sign-in and
 * settings): exact paths on the page's own origin, the sign-in host and the ad host. Results that
 * are real pages on Google's properties (about.google, store.google.com, www.google.com/drive/,
 * www.google.com/search/howsearchworks/) are results like any other and stay.
 */
const NAVIGATION_PATHS = /^\/(search|imgres|aclk|url|sorry|setprefs|preferences|advanced_search|webhp)\/?$/;

function isInternalLink(url: string, pageUrl: string): boolean {
  const parsed = new URL(url);
  if (/(^|\.)googleadservices\.com$/i.test(parsed.hostname)) return true;
  if (/^accounts\.google\./i.test(parsed.hostname) && /^\/(ServiceLogin|signin|SignOutOptions|Logout)\b/i.test(parsed.pathname)) return true;
  return isEngineUrl(parsed, pageUrl, /^$/) && NAVIGATION_PATHS.test(parsed.pathname);
}

function description($: CheerioAPI, block: Cheerio<AnyNode>): string {
  const rendered = block.find('.VwiC3b, [data-sncf~="1"], .IsZvec').first();
  if (rendered.length > 0) return textOf(rendered);
  // JavaScript-free layout: the innermost text block outside the title link (outer ones also
  // hold sitelinks).
  const leaf = block
    .find('.BNeawe.s3v9rd')
    .filter((_, element: AnyNode) => $(element).find('.BNeawe.s3v9rd').length === 0 && $(element).closest('a').length === 0)
    .first();
  return textOf(leaf);
}

const parse = serpParser(
  ($, response, results) => {
    const unwrap = unwrapGoogle(response.url);
    const seenBlocks = new Set<AnyNode>();
    const column = ['#rso', '#search', '#main', 'body'].map((selector) => $(selector)).find((node) => node.length > 0);

    column?.find('a[href]:has(h3)').each((_, element) => {
      const link = $(element);
      if (link.closest(NOT_ORGANIC).length > 0) return;
      const block = link.closest(RESULT_BLOCK);
      const blockNode = block.get(0);
      if (blockNode) {
        if (seenBlocks.has(blockNode)) return;
        seenBlocks.add(blockNode);
      }
      const url = resolveLink(link.attr('href'), response.url, unwrap);
      if (!url || isInternalLink(url, response.url)) return;
      const scope = block.length > 0 ? block : link.parent();
      return pushResult(results, {
        title: textOf(link.find('h3')),
        description: description($, scope),
        meta_data: textOfFirst(scope, ['cite', '.UPmit', '.sCuL3']),
        url,
      });
    });
  },
  ($, response, pageText) => ({
    blockReason: () => blockReason($, response, pageText),
    hasNoResultsMarker: () => /did not match any documents|No results found for/i.test(pageText()),
  }),
);

function blockReason($: CheerioAPI, response: UpstreamResponse, pageText: () => string): string | undefined {
  const url = new URL(response.url);
  if (/^consent\.google\./i.test(url.hostname)) return 'Google consent wall';
  if (url.pathname.startsWith('/sorry')) return 'Google captcha (/sorry)';
  if ($('#captcha-form, .g-recaptcha, form[action*="sorry" i]').length > 0) return 'Google reCAPTCHA';
  if ($('form[action*="consent.google" i]').length > 0) return 'Google consent wall';
  if (/\/httpservice\/retry\/enablejs/i.test(response.body)) return 'Google JavaScript-required page';
  const text = pageText();
  if (/unusual traffic from your computer network/i.test(text)) return 'Google "unusual traffic" captcha';
  if (/Before you continue to Google/i.test(text)) return 'Google consent wall';
  if (/(turn on|enable) JavaScript|not redirected within a few seconds/i.test(text)) {
    return 'Google JavaScript-required page';
  }
  return undefined;
}

export const google = defineEngine({ name: 'google', via: 'browser', baseUrl: 'https://www.google.com', maxPageSize: 100, buildRequest, parse });
