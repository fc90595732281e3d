/**
 * POST /v1/engine-search through the real server, with fake engines on loopback serving
 * hand-written result pages: validation, billing, fallback, fan-out, dedup, no results, blocks.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../support/service.ts';
import { startFakeUpstream, type FakeUpstream, type UpstreamHit } from '../support/fake-upstream.ts';
import { bingFixtures, duckduckgoFixtures, fixtureResults, mojeekFixtures, type FixturePage, type FixtureResult } from '../support/search-fixtures.ts';

let service: TestService;
let upstream: FakeUpstream;
const ENGINES = ['bing', 'duckduckgo', 'mojeek'] as const;

/** Per-engine behaviour for the next requests; the fake routes /<engine>/... to it. */
let behave: Record<string, (hit: UpstreamHit) => FixturePage>;

before(async () => {
  upstream = await startFakeUpstream();
  upstream.handle((hit) => {
    const engine = hit.path.split('/')[1];
    const page = behave[engine]?.(hit) ?? { status: 404, path: '/', body: 'no such engine' };
    return { status: page.status, body: page.body };
  });
  service = await startTestService({
    SEARCH_ENGINES: ENGINES.join(','),
    UPSTREAM_BING_URL: `${upstream.url}/bing`,
    UPSTREAM_DUCKDUCKGO_URL: `${upstream.url}/duckduckgo`,
    UPSTREAM_MOJEEK_URL: `${upstream.url}/mojeek`,
    SEARCH_TIMEOUT_MS: '3000',
  });
});
after(async () => {
  await service.close();
  await upstream.close();
});
beforeEach(async () => {
  await closeCircuits();
  upstream.hits.length = 0;
  behave = {
    bing: (hit) => bingFixtures.results(bingPage(hit)),
    duckduckgo: () => duckduckgoFixtures.results(fixtureResults('ddg', 10)),
    mojeek: () => mojeekFixtures.results(fixtureResults('mojeek', 10)),
  };
});

/**
 * Every test starts with the engines' circuits closed: an engine that answered a block page in
 * one test is suspended for the runtime's back-off (30 s), which would skip it in the next tests.
 * `reset` closes a circuit; the store may be Redis (TEST_REDIS_URL).
 */
async function closeCircuits(): Promise<void> {
  const { breaker } = service.services.capabilities.runtime;
  for (const engine of ENGINES) await breaker.reset(engine);
  const deadline = Date.now() + 2000;
  while ((await breaker.states()).size > 0) {
    if (Date.now() > deadline) throw new Error('the engines\' circuits did not close');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Bing pages by `first`: page n carries results 10(n-1)+1 .. 10n. */
function bingPage(hit: UpstreamHit): FixtureResult[] {
  const first = Number(hit.query.get('first') ?? '1');
  return fixtureResults('bing', 10, first);
}

const search = (token: string, body: unknown) => service.call('POST', '/v1/engine-search', { token, body });
const balance = (id: number) => service.services.ledger.balance(id, 'scraping');

describe('validation', () => {
  test('every failing field is reported with Laravel messages, nothing held', async () => {
    const user = await service.user({ scraping: 100 });
    const r = await search(user.token, { query: '', country: 'US', language: 'xx', page: 0, per_page: 101, time_range: 'Day' });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body, {
      message: 'The given data was invalid.',
      errors: {
        query: ['The query field is required.'],
        country: ['The selected country is invalid.'],
        language: ['The selected language is invalid.'],
        page: ['The page must be at least 1.'],
        per_page: ['The per page must be between 10 and 100.'],
        time_range: ['The selected time range is invalid.'],
      },
      // Beside Laravel's errors (issue 40): what each refused choice allows.
      expected: {
        country: 'one of 249 values: ad, ae, af, ag, ai, al, am, ao, aq, ar, as, at, au, aw, ax, az, ba, bb, bd, be, … (all of them in /openapi.json)',
        language: 'one of: en, es, fr, de, it, pt, ja, ko, zh, ar, hi, ru, tr, ur',
        time_range: 'one of: hour, day, week, month, year',
      },
    });
    const types = await search(user.token, { query: 42, page: 'two', per_page: 12.5 });
    assert.deepEqual(types.body.errors, {
      query: ['The query must be a string.'],
      page: ['The page must be an integer.'],
      per_page: ['The per page must be an integer.'],
    });
    assert.equal(upstream.hits.length, 0);
    assert.equal(await balance(user.id), 100);
  });

  test('only POST is accepted', async () => {
    const r = await service.call('GET', '/v1/engine-search');
    assert.equal(r.status, 405);
    assert.deepEqual(r.body, { message: 'The GET method is not supported for this route. Supported methods: POST.' });
    assert.equal(r.headers.get('allow'), 'POST');
  });
});

describe('results and billing', () => {
  test('10 organic results from the first engine, unwrapped, for 3 credits', async () => {
    const user = await service.user({ scraping: 10 });
    const r = await search(user.token, { query: 'javascript tutorial', country: 'gb', language: 'en', time_range: 'week' });
    assert.equal(r.status, 200);
    assert.equal(r.body.response.length, 10);
    assert.deepEqual(r.body.response[0], {
      title: 'bing result 1',
      description: 'Description of bing result 1, with <markup> & entities.',
      meta_data: 'bing.example › docs › 1',
      url: 'https://bing.example/docs/1?ref=a&b=c',
    });
    assert.equal(await balance(user.id), 7);
    assert.equal(upstream.hits.length, 1);
    assert.equal(upstream.hits[0].query.get('q'), 'javascript tutorial');
    assert.equal(upstream.hits[0].query.get('cc'), 'GB');
  });

  test('per_page 30 fans out to 3 upstream pages at once, merged in order, for 10 credits', async () => {
    const user = await service.user({ scraping: 50 });
    const r = await search(user.token, { query: 'q', per_page: 30, page: 2 });
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.response.map((x: any) => x.title),
      Array.from({ length: 30 }, (_, i) => `bing result ${31 + i}`),
    );
    assert.equal(upstream.hits.length, 3);
    assert.equal(await balance(user.id), 40);
  });

  test('per_page 15 trims the merged pages to 15, for 5 credits', async () => {
    const user = await service.user({ scraping: 50 });
    const r = await search(user.token, { query: 'q', per_page: 15 });
    assert.equal(r.body.response.length, 15);
    assert.equal(await balance(user.id), 45);
  });

  test('when the first two results share a URL the first is dropped', async () => {
    const user = await service.user({ scraping: 10 });
    behave.bing = () => {
      const items = fixtureResults('bing', 10);
      items[1] = { ...items[1], url: items[0].url, title: 'same target' };
      return bingFixtures.results(items);
    };
    const r = await search(user.token, { query: 'q' });
    assert.equal(r.status, 200);
    assert.equal(r.body.response.length, 9);
    assert.equal(r.body.response[0].title, 'same target');
  });

  test('a balance below the cost: 403 before any upstream request', async () => {
    const user = await service.user({ scraping: 20 });
    const r = await search(user.token, { query: 'q', per_page: 100 });
    assert.equal(r.status, 403);
    assert.equal(upstream.hits.length, 0);
    assert.equal(await balance(user.id), 20);
  });
});

