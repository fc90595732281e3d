import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ENGINES } from '../../src/adapters/search/engines/index.ts';
import type { EngineName, SerpOutcome, SearchResult, UpstreamResponse } from '../../src/adapters/search/types.ts';
import {
  SERP_FIXTURES,
  UNKNOWN_LAYOUT_PAGE,
  bingClickUrl,
  duckduckgoLite,
  fixtureResults,
  googleBasicHtml,
  type FixturePage,
  type FixtureResult,
} from '../support/search-fixtures.ts';

const ORIGINS: Record<EngineName, string> = {
  google: 'https://www.google.com',
  bing: 'https://www.bing.com',
  duckduckgo: 'https://html.duckduckgo.com',
  brave: 'https://search.brave.com',
  mojeek: 'https://www.mojeek.com',
  startpage: 'https://www.startpage.com',
};

function respond(page: FixturePage, origin: string): UpstreamResponse {
  return { status: page.status, url: origin + page.path, headers: { 'content-type': 'text/html; charset=utf-8' }, body: page.body };
}

function expected(items: FixtureResult[]): SearchResult[] {
  return items.map((item) => ({ title: item.title, description: item.description, meta_data: item.meta, url: item.url }));
}

function results(outcome: SerpOutcome): SearchResult[] {
  assert.equal(outcome.kind, 'ok', `expected results, got ${JSON.stringify(outcome)}`);
  return outcome.kind === 'ok' ? outcome.value : [];
}

for (const name of Object.keys(ENGINES) as EngineName[]) {
  const engine = ENGINES[name];
  const fixtures = SERP_FIXTURES[name];
  // Served from a loopback fake as well as from the engine's own host.
  for (const origin of [ORIGINS[name], 'http://127.0.0.1:18080']) {
    describe(`${name} parser (${origin})`, () => {
      test('extracts exactly the organic results, in order, unwrapped and normalised', () => {
        const items = fixtureResults(name, 4);
        assert.deepEqual(results(engine.parse(respond(fixtures.results(items), origin))), expected(items));
      });

      test('keeps meta_data empty when the page shows no breadcrumb', () => {
        const items = fixtureResults(name, 2).map((item) => ({ ...item, meta: '' }));
        assert.deepEqual(
          results(engine.parse(respond(fixtures.results(items), origin))).map((result) => result.meta_data),
          ['', ''],
        );
      });

      test('reads the explicit "no results" page as no_results', () => {
        assert.deepEqual(engine.parse(respond(fixtures.noResults('zzqx nothing'), origin)), { kind: 'empty' });
      });

      for (const [label, page] of Object.entries(fixtures.blocked)) {
        test(`reads the ${label} page as blocked`, () => {
          const outcome = engine.parse(respond(page, origin));
          assert.equal(outcome.kind, 'blocked', JSON.stringify(outcome));
        });
      }

      test('reads a page with neither results nor the marker as blocked, never no_results', () => {
        const outcome = engine.parse(respond(UNKNOWN_LAYOUT_PAGE, origin));
        assert.equal(outcome.kind, 'blocked');
      });

      test('HTTP 403, 429 and 5xx are blocked even with a results body', () => {
        const page = fixtures.results(fixtureResults(name, 3));
        for (const status of [403, 429, 500, 503]) {
          const outcome = engine.parse(respond({ ...page, status }, origin));
          assert.equal(outcome.kind, 'blocked', `status ${status}`);
          assert.match(outcome.kind === 'blocked' ? outcome.reason : '', new RegExp(String(status)));
        }
      });

      test('an empty body is blocked', () => {
        assert.equal(engine.parse(respond({ status: 200, path: fixtures.searchPath, body: '  ' }, origin)).kind, 'blocked');
      });
    });
  }
}

