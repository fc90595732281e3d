/**
 * Brave Search (search.brave.com/search), server-rendered HTML.
 *
 * Region: the `country` cookie (with `useLocation=0` so the IP does not override it); language
 * through Accept-Language, which is all Brave's index honours. `source=web` is what the site's
 * own search box sends. Paging: `offset` = zero-based page index; a Brave page holds up to 20
 * results, more than the chain's nominal 10 (the chain trims). Time: `tf` = pd/pw/pm/py; Brave
 * has no past-hour filter, so hour uses the past day.
 */
import type { SearchParams, TimeRange, UpstreamRequest } from '../types.ts';
import { defineEngine } from '../types.ts';
import type { RequestContext } from '../../kit/types.ts';
import { findFirst, resolveLink, textOf, textOfFirst } from '../../kit/html.ts';
import { buildUrl, cookieHeader } from '../../kit/request.ts';
import { browserHeaders, serpParser, pushResult } from './serp.ts';

function timeFilter(range: TimeRange | undefined): string | undefined {
  switch (range) {
    case undefined:
      return undefined;
    case 'hour':
    case 'day':
      return 'pd';
    case 'week':
      return 'pw';
    case 'month':
      return 'pm';
    case 'year':
      return 'py';
  }
}

function buildRequest(params: SearchParams, { baseUrl }: RequestContext): UpstreamRequest {
  const page = params.page;
  return {
    url: buildUrl(baseUrl, 'search', {
      q: params.query,
      source: 'web',
      offset: page > 1 ? String(page - 1) : undefined,
      tf: timeFilter(params.timeRange),
      // Without it Brave silently searches a "corrected" query.
      spellcheck: '0',
    }),
    method: 'GET',
    headers: {
      ...browserHeaders(params.language, params.country),
      Cookie: cookieHeader({ country: params.country || 'all', useLocation: '0', summarizer: '0' }),
    },
  };
}

const parse = serpParser(
  ($, response, results) => {
    // Organic results carry data-type="web"; videos, news, FAQ, discussions and ads carry other
    // types or none.
    $('#results .snippet[data-type="web"]').each((_, element) => {
      const item = $(element);
      const title = findFirst(item, ['.search-snippet-title', '.snippet-title', '.title']);
      if (!title) return;
      const titleLink = title.closest('a[href]');
      const link = titleLink.length > 0 ? titleLink : item.find('a[href]').first();
      const href = link.attr('href');
      // A relative link in a result slot is an ad redirect, not a page.
      if (!href || !/^https?:\/\//i.test(href)) return;
      return pushResult(results, {
        title: textOf(title),
        description: textOfFirst(item, [
          '.generic-snippet .content',
          '.snippet-description',
          '.snippet-content',
          '.video-snippet .content [class*="line-clamp"]',
        ]),
        meta_data: textOfFirst(item, ['cite.snippet-url', '.snippet-url', 'cite']),
        url: resolveLink(href, response.url) ?? '',
      });
    });
  },
  ($, response, pageText) => ({
    blockReason: () => {
      if (/captcha/i.test(response.url)) return 'Brave captcha';
      if ($('#captcha, .captcha, form[action*="captcha" i]').length > 0) return 'Brave captcha';
      return undefined;
    },
    hasNoResultsMarker: () =>
      $('#results').length > 0 &&
      ($('#results [class*="no-results"], #no-results').length > 0 ||
        /No results found for|Not many great matches came back for your search/i.test(pageText())),
  }),
);

export const brave = defineEngine({ name: 'brave', via: 'http', baseUrl: 'https://search.brave.com', buildRequest, parse });