describe('engine chain', () => {
  test('a captcha on the first engine moves on to the next one', async () => {
    const user = await service.user({ scraping: 10 });
    behave.bing = () => bingFixtures.blocked.challenge;
    const r = await search(user.token, { query: 'q' });
    assert.equal(r.status, 200);
    assert.equal(r.body.response[0].title, 'ddg result 1');
    assert.equal(await balance(user.id), 7);
    // Bing is suspended now: the next search does not ask it at all.
    upstream.hits.length = 0;
    const again = await search(user.token, { query: 'another q' });
    assert.equal(again.status, 200);
    assert.equal(again.body.response[0].title, 'ddg result 1');
    assert.deepEqual(upstream.hits.map((hit) => hit.path.split('/')[1]), ['duckduckgo']);
  });

  test('HTTP 429 and 403 from engines are blocks, not empty results', async () => {
    const user = await service.user({ scraping: 10 });
    behave.bing = () => ({ status: 429, path: '/', body: 'slow down' });
    behave.duckduckgo = () => ({ status: 403, path: '/', body: 'forbidden' });
    const r = await search(user.token, { query: 'q' });
    assert.equal(r.status, 200);
    assert.equal(r.body.response[0].title, 'mojeek result 1');
  });

  test('every engine blocked: 502 and nothing charged', async () => {
    const user = await service.user({ scraping: 10 });
    behave.bing = () => bingFixtures.blocked.challenge;
    behave.duckduckgo = () => duckduckgoFixtures.blocked[Object.keys(duckduckgoFixtures.blocked)[0]];
    behave.mojeek = () => ({ status: 503, path: '/', body: 'unavailable' });
    const r = await search(user.token, { query: 'q' });
    assert.equal(r.status, 502);
    assert.deepEqual(r.body, { message: 'The search engine did not answer, please retry.' });
    assert.equal(await balance(user.id), 10);
    const history = await service.call('GET', '/requests', { token: user.token });
    assert.deepEqual([history.body.data[0].status, history.body.data[0].credits], [502, 0]);
  });

  test('no results: 404 "No results found!" and nothing charged', async () => {
    const user = await service.user({ scraping: 10 });
    behave.bing = (hit) => bingFixtures.noResults(hit.query.get('q') ?? '');
    const r = await search(user.token, { query: 'zzqqxx nothing' });
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, { message: 'No results found!' });
    assert.equal(await balance(user.id), 10);
  });

  test('an engine that does not answer in time moves on to the next', async () => {
    const user = await service.user({ scraping: 10 });
    upstream.handle(async (hit) => {
      const engine = hit.path.split('/')[1];
      if (engine === 'bing') return { delayMs: 5000, body: 'late' };
      const page = behave[engine](hit);
      return { status: page.status, body: page.body };
    });
    try {
      const r = await search(user.token, { query: 'q' });
      assert.equal(r.status, 200);
      assert.equal(r.body.response[0].title, 'ddg result 1');
    } finally {
      upstream.handle((hit) => {
        const page = behave[hit.path.split('/')[1]](hit);
        return { status: page.status, body: page.body };
      });
    }
  });
});
