/**
 * Mojeek (www.mojeek.com/search), plain HTML from its own index.
 *
 * Language: `lb` (language bias); region: `arc` (region code, "uk" for Great Britain as on
 * Mojeek's own region links). Both go as query parameters and as the preference cookies the
 * site sets. Paging: `s` = 1-based index of the first result (the site's "Next" links use
 * s=11, s=21...). Time: `since` = YYYYMMDD; the finest unit is a day, so hour uses yesterday.
 */
import type { SearchParams, TimeRange, UpstreamRequest } from '../types.ts';
import { defineEngine } from '../types.ts';
import type { RequestContext } from '../../kit/types.ts';
import { resolveLink, textOf, textOfFirst } from '../../kit/html.ts';
import { buildUrl, cookieHeader } from '../../kit/request.ts';
import { browserHeaders, serpParser, pushResult } from './serp.ts';

const REGION_ALIASES: Record<string, string> = { gb: 'uk' };

/** `now` minus whole months (UTC), clamped to the last day of a shorter month (Mar 31 → Feb 29). */
function monthsBefore(now: Date, months: number): Date {
  const target = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - months, 1));
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(now.getUTCDate(), lastDay));
  return target;
}

/** The UTC date `range` before `now`, as YYYYMMDD. */
export function sinceDate(range: TimeRange, now: Date): string {
  const days = (n: number) => new Date(now.getTime() - n * 86_400_000);
  const since =
    range === 'hour' || range === 'day' ? days(1) : range === 'week' ? days(7) : monthsBefore(now, range === 'month' ? 1 : 12);
  return since.toISOString().slice(0, 10).replaceAll('-', '');
}

function buildRequest(params: SearchParams, { baseUrl, now }: RequestContext): UpstreamRequest {
  const page = params.page;
  const region = REGION_ALIASES[params.country] ?? params.country;
  return {
    url: buildUrl(baseUrl, 'search', {
      q: params.query,
      // s=1 on the first page is known to trip Mojeek's rate limiter; the site omits it too.
      s: page > 1 ? String((page - 1) * 10 + 1) : undefined,
      lb: params.language,
      arc: region || undefined,
      since: params.timeRange ? sinceDate(params.timeRange, now) : undefined,
    }),
    method: 'GET',
    headers: {
      ...browserHeaders(params.language, params.country),
      Cookie: cookieHeader(region ? { lb: params.language, arc: region } : { lb: params.language }),
    },
  };
}

const parse = serpParser(
  ($, response, results) => {
    $('ul.results-standard > li').each((_, element) => {
      const item = $(element);
      const link = item.find('h2 a.title, h2 a').first();
      return pushResult(results, {
        title: textOf(link),
        description: textOf(item.find('p.s')),
        meta_data: textOfFirst(item, ['p.i .url', '.url']),
        url: resolveLink(link.attr('href') ?? item.find('a.ob').attr('href'), response.url) ?? '',
      });
    });
  },
  ($, response, pageText) => ({
    blockReason: () =>
      /automated (search )?queries|your network appears to be sending/i.test(pageText())
        ? 'Mojeek refused automated queries'
        : undefined,
    hasNoResultsMarker: () => /No pages found matching/i.test(pageText()),
  }),
);

export const mojeek = defineEngine({ name: 'mojeek', via: 'http', baseUrl: 'https://www.mojeek.com', buildRequest, parse });