describe('engine-specific parsing', () => {
  test('google: the JavaScript-free layout, with /url?q= links and sitelinks kept out of the description', () => {
    const items = fixtureResults('basic', 3);
    assert.deepEqual(results(ENGINES.google.parse(respond(googleBasicHtml(items), ORIGINS.google))), expected(items));
  });

  test("google: results on Google's own properties stay; only its navigation goes", () => {
    const own = [
      { title: 'About Google', url: 'https://about.google/intl/en/', description: 'Our mission', meta: 'about.google' },
      { title: 'Google Store', url: 'https://store.google.com/us/', description: 'Pixel phones', meta: 'store.google.com' },
      { title: 'Google Drive', url: 'https://www.google.com/drive/', description: 'Cloud storage', meta: 'www.google.com › drive' },
      { title: 'How Search works', url: 'https://www.google.com/search/howsearchworks/', description: 'Ranking', meta: 'www.google.com › search' },
      { title: 'Sign in', url: 'https://accounts.google.com/ServiceLogin?hl=en', description: 'Navigation', meta: '' },
      { title: 'Settings', url: 'https://www.google.com/preferences?hl=en', description: 'Navigation', meta: '' },
    ];
    const urls = results(ENGINES.google.parse(respond(SERP_FIXTURES.google.results(own), ORIGINS.google))).map((result) => result.url);
    assert.deepEqual(urls, own.slice(0, 4).map((item) => item.url));
  });

  test('google: the block reasons name the signal', () => {
    const { blocked } = SERP_FIXTURES.google;
    const reason = (page: FixturePage, origin = ORIGINS.google) => {
      const outcome = ENGINES.google.parse(respond(page, origin));
      return outcome.kind === 'blocked' ? outcome.reason : outcome.kind;
    };
    assert.match(reason(blocked.sorry), /captcha|reCAPTCHA/i);
    assert.match(reason(blocked.consent), /consent/i);
    assert.match(reason(blocked.javascriptRequired), /JavaScript/);
    assert.match(reason({ status: 200, path: '/', body: '<html><body><p>Anything</p></body></html>' }, 'https://consent.google.com'), /consent/i);
  });

  test('bing: decodes the base64url target of /ck/a links', () => {
    const target = 'https://example.org/path?q=ünïcode&x=1#frag';
    const page = SERP_FIXTURES.bing.results([{ title: 'T', url: target, description: 'D', meta: 'example.org' }]);
    assert.equal(results(ENGINES.bing.parse(respond(page, ORIGINS.bing)))[0].url, new URL(target).toString());
    assert.match(bingClickUrl(target), /\/ck\/a\?/);
  });

  test('bing: the "Web" label Bing puts before snippets is not part of the description', () => {
    const [result] = results(ENGINES.bing.parse(respond(SERP_FIXTURES.bing.results(fixtureResults('b', 1)), ORIGINS.bing)));
    assert.doesNotMatch(result.description, /^Web/);
  });

  test('duckduckgo: reads the lite layout and skips its sponsored rows', () => {
    const items = fixtureResults('lite', 3);
    assert.deepEqual(results(ENGINES.duckduckgo.parse(respond(duckduckgoLite(items), 'https://lite.duckduckgo.com'))), expected(items));
  });

  test('duckduckgo: the anomaly page (HTTP 202) is a challenge', () => {
    const outcome = ENGINES.duckduckgo.parse(respond(SERP_FIXTURES.duckduckgo.blocked.anomaly, ORIGINS.duckduckgo));
    assert.deepEqual(outcome, { kind: 'blocked', reason: 'DuckDuckGo anomaly challenge' });
  });

  test('duckduckgo: the JavaScript page is named as such', () => {
    const outcome = ENGINES.duckduckgo.parse(respond(SERP_FIXTURES.duckduckgo.blocked.javascriptShell, ORIGINS.duckduckgo));
    assert.equal(outcome.kind === 'blocked' && /JavaScript/.test(outcome.reason), true);
  });

  test('startpage: a redirect to /sp/captcha is blocked whatever the body', () => {
    const page = { ...SERP_FIXTURES.startpage.noResults('x'), path: '/sp/captcha?ref=1' };
    assert.equal(ENGINES.startpage.parse(respond(page, ORIGINS.startpage)).kind, 'blocked');
  });

  test('a result slot whose title link is missing is skipped, not returned half-empty', () => {
    const body = `<html><body><div id="results"><div class="snippet" data-type="web"><div class="title">No link</div></div></div></body></html>`;
    const outcome = ENGINES.brave.parse({ status: 200, url: `${ORIGINS.brave}/search`, headers: {}, body });
    assert.equal(outcome.kind, 'blocked');
  });
});
