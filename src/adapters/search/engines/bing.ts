/**
 * Bing web search (www.bing.com/search), plain HTML.
 *
 * Market: `setlang` + `cc` query parameters and the `_EDGE_CD` / `_EDGE_S` cookies the site
 * itself sets when the market is chosen. Paging: `first` = 1-based index of the first result.
 * Time: `filters=ex1:"ez1|ez2|ez3"` (day/week/month), a custom day range `ez5_<from>_<to>`
 * for a year; Bing has no past-hour filter, so hour uses the past day.
 */
import type { SearchParams, TimeRange, UpstreamRequest } from '../types.ts';
import { defineEngine } from '../types.ts';
import type { RequestContext } from '../../kit/types.ts';
import { resolveLink, textOf, textOfFirst } from '../../kit/html.ts';
import { buildUrl, cookieHeader } from '../../kit/request.ts';
import { browserHeaders, serpParser, epochDay, isEngineUrl, pushResult } from './serp.ts';

const BING_HOSTS = /(^|\.)bing\.com$/i;

function timeFilter(range: TimeRange | undefined, now: Date): string | undefined {
  switch (range) {
    case undefined:
      return undefined;
    case 'hour':
    case 'day':
      return 'ex1:"ez1"';
    case 'week':
      return 'ex1:"ez2"';
    case 'month':
      return 'ex1:"ez3"';
    case 'year': {
      const today = epochDay(now);
      return `ex1:"ez5_${today - 365}_${today}"`;
    }
  }
}

function buildRequest(params: SearchParams, { baseUrl, now }: RequestContext): UpstreamRequest {
  const page = params.page;
  const market = `${params.language}-${params.country.toUpperCase()}`;
  const url = buildUrl(baseUrl, 'search', {
    q: params.query,
    setlang: params.language,
    cc: params.country.toUpperCase(),
    first: page > 1 ? String((page - 1) * 10 + 1) : undefined,
    // The site sends FORM=PERE, PERE1, PERE2... with its "next page" links.
    FORM: page === 2 ? 'PERE' : page > 2 ? `PERE${page - 2}` : undefined,
    filters: timeFilter(params.timeRange, now),
  });
  return {
    url,
    method: 'GET',
    headers: {
      ...browserHeaders(params.language, params.country),
      Cookie: cookieHeader({
        _EDGE_CD: `m=${market}&u=${params.language}`,
        _EDGE_S: `mkt=${market}&ui=${params.language}`,
      }),
    },
  };
}

/** `/ck/a?...&u=a1<base64url of the target>` is Bing's click-tracking redirect. */
function unwrapBing(pageUrl: string) {
  return (url: URL): string | undefined => {
    if (url.pathname !== '/ck/a' || !isEngineUrl(url, pageUrl, BING_HOSTS)) return undefined;
    const encoded = url.searchParams.get('u');
    if (!encoded?.startsWith('a1')) return undefined;
    const target = Buffer.from(encoded.slice(2), 'base64url').toString('utf8');
    return /^https?:\/\//i.test(target) ? target : undefined;
  };
}

const parse = serpParser(
  ($, response, results) => {
    const unwrap = unwrapBing(response.url);

    // Direct children only: ads live in li.b_ad, answers and carousels in li.b_ans.
    $('#b_results > li.b_algo').each((_, element) => {
      const item = $(element);
      if (item.find('.b_adSlug, .b_adurl').length > 0) return;
      const link = item.find('h2 a').first();
      item.find('.algoSlug_icon').remove();
      return pushResult(results, {
        title: textOf(link),
        description: textOfFirst(item, ['.b_caption p', '[class*="b_lineclamp"]', '.b_paractl', 'p']),
        meta_data: textOf(item.find('cite')),
        url: resolveLink(link.attr('href'), response.url, unwrap) ?? '',
      });
    });
  },
  ($, response, pageText) => ({
    blockReason: () => {
      if ($('.captcha .captcha_header, #turnstile-widget').length > 0) return 'Bing "One last step" challenge';
      if (/\/turing\//.test(response.url)) return 'Bing challenge redirect';
      return undefined;
    },
    hasNoResultsMarker: () =>
      $('#b_results > li.b_no').length > 0 || /There are no results for/i.test(pageText()),
  }),
);

export const bing = defineEngine({ name: 'bing', via: 'http', baseUrl: 'https://www.bing.com', buildRequest, parse });
