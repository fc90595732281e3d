import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../../src/adapters/search/engines/index.ts';
import { regionCode as duckduckgoRegion } from '../../src/adapters/search/engines/duckduckgo.ts';
import { sinceDate } from '../../src/adapters/search/engines/mojeek.ts';
import { regionCode as startpageRegion } from '../../src/adapters/search/engines/startpage.ts';
import type { SearchParams, TimeRange, UpstreamRequest } from '../../src/adapters/search/types.ts';

const BASE = 'http://127.0.0.1:18080';
const NOW = new Date('2024-03-31T12:00:00Z');
const params: SearchParams = { query: 'café & "tea"', country: 'at', language: 'de', page: 1 };

function query(request: UpstreamRequest): URLSearchParams {
  return new URL(request.url).searchParams;
}

function form(request: UpstreamRequest): URLSearchParams {
  assert.equal(request.method, 'POST');
  assert.equal(request.headers['Content-Type'], 'application/x-www-form-urlencoded');
  return new URLSearchParams(request.body);
}

function cookies(request: UpstreamRequest): Record<string, string> {
  return Object.fromEntries(
    (request.headers.Cookie ?? '').split('; ').map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}

describe('every engine', () => {
  for (const engine of Object.values(ENGINES)) {
    test(`${engine.name}: targets the given base URL, sends browser headers and the user's language`, () => {
      const request = engine.buildRequest(params, { baseUrl: BASE, now: NOW });
      assert.equal(new URL(request.url).origin, BASE);
      assert.match(request.headers['User-Agent'], /Mozilla\/5\.0/);
      assert.equal(request.headers['Accept-Language'], 'de-AT,de;q=0.9,en;q=0.5');
    });

    test(`${engine.name}: carries the query text unchanged`, () => {
      const request = engine.buildRequest(params, { baseUrl: BASE, now: NOW });
      const fields = request.method === 'POST' ? new URLSearchParams(request.body) : query(request);
      assert.equal(fields.get('q') ?? fields.get('query'), params.query);
    });
  }
});

describe('google request', () => {
  const build = (overrides: Partial<SearchParams>, page = 1) => ENGINES.google.buildRequest({ ...params, ...overrides, page }, { baseUrl: BASE, now: NOW });

  test('maps locale to hl/gl/lr and asks for 10 unfiltered results', () => {
    const request = build({});
    assert.equal(request.method, 'GET');
    assert.equal(new URL(request.url).pathname, '/search');
    const q = query(request);
    assert.equal(q.get('hl'), 'de-AT');
    assert.equal(q.get('gl'), 'at');
    assert.equal(q.get('lr'), 'lang_de');
    assert.equal(q.get('num'), '10');
    assert.equal(q.get('filter'), '0');
    assert.equal(q.has('start'), false);
    assert.equal(q.has('tbs'), false);
    assert.match(request.headers.Cookie, /CONSENT=YES\+/);
  });

  test('pages by result offset: start = (page - 1) * 10', () => {
    assert.equal(query(build({}, 2)).get('start'), '10');
    assert.equal(query(build({}, 5)).get('start'), '40');
  });

  test('time ranges become tbs=qdr:h|d|w|m|y', () => {
    const expected: Record<TimeRange, string> = { hour: 'qdr:h', day: 'qdr:d', week: 'qdr:w', month: 'qdr:m', year: 'qdr:y' };
    for (const [range, tbs] of Object.entries(expected)) assert.equal(query(build({ timeRange: range as TimeRange })).get('tbs'), tbs);
  });

  test('Chinese picks simplified or traditional by country', () => {
    assert.equal(query(build({ language: 'zh', country: 'cn' })).get('lr'), 'lang_zh-CN');
    assert.equal(query(build({ language: 'zh', country: 'tw' })).get('lr'), 'lang_zh-TW');
  });

  test('is flagged as needing a browser', () => {
    assert.equal(ENGINES.google.via, 'browser');
    assert.equal(Object.values(ENGINES).filter((engine) => engine.via === 'browser').length, 1);
    assert.ok(Object.values(ENGINES).every((engine) => engine.via === 'browser' || engine.via === 'http'));
  });
});

describe('bing request', () => {
  const build = (overrides: Partial<SearchParams>, page = 1) => ENGINES.bing.buildRequest({ ...params, ...overrides, page }, { baseUrl: BASE, now: NOW });

  test('sets the market through setlang/cc and the _EDGE cookies', () => {
    const request = build({});
    const q = query(request);
    assert.equal(new URL(request.url).pathname, '/search');
    assert.equal(q.get('setlang'), 'de');
    assert.equal(q.get('cc'), 'AT');
    assert.deepEqual(cookies(request), { _EDGE_CD: 'm=de-AT&u=de', _EDGE_S: 'mkt=de-AT&ui=de' });
  });

  test('pages with first = (page - 1) * 10 + 1 and the FORM codes of its own links', () => {
    assert.equal(query(build({}, 1)).has('first'), false);
    assert.equal(query(build({}, 2)).get('first'), '11');
    assert.equal(query(build({}, 2)).get('FORM'), 'PERE');
    assert.equal(query(build({}, 4)).get('first'), '31');
    assert.equal(query(build({}, 4)).get('FORM'), 'PERE2');
  });

  test('time ranges become filters=ex1:"ez…"; hour falls back to a day; a year is a day range', () => {
    assert.equal(query(build({ timeRange: 'hour' })).get('filters'), 'ex1:"ez1"');
    assert.equal(query(build({ timeRange: 'day' })).get('filters'), 'ex1:"ez1"');
    assert.equal(query(build({ timeRange: 'week' })).get('filters'), 'ex1:"ez2"');
    assert.equal(query(build({ timeRange: 'month' })).get('filters'), 'ex1:"ez3"');
    const today = Math.floor(NOW.getTime() / 86_400_000);
    assert.equal(query(build({ timeRange: 'year' })).get('filters'), `ex1:"ez5_${today - 365}_${today}"`);
    assert.equal(query(build({})).has('filters'), false);
  });
});

describe('duckduckgo request', () => {
  const build = (overrides: Partial<SearchParams>, page = 1) => ENGINES.duckduckgo.buildRequest({ ...params, ...overrides, page }, { baseUrl: BASE, now: NOW });

  test('POSTs the form to /html/ with kl as field and cookie', () => {
    const request = build({});
    assert.equal(request.url, `${BASE}/html/`);
    const fields = form(request);
    assert.equal(fields.get('kl'), 'at-de');
    assert.equal(fields.get('df'), '');
    assert.equal(fields.has('s'), false);
    assert.equal(cookies(request).kl, 'at-de');
  });

  test('later pages send the fields of the "Next" form: s, dc, v, o, api, nextParams', () => {
    const fields = form(build({}, 3));
    assert.equal(fields.get('s'), '20');
    assert.equal(fields.get('dc'), '21');
    assert.equal(fields.get('v'), 'l');
    assert.equal(fields.get('o'), 'json');
    assert.equal(fields.get('api'), 'd.js');
    assert.equal(fields.get('nextParams'), '');
  });

  test('time ranges become df=d|w|m|y (hour uses d) in the form and the cookie', () => {
    const expected: Record<TimeRange, string> = { hour: 'd', day: 'd', week: 'w', month: 'm', year: 'y' };
    for (const [range, df] of Object.entries(expected)) {
      const request = build({ timeRange: range as TimeRange });
      assert.equal(form(request).get('df'), df);
      assert.equal(cookies(request).df, df);
    }
  });

  test('maps country and language onto its region codes', () => {
    assert.equal(duckduckgoRegion('us', 'en'), 'us-en');
    assert.equal(duckduckgoRegion('us', 'es'), 'us-es');
    assert.equal(duckduckgoRegion('gb', 'en'), 'uk-en');
    assert.equal(duckduckgoRegion('ch', 'fr'), 'ch-fr');
    assert.equal(duckduckgoRegion('ch', 'it'), 'ch-de');
    assert.equal(duckduckgoRegion('jp', 'ja'), 'jp-jp');
    assert.equal(duckduckgoRegion('tw', 'zh'), 'tw-tzh');
    assert.equal(duckduckgoRegion('si', 'en'), 'sl-sl');
    assert.equal(duckduckgoRegion('sa', 'ar'), 'xa-ar');
    assert.equal(duckduckgoRegion('zz', 'en'), 'wt-wt');
  });
});

describe('brave request', () => {
  const build = (overrides: Partial<SearchParams>, page = 1) => ENGINES.brave.buildRequest({ ...params, ...overrides, page }, { baseUrl: BASE, now: NOW });

  test('searches the web source with the country cookie and location off', () => {
    const request = build({});
    const q = query(request);
    assert.equal(new URL(request.url).pathname, '/search');
    assert.equal(q.get('source'), 'web');
    assert.equal(q.get('spellcheck'), '0');
    assert.equal(q.has('offset'), false);
    assert.deepEqual(cookies(request), { country: 'at', useLocation: '0', summarizer: '0' });
  });

  test('pages by zero-based offset', () => {
    assert.equal(query(build({}, 2)).get('offset'), '1');
    assert.equal(query(build({}, 5)).get('offset'), '4');
  });

  test('time ranges become tf=pd|pw|pm|py (hour uses pd)', () => {
    const expected: Record<TimeRange, string> = { hour: 'pd', day: 'pd', week: 'pw', month: 'pm', year: 'py' };
    for (const [range, tf] of Object.entries(expected)) assert.equal(query(build({ timeRange: range as TimeRange })).get('tf'), tf);
  });
});

describe('mojeek request', () => {
  const build = (overrides: Partial<SearchParams>, page = 1) => ENGINES.mojeek.buildRequest({ ...params, ...overrides, page }, { baseUrl: BASE, now: NOW });

  test('sends lb and arc as parameters and cookies; Great Britain is "uk"', () => {
    const request = build({});
    assert.equal(query(request).get('lb'), 'de');
    assert.equal(query(request).get('arc'), 'at');
    assert.deepEqual(cookies(request), { lb: 'de', arc: 'at' });
    assert.equal(query(build({ country: 'gb', language: 'en' })).get('arc'), 'uk');
  });

  test('pages with s = (page - 1) * 10 + 1, omitted on the first page', () => {
    assert.equal(query(build({}, 1)).has('s'), false);
    assert.equal(query(build({}, 2)).get('s'), '11');
    assert.equal(query(build({}, 3)).get('s'), '21');
  });

  test('time ranges become since=YYYYMMDD, clamping month ends', () => {
    assert.equal(query(build({ timeRange: 'hour' })).get('since'), '20240330');
    assert.equal(query(build({ timeRange: 'week' })).get('since'), '20240324');
    assert.equal(query(build({ timeRange: 'month' })).get('since'), '20240229');
    assert.equal(query(build({ timeRange: 'year' })).get('since'), '20230331');
    assert.equal(sinceDate('year', new Date('2024-02-29T00:00:00Z')), '20230228');
    assert.equal(query(build({})).has('since'), false);
  });
});

describe('startpage request', () => {
  const build = (overrides: Partial<SearchParams>, page = 1) => ENGINES.startpage.buildRequest({ ...params, ...overrides, page }, { baseUrl: BASE, now: NOW });

  test('POSTs its form fields to /sp/search with the preferences cookie', () => {
    const request = build({});
    assert.equal(request.url, `${BASE}/sp/search`);
    assert.equal(request.headers.Origin, BASE);
    const fields = form(request);
    assert.equal(fields.get('cat'), 'web');
    assert.equal(fields.get('language'), 'deutsch');
    assert.equal(fields.get('lui'), 'deutsch');
    assert.equal(fields.get('qsr'), 'de_AT');
    assert.equal(fields.get('with_date'), '');
    assert.equal(fields.has('page'), false);
    const preferences = cookies(request).preferences.split('N1N');
    assert.ok(preferences.includes('languageEEEdeutsch'));
    assert.ok(preferences.includes('search_results_regionEEEde_AT'));
  });

  test('later pages send page and segment', () => {
    const fields = form(build({}, 3));
    assert.equal(fields.get('page'), '3');
    assert.equal(fields.get('segment'), 'startpage.udog');
  });

  test('time ranges become with_date=d|w|m|y (hour uses d)', () => {
    const expected: Record<TimeRange, string> = { hour: 'd', day: 'd', week: 'w', month: 'm', year: 'y' };
    for (const [range, value] of Object.entries(expected)) assert.equal(form(build({ timeRange: range as TimeRange })).get('with_date'), value);
  });

  test('regions: known pairs, special codes, "all" otherwise', () => {
    assert.equal(startpageRegion('en', 'us'), 'en_US');
    assert.equal(startpageRegion('en', 'gb'), 'en-GB_GB');
    assert.equal(startpageRegion('pt', 'br'), 'pt-BR_BR');
    assert.equal(startpageRegion('ur', 'pk'), 'all');
    assert.equal(startpageRegion('en', 'zz'), 'all');
  });
});
