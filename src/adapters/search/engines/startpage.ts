/**
 * Startpage (www.startpage.com/sp/search), queried as its own pagination form does: a POST
 * of form fields.
 *
 * Language: `language` (results) and `lui` (interface), both Startpage language names such as
 * "english" or "deutsch", also in the `preferences` cookie. Region: `qsr`, a
 * "<language>_<COUNTRY>" code when Startpage knows the pair, "all" otherwise. Paging: `page`
 * (1-based) with `segment=startpage.udog` as the site sends it. Time: `with_date` = d/w/m/y;
 * Startpage has no past-hour filter, so hour uses the past day.
 *
 * The site's form also carries an `sc` code scraped from its home page; an adapter request is
 * a single stateless request, so it goes without (Startpage answers such requests).
 */
import type { SearchLanguage, SearchParams, UpstreamRequest } from '../types.ts';
import { defineEngine } from '../types.ts';
import type { RequestContext } from '../../kit/types.ts';
import { resolveLink, textOf, textOfFirst } from '../../kit/html.ts';
import { buildUrl, cookieHeader, formBody } from '../../kit/request.ts';
import { browserHeaders, serpParser, isEngineUrl, letterTimeFilter, pushResult } from './serp.ts';

const LANGUAGE_NAMES: Record<SearchLanguage, string> = {
  en: 'english',
  es: 'espanol',
  fr: 'francais',
  de: 'deutsch',
  it: 'italiano',
  pt: 'portugues',
  ja: 'japanese',
  ko: 'hangul',
  zh: 'jiantizhongwen',
  ar: 'arabic',
  hi: 'hindi',
  ru: 'russian',
  tr: 'turkce',
  ur: 'urdu',
};

/** Startpage's region codes for a language/country pair, where they are not "<lang>_<CC>". */
const REGION_OVERRIDES: Record<string, string> = {
  'en-gb': 'en-GB_GB',
  'pt-br': 'pt-BR_BR',
  'zh-cn': 'zh-CN_CN',
  'zh-tw': 'zh-TW_TW',
  'zh-hk': 'zh-TW_HK',
};

/** Language/country pairs Startpage offers as a region. */
const REGIONS = new Set([
  'en-us', 'en-gb', 'en-au', 'en-ca', 'en-in', 'en-ie', 'en-nz', 'en-sg', 'de-de', 'de-at', 'de-ch', 'fr-fr',
  'fr-be', 'fr-ca', 'fr-ch', 'es-es', 'es-mx', 'es-ar', 'it-it', 'pt-br', 'pt-pt', 'ru-ru', 'ru-by', 'ja-jp',
  'ko-kr', 'zh-cn', 'zh-tw', 'zh-hk', 'tr-tr', 'ar-eg', 'hi-in',
]);

export function regionCode(language: SearchLanguage, country: string): string {
  const pair = `${language}-${country}`;
  if (!REGIONS.has(pair)) return 'all';
  return REGION_OVERRIDES[pair] ?? `${language}_${country.toUpperCase()}`;
}

/** Startpage's preference cookie: key EEE value pairs joined by N1N. */
function preferencesCookie(languageName: string, region: string): string {
  const preferences: Record<string, string> = {
    date_time: 'world',
    disable_open_in_new_window: '0',
    enable_post_method: '1',
    num_of_results: '10',
    language: languageName,
    language_ui: languageName,
    search_results_region: region,
  };
  return Object.entries(preferences)
    .map(([key, value]) => `${key}EEE${value}`)
    .join('N1N');
}

function buildRequest(params: SearchParams, { baseUrl }: RequestContext): UpstreamRequest {
  const page = params.page;
  const languageName = LANGUAGE_NAMES[params.language];
  const region = regionCode(params.language, params.country);
  const origin = new URL(baseUrl).origin;
  return {
    url: buildUrl(baseUrl, 'sp/search', {}),
    method: 'POST',
    headers: {
      ...browserHeaders(params.language, params.country),
      'Content-Type': 'application/x-www-form-urlencoded',
      Origin: origin,
      Referer: `${origin}/`,
      Cookie: cookieHeader({ preferences: preferencesCookie(languageName, region) }),
    },
    body: formBody({
      query: params.query,
      cat: 'web',
      t: 'device',
      language: languageName,
      lui: languageName,
      qsr: region,
      with_date: letterTimeFilter(params.timeRange),
      page: page > 1 ? String(page) : undefined,
      segment: page > 1 ? 'startpage.udog' : undefined,
    }),
  };
}

const GOOGLE_AD = /^https?:\/\/(www\.)?google\.[a-z.]+\/aclk/i;
const STARTPAGE_HOSTS = /(^|\.)startpage\.com$/i;

const parse = serpParser(
  ($, response, results) => {
    // `.w-gl` is the web-results block; ads sit in their own blocks (.a-bg-result, Google ad
    // frames) and any that slip through link to google.com/aclk.
    $('.w-gl .result, .w-gl .w-gl__result').each((_, element) => {
      const item = $(element);
      if (item.closest('.a-bg-result, .ecommerce-ad').length > 0) return;
      const link = item.find('a.result-title, a.w-gl__result-title').first();
      const url = resolveLink(link.attr('href'), response.url);
      if (!url || GOOGLE_AD.test(url) || isEngineUrl(new URL(url), response.url, STARTPAGE_HOSTS)) return;
      const title = link.find('h2, h3').length > 0 ? link.find('h2, h3') : link;
      return pushResult(results, {
        title: textOf(title),
        description: textOfFirst(item, ['p.description', '.w-gl__description']),
        meta_data: textOfFirst(item, ['.wgl-display-url .structured-link-text', '.wgl-display-url', '.w-gl__result-url']),
        url,
      });
    });
  },
  ($, response) => ({
    blockReason: () => {
      if (/\/sp\/captcha/.test(response.url)) return 'Startpage captcha';
      if (/anubis|Making sure you(&#39;|')re not a bot/i.test(response.body) && $('.w-gl').length === 0) {
        return 'Startpage proof-of-work challenge';
      }
      return undefined;
    },
    // The server-rendered page describes its blocks; an empty search has a "noresults" one.
    hasNoResultsMarker: () => /display_type['"]?\s*:\s*['"][\w-]*noresults/i.test(response.body),
  }),
);

export const startpage = defineEngine({ name: 'startpage', via: 'http', baseUrl: 'https://www.startpage.com', buildRequest, parse });
