import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { OutboundError } from '../../src/outbound/types.ts';
import type { OutboundClient, OutboundRequest, OutboundResponse } from '../../src/outbound/types.ts';
import {
  MAX_UPSTREAM_BYTES,
  MemorySearchCache,
  SearchConfigError,
  createSearchChain,
  defaultSearchEngines,
  readSearchSettings,
} from '../../src/adapters/search/index.ts';
import { upstreamPageSize, upstreamWindow } from '../../src/adapters/search/chain.ts';
import type { SearchCache, SearchChainOptions, SearchRequest } from '../../src/adapters/search/index.ts';
import type { EngineName } from '../../src/adapters/search/types.ts';
import type { BrowserRequest, FetchPageResult } from '../../src/browser/types.ts';
import { createUpstreamRuntime, type UpstreamRuntime, type UpstreamRuntimeOptions } from '../../src/adapters/kit/runtime.ts';
import { RedisBreakerStore } from '../../src/adapters/kit/breaker.ts';
import type { RuntimeEvent, UpstreamLogger } from '../../src/adapters/kit/types.ts';
import { SERP_FIXTURES, fixtureResults, type FixturePage } from '../support/search-fixtures.ts';

const ENGINE_NAMES: EngineName[] = ['google', 'bing', 'duckduckgo', 'brave', 'mojeek', 'startpage'];
const BASE_URLS = Object.fromEntries(ENGINE_NAMES.map((name) => [name, `http://${name}.test`])) as Record<EngineName, string>;

/** The upstream page (1-based, 10 results) a request asks for, read back from each engine's own parameters. */
function upstreamPageOf(engine: EngineName, url: URL, body: string | undefined): number {
  const form = new URLSearchParams(body ?? '');
  const number = (value: string | null, fallback: number) => (value === null ? fallback : Number(value));
  switch (engine) {
    case 'google':
      return number(url.searchParams.get('start'), 0) / 10 + 1;
    case 'bing':
      return (number(url.searchParams.get('first'), 1) - 1) / 10 + 1;
    case 'duckduckgo':
      return number(form.get('s'), 0) / 10 + 1;
    case 'brave':
      return number(url.searchParams.get('offset'), 0) + 1;
    case 'mojeek':
      return (number(url.searchParams.get('s'), 1) - 1) / 10 + 1;
    case 'startpage':
      return number(form.get('page'), 1);
  }
}

type Reply = FixturePage | Error | Promise<FixturePage | Error>;
type Route = (engine: EngineName, page: number) => Reply;

interface Call {
  engine: EngineName;
  page: number;
  url: string;
  request: OutboundRequest;
}

/** An OutboundClient that answers from the hand-written fixtures, routed by engine host and page. */
function fakeClient(route: Route, charset = 'utf-8') {
  const calls: Call[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const client: OutboundClient = {
    async fetch(url: string, request: OutboundRequest): Promise<OutboundResponse> {
      const parsed = new URL(url);
      const engine = parsed.hostname.replace(/\.test$/, '') as EngineName;
      const body = typeof request.body === 'string' ? request.body : undefined;
      const page = upstreamPageOf(engine, parsed, body);
      calls.push({ engine, page, url, request });
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        const reply = await route(engine, page);
        if (reply instanceof Error) throw reply;
        return {
          url: parsed.origin + reply.path,
          status: reply.status,
          headers: { 'content-type': `text/html; charset=${charset}` },
          body: Buffer.from(reply.body, charset === 'utf-8' ? 'utf8' : 'latin1'),
          hops: [url],
        };
      } finally {
        inFlight -= 1;
      }
    },
    async isPublicUrl() {
      return true;
    },
  };
  return { client, calls, maxInFlight: () => maxInFlight };
}

/** Results numbered by upstream page: page n holds results (n-1)*10+1 .. n*10. */
const resultsPage = (engine: EngineName, page: number) => SERP_FIXTURES[engine].results(fixtureResults(engine, 10, (page - 1) * 10 + 1));

type Warning = { details: Record<string, unknown>; message: string };

/** A fresh runtime (so a fresh circuit breaker) on `outbound`, watched: every event it emits is kept. */
function runtimeOn(outbound: OutboundClient, options: Partial<UpstreamRuntimeOptions> = {}) {
  const runtime = createUpstreamRuntime({ outbound, ...options });
  const events: RuntimeEvent[] = [];
  runtime.observe((event) => events.push(event));
  return { runtime, events };
}

/**
 * A chain on the fake client through its own runtime. The runtime and the chain log to the same
 * list: the runtime's line per failed call (with `verdict`), the breaker's, and the chain's own.
 */
function chain(route: Route, options: Partial<SearchChainOptions> = {}, runtimeOptions: Partial<UpstreamRuntimeOptions> = {}) {
  const fake = fakeClient(route);
  const warnings: Warning[] = [];
  const logger: UpstreamLogger = { warn: (details, message) => warnings.push({ details, message }) };
  const { runtime, events } = runtimeOn(fake.client, { logger, ...runtimeOptions });
  const searchChain = createSearchChain({
    engines: ['bing', 'duckduckgo', 'brave', 'mojeek', 'startpage'],
    runtime,
    baseUrls: BASE_URLS,
    timeoutMs: 5000,
    logger,
    ...options,
  });
  return { searchChain, warnings, runtime, events, ...fake };
}

/** The runtime's lines for failed calls (the breaker's and the chain's own lines have no verdict). */
const callFailures = (warnings: Warning[]) => warnings.filter((warning) => warning.details.verdict !== undefined);

const request: SearchRequest = { query: 'test query', country: 'us', language: 'en', page: 1, perPage: 10 };

describe('search chain: one engine answers', () => {
  test('returns the first engine\'s results and passes the outbound contract', async () => {
    const { searchChain, calls } = chain((engine, page) => resultsPage(engine, page));
    const outcome = await searchChain.find(request);
    assert.equal(outcome.kind, 'results');
    assert.equal(outcome.kind === 'results' && outcome.engine, 'bing');
    assert.deepEqual(
      outcome.kind === 'results' && outcome.results.map((result) => result.title),
      fixtureResults('bing', 10).map((item) => item.title),
    );
    assert.equal(calls.length, 1);
    const [call] = calls;
    assert.equal(call.engine, 'bing');
    assert.equal(call.request.maxBytes, MAX_UPSTREAM_BYTES);
    assert.equal(MAX_UPSTREAM_BYTES, 10 * 1024 * 1024);
    // The outbound client gets what remains of the page's deadline (set when the call started).
    assert.ok(call.request.timeoutMs !== undefined && call.request.timeoutMs <= 5000 && call.request.timeoutMs > 4000, `timeoutMs ${call.request.timeoutMs}`);
    assert.equal(call.request.method, 'GET');
    assert.equal(call.request.proxyCountry, 'us');
    assert.match(String(call.request.headers?.Cookie), /_EDGE_CD=/);
  });

  test('per_page > 10 fans out to the upstream pages holding the window, concurrently', async () => {
    const expected = 3;
    let arrived = 0;
    let release!: () => void;
    const allArrived = new Promise<void>((resolve) => (release = resolve));
    // Each reply waits until every page of the fan-out has been requested: sequential fetching
    // would never get there, and the safety timer turns that into a failed assertion.
    const safety = setTimeout(release, 2000);
    const { searchChain, calls, maxInFlight } = chain(async (engine, page) => {
      arrived += 1;
      if (arrived === expected) release();
      await allArrived;
      return resultsPage(engine, page);
    });
    const outcome = await searchChain.find({ ...request, page: 2, perPage: 25 });
    clearTimeout(safety);
    assert.equal(maxInFlight(), expected);
    // Results 26–50: upstream pages 3 (21–30, the first 5 skipped), 4 and 5.
    assert.deepEqual(calls.map((call) => call.page).sort(), [3, 4, 5]);
    assert.equal(outcome.kind, 'results');
    const titles = outcome.kind === 'results' ? outcome.results.map((result) => result.title) : [];
    assert.equal(titles.length, 25);
    assert.equal(titles[0], 'bing result 26');
    assert.equal(titles[24], 'bing result 50');
  });

  test('paging with a per_page that is not a multiple of 10 neither skips nor repeats results', async () => {
    const { searchChain, calls } = chain((engine, page) => resultsPage(engine, page));
    const seen: string[] = [];
    for (const page of [1, 2, 3]) {
      const outcome = await searchChain.find({ ...request, page, perPage: 15 });
      assert.equal(outcome.kind, 'results');
      if (outcome.kind === 'results') seen.push(...outcome.results.map((result) => result.title));
    }
    assert.deepEqual(seen, Array.from({ length: 45 }, (_, i) => `bing result ${i + 1}`));
    // page 1: upstream 1–2; page 2 (16–30): 2–3; page 3 (31–45): 4–5.
    assert.deepEqual(calls.map((call) => call.page), [1, 2, 2, 3, 4, 5]);
  });

  test('upstreamWindow: the pages that hold the window and the results before it', () => {
    assert.deepEqual(upstreamWindow(1, 10), { pages: [1], skip: 0 });
    assert.deepEqual(upstreamWindow(3, 10), { pages: [3], skip: 0 });
    assert.deepEqual(upstreamWindow(2, 20), { pages: [3, 4], skip: 0 });
    assert.deepEqual(upstreamWindow(1, 15), { pages: [1, 2], skip: 0 });
    assert.deepEqual(upstreamWindow(2, 15), { pages: [2, 3], skip: 5 });
    assert.deepEqual(upstreamWindow(2, 25), { pages: [3, 4, 5], skip: 5 });
    assert.deepEqual(upstreamWindow(2, 11), { pages: [2, 3], skip: 1 });
    assert.deepEqual(upstreamWindow(1, 100), { pages: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], skip: 0 });
    assert.deepEqual(upstreamWindow(2, 95), { pages: [10, 11, 12, 13, 14, 15, 16, 17, 18, 19], skip: 5 });
  });

  test('merges in page order even when later pages answer first', async () => {
    const { searchChain } = chain(async (engine, page) => {
      // Page 1 answers last.
      if (page === 1) await new Promise((resolve) => setTimeout(resolve, 30));
      return resultsPage(engine, page);
    });
    const outcome = await searchChain.find({ ...request, perPage: 30 });
    const titles = outcome.kind === 'results' ? outcome.results.map((result) => result.title) : [];
    assert.deepEqual(
      titles,
      fixtureResults('bing', 30).map((item) => item.title),
    );
  });

  test('trims to per_page', async () => {
    const { searchChain, calls } = chain((engine, page) => resultsPage(engine, page));
    const outcome = await searchChain.find({ ...request, perPage: 4 });
    assert.equal(calls.length, 1);
    assert.equal(outcome.kind === 'results' && outcome.results.length, 4);
  });

  test('when the first two results share a URL the first is dropped, then the list is trimmed', async () => {
    const items = fixtureResults('bing', 10);
    items[1] = { ...items[1], url: items[0].url, title: 'Second copy' };
    const { searchChain } = chain(() => SERP_FIXTURES.bing.results(items));
    const outcome = await searchChain.find({ ...request, perPage: 5 });
    const titles = outcome.kind === 'results' ? outcome.results.map((result) => result.title) : [];
    assert.deepEqual(titles, ['Second copy', 'bing result 3', 'bing result 4', 'bing result 5', 'bing result 6']);
  });

  test('the duplicate rule only looks at the first two results', async () => {
    const items = fixtureResults('bing', 10);
    items[2] = { ...items[2], url: items[1].url };
    const { searchChain } = chain(() => SERP_FIXTURES.bing.results(items));
    const outcome = await searchChain.find(request);
    assert.equal(outcome.kind === 'results' && outcome.results.length, 10);
  });

  test('a failed additional page of a fan-out is dropped and the others kept', async () => {
    const { searchChain, warnings } = chain((engine, page) =>
      page === 2 ? SERP_FIXTURES.bing.blocked.challenge : resultsPage(engine, page),
    );
    const outcome = await searchChain.find({ ...request, perPage: 30 });
    assert.equal(outcome.kind === 'results' && outcome.engine, 'bing');
    const titles = outcome.kind === 'results' ? outcome.results.map((result) => result.title) : [];
    assert.deepEqual(titles, [...fixtureResults('bing', 10), ...fixtureResults('bing', 10, 21)].map((item) => item.title));
    // The failed page is logged once, by the runtime (its line names the call, not the page).
    const failures = callFailures(warnings);
    assert.equal(failures.length, 1);
    assert.equal(failures[0].details.upstream, 'bing');
    assert.equal(failures[0].details.operation, 'search');
    assert.equal(failures[0].details.verdict, 'blocked');
    assert.equal(failures[0].details.status, 200);
  });

  test('a later page with no results ends the list quietly', async () => {
    const { searchChain, warnings } = chain((engine, page) =>
      page === 3 ? SERP_FIXTURES.bing.noResults('test query') : resultsPage(engine, page),
    );
    const outcome = await searchChain.find({ ...request, perPage: 30 });
    assert.equal(outcome.kind === 'results' && outcome.results.length, 20);
    assert.equal(warnings.length, 0);
  });

  test('decodes the charset the engine declares', async () => {
    const fake = fakeClient(() => SERP_FIXTURES.bing.results([{ title: 'Café crème', url: 'https://x.example/', description: 'Ça va', meta: '' }]), 'iso-8859-1');
    const searchChain = createSearchChain({ engines: ['bing'], runtime: runtimeOn(fake.client).runtime, baseUrls: BASE_URLS, timeoutMs: 1000 });
    const outcome = await searchChain.find(request);
    assert.equal(outcome.kind === 'results' && outcome.results[0].title, 'Café crème');
  });

  test('engines without a configured base URL use the public one', async () => {
    const fake = fakeClient(() => new OutboundError('network', 'offline', ''));
    const searchChain = createSearchChain({ engines: ['mojeek'], runtime: runtimeOn(fake.client).runtime, timeoutMs: 1000 });
    await searchChain.find(request);
    assert.match(fake.calls[0]?.url ?? '', /^https:\/\/www\.mojeek\.com\/search\?/);
  });
});

describe('search chain: fallback', () => {
  test('moves past blocked pages, network errors, timeouts and HTTP 429, recording why', async () => {
    const { searchChain, calls, warnings } = chain((engine, page) => {
      switch (engine) {
        case 'bing':
          return SERP_FIXTURES.bing.blocked.challenge;
        case 'duckduckgo':
          return new OutboundError('network', 'connection reset', BASE_URLS.duckduckgo);
        case 'brave':
          return new OutboundError('timeout', 'deadline passed', BASE_URLS.brave);
        case 'mojeek':
          return { status: 429, path: '/search', body: 'slow down' };
        default:
          return resultsPage(engine, page);
      }
    });
    const outcome = await searchChain.find(request);
    assert.equal(outcome.kind === 'results' && outcome.engine, 'startpage');
    // A fetch that failed on the network is tried once more before the chain moves on; a block,
    // a 429 and a timeout are not (a timeout has spent the page's deadline, retry included).
    assert.deepEqual(
      calls.map((call) => call.engine),
      ['bing', 'duckduckgo', 'duckduckgo', 'brave', 'mojeek', 'startpage'],
    );
    assert.deepEqual(
      callFailures(warnings).map((warning) => [warning.details.upstream, warning.details.verdict, warning.details.status]),
      [
        ['bing', 'blocked', 200],
        ['duckduckgo', 'unreachable', undefined],
        ['brave', 'timeout', undefined],
        ['mojeek', 'blocked', 429],
      ],
    );
  });

  test('a page whose fetch failed on the network once is fetched again and the engine keeps the request', async () => {
    let failures = 0;
    const { searchChain, warnings, calls } = chain((engine, page) => {
      if (engine === 'bing' && (page === 1 || page === 3) && failures < 2) {
        failures++;
        return new OutboundError('network', 'connection reset', BASE_URLS.bing);
      }
      return resultsPage(engine, page);
    });
    const outcome = await searchChain.find({ ...request, perPage: 30 });
    assert.equal(outcome.kind === 'results' && outcome.engine, 'bing');
    assert.deepEqual(outcome.kind === 'results' ? outcome.results.map((result) => result.title) : [], fixtureResults('bing', 30).map((result) => result.title));
    assert.deepEqual(calls.map((call) => call.page).sort(), [1, 1, 2, 3, 3]);
    assert.equal(warnings.length, 0);
  });

  // Bing searches with a GET, DuckDuckGo and Startpage post their search form: a search is safe to send twice either way.
  for (const failing of ['bing', 'duckduckgo', 'startpage'] as const) {
    test(`a page that failed on the network is retried once, not more, then the chain moves on (${failing})`, async () => {
      const { searchChain, calls, events } = chain(
        (engine, page) => (engine === failing ? new OutboundError('network', 'connection reset', BASE_URLS[failing]) : resultsPage(engine, page)),
        { engines: [failing, 'mojeek'] },
      );
      const outcome = await searchChain.find(request);
      assert.equal(outcome.kind === 'results' && outcome.engine, 'mojeek');
      assert.deepEqual(calls.map((call) => call.engine), [failing, failing, 'mojeek']);
      const failed = events.filter((event) => event.type === 'call' && event.upstream === failing);
      assert.deepEqual(failed.map((event) => event.type === 'call' && [event.verdict, event.attempts]), [['unreachable', 2]]);
    });
  }

  test('a page that timed out is not fetched again: the page\'s deadline covers its retry', async () => {
    // Before the runtime, a timed-out page was fetched a second time with a fresh deadline.
    const { searchChain, calls } = chain(
      (engine, page) => (engine === 'bing' ? new OutboundError('timeout', 'render did not finish', BASE_URLS.bing) : resultsPage(engine, page)),
      { engines: ['bing', 'mojeek'] },
    );
    const outcome = await searchChain.find(request);
    assert.equal(outcome.kind === 'results' && outcome.engine, 'mojeek');
    assert.deepEqual(calls.map((call) => call.engine), ['bing', 'mojeek']);
  });

  test('all engines blocked: unavailable, with every attempt and its reason in order', async () => {
    const { searchChain } = chain((engine) => {
      const blocked = Object.values(SERP_FIXTURES[engine].blocked);
      return blocked[0];
    });
    const outcome = await searchChain.find(request);
    assert.equal(outcome.kind, 'unavailable');
    const attempts = outcome.kind === 'unavailable' ? outcome.attempts : [];
    assert.deepEqual(
      attempts.map((attempt) => attempt.engine),
      ['bing', 'duckduckgo', 'brave', 'mojeek', 'startpage'],
    );
    assert.match(attempts[0].reason, /One last step/);
    assert.ok(attempts.every((attempt) => attempt.reason.length > 0));
  });

  test('no_results from a cleanly answering engine is final: the next engine is not asked', async () => {
    const { searchChain, calls } = chain((engine, page) =>
      engine === 'bing' ? SERP_FIXTURES.bing.noResults('test query') : resultsPage(engine, page),
    );
    const outcome = await searchChain.find({ ...request, perPage: 20 });
    assert.deepEqual(outcome, { kind: 'no_results', engine: 'bing' });
    assert.deepEqual(new Set(calls.map((call) => call.engine)), new Set(['bing']));
  });

  test('the first page of a fan-out failing moves to the next engine even if later pages answered', async () => {
    const { searchChain } = chain((engine, page) =>
      engine === 'bing' && page === 1 ? new OutboundError('timeout', 'deadline passed', '') : resultsPage(engine, page),
    );
    const outcome = await searchChain.find({ ...request, perPage: 20 });
    assert.equal(outcome.kind === 'results' && outcome.engine, 'duckduckgo');
    assert.equal(outcome.kind === 'results' && outcome.results.length, 20);
  });

  test('the first page failing aborts the rest of that engine\'s fan-out', async () => {
    const signals: AbortSignal[] = [];
    const fake = fakeClient((engine, page) => (engine === 'bing' && page === 1 ? new OutboundError('network', 'reset', '') : resultsPage(engine, page)));
    const original = fake.client.fetch;
    fake.client.fetch = (url, options) => {
      if (options.signal) signals.push(options.signal);
      return original(url, options);
    };
    const searchChain = createSearchChain({ engines: ['bing', 'mojeek'], runtime: runtimeOn(fake.client).runtime, baseUrls: BASE_URLS, timeoutMs: 1000 });
    await searchChain.find({ ...request, perPage: 30 });
    // Bing's three pages and the retry of its first page, then Mojeek's three.
    assert.equal(signals.length, 7);
    assert.deepEqual(signals.map((signal) => signal.aborted), [true, true, true, true, false, false, false]);
  });
});

describe('search chain: Google and the browser', () => {
  test('without a browser, google is left out (with a warning) and the rest keep their order', () => {
    const warnings: string[] = [];
    const searchChain = createSearchChain({
      engines: ['google', 'bing', 'mojeek'],
      runtime: runtimeOn(fakeClient(() => new Error('unused')).client).runtime,
      timeoutMs: 1000,
      logger: { warn: (_details, message) => warnings.push(message) },
    });
    assert.deepEqual(searchChain.engines, ['bing', 'mojeek']);
    assert.equal(warnings.length, 1);
  });

  test('google alone without a browser is a configuration error', () => {
    assert.throws(
      () => createSearchChain({ engines: ['google'], runtime: runtimeOn(fakeClient(() => new Error('unused')).client).runtime, timeoutMs: 1000 }),
      SearchConfigError,
    );
  });

  test('with a browser, google requests go through it and never through the outbound client', async () => {
    const seen: BrowserRequest[] = [];
    const browser = async () => ({
      async fetchPage(upstream: BrowserRequest) {
        seen.push(upstream);
        const page = SERP_FIXTURES.google.results(fixtureResults('google', 10));
        return { status: page.status, url: new URL(upstream.url).origin + page.path, headers: {}, body: page.body, refused: [] };
      },
    });
    const { searchChain, calls } = chain(() => new Error('outbound must not be used'), { engines: ['google', 'bing'], hasBrowser: true }, { browser });
    const outcome = await searchChain.find(request);
    assert.equal(outcome.kind === 'results' && outcome.engine, 'google');
    assert.equal(outcome.kind === 'results' && outcome.results.length, 10);
    assert.equal(seen.length, 1);
    assert.match(seen[0].url, /^http:\/\/google\.test\/search\?q=test\+query/);
    assert.equal(calls.length, 0);
  });

  test('google at per_page 100 is one render of num=100 (its 99 results kept); page 2 starts at 100', async () => {
    const seen: BrowserRequest[] = [];
    const browser = async () => ({
      async fetchPage(upstream: BrowserRequest) {
        seen.push(upstream);
        const page = SERP_FIXTURES.google.results(fixtureResults('google', 99));
        return { status: page.status, url: new URL(upstream.url).origin + page.path, headers: {}, body: page.body, refused: [] };
      },
    });
    const { searchChain } = chain(() => new Error('outbound must not be used'), { engines: ['google'], hasBrowser: true }, { browser });
    const outcome = await searchChain.find({ ...request, perPage: 100 });
    assert.equal(outcome.kind === 'results' && outcome.results.length, 99);
    assert.equal(seen.length, 1);
    assert.equal(new URL(seen[0].url).searchParams.get('num'), '100');
    assert.equal(new URL(seen[0].url).searchParams.get('start'), null);
    await searchChain.find({ ...request, query: 'second page', page: 2, perPage: 100 });
    assert.equal(new URL(seen[1].url).searchParams.get('start'), '100');
    // per_page 15, page 2: results 16-30 are two pages of 20, not three of 10.
    await searchChain.find({ ...request, query: 'fifteen', page: 2, perPage: 15 });
    assert.deepEqual(seen.slice(2).map((upstream) => [new URL(upstream.url).searchParams.get('start'), new URL(upstream.url).searchParams.get('num')]), [[null, '20'], ['20', '20']]);
  });

  test('upstreamPageSize: 10 for engines with fixed pages, perPage rounded up to 10 (at most the maximum) otherwise', () => {
    assert.equal(upstreamPageSize({}, 100), 10);
    assert.equal(upstreamPageSize({ maxPageSize: 100 }, 10), 10);
    assert.equal(upstreamPageSize({ maxPageSize: 100 }, 15), 20);
    assert.equal(upstreamPageSize({ maxPageSize: 50 }, 100), 50);
    assert.deepEqual(upstreamWindow(2, 100, 50), { pages: [3, 4], skip: 0 });
  });

  test('a browser that does not answer in time counts as a timeout and the chain moves on', async () => {
    const browser = async () => ({ fetchPage: () => new Promise<FetchPageResult>(() => {}) });
    const { searchChain, events } = chain((engine, page) => resultsPage(engine, page), { engines: ['google', 'bing'], hasBrowser: true, timeoutMs: 50 }, { browser });
    const outcome = await searchChain.find(request);
    assert.equal(outcome.kind === 'results' && outcome.engine, 'bing');
    assert.deepEqual(
      events.filter((event) => event.type === 'call').map((event) => event.type === 'call' && [event.upstream, event.verdict]),
      [['google', 'timeout'], ['bing', 'ok']],
    );
  });

  test('default order: google first only when a browser is available', () => {
    assert.deepEqual(defaultSearchEngines(false), ['bing', 'duckduckgo', 'brave', 'mojeek', 'startpage']);
    assert.deepEqual(defaultSearchEngines(true), ['google', 'bing', 'duckduckgo', 'brave', 'mojeek', 'startpage']);
  });
});

describe('search chain: configuration', () => {
  const client = fakeClient(() => new Error('unused')).client;
  const runtime: UpstreamRuntime = createUpstreamRuntime({ outbound: client });

  test('an unknown engine name is a configuration error at start-up', () => {
    assert.throws(() => createSearchChain({ engines: ['bing', 'altavista'], runtime, timeoutMs: 1000 }), /altavista/);
  });

  test('a cache without a TTL, a non-positive timeout and a malformed base URL are rejected', () => {
    assert.throws(() => createSearchChain({ engines: ['bing'], runtime, timeoutMs: 1000, cache: new MemorySearchCache() }), SearchConfigError);
    assert.throws(() => createSearchChain({ engines: ['bing'], runtime, timeoutMs: 0 }), SearchConfigError);
    assert.throws(() => createSearchChain({ engines: ['bing'], runtime, timeoutMs: 1000, baseUrls: { bing: 'not a url' } }), SearchConfigError);
  });

  test('invalid page or per_page is a programming error', async () => {
    const searchChain = createSearchChain({ engines: ['bing'], runtime, timeoutMs: 1000 });
    await assert.rejects(searchChain.find({ ...request, page: 0 }), RangeError);
    await assert.rejects(searchChain.find({ ...request, perPage: 0 }), RangeError);
  });

  test('SEARCH_ENGINES and SEARCH_CACHE_TTL are read from the environment', () => {
    assert.deepEqual(readSearchSettings({ SEARCH_ENGINES: ' Mojeek, bing ,', SEARCH_CACHE_TTL: '300' }, { hasBrowser: false }), {
      engines: ['mojeek', 'bing'],
      cacheTtlSeconds: 300,
    });
    assert.deepEqual(readSearchSettings({}, { hasBrowser: true }), { engines: defaultSearchEngines(true), cacheTtlSeconds: 0 });
    assert.throws(() => readSearchSettings({ SEARCH_CACHE_TTL: '5m' }, { hasBrowser: false }), SearchConfigError);
  });
});

describe('search chain: cache', () => {
  function cachedChain(route: Route, cache: SearchCache = new MemorySearchCache()) {
    return { cache, ...chain(route, { cache, cacheTtlSeconds: 60 }, { breaker: { enabled: false } }) };
  }

  test('a repeated search is served from the cache without upstream requests', async () => {
    const { searchChain, calls } = cachedChain((engine, page) => resultsPage(engine, page));
    const first = await searchChain.find(request);
    const second = await searchChain.find(request);
    assert.equal(calls.length, 1);
    assert.deepEqual(second, first);
  });

  test('every parameter is part of the key', async () => {
    const { searchChain, calls } = cachedChain((engine, page) => resultsPage(engine, page));
    await searchChain.find(request);
    const variants: Array<Partial<SearchRequest>> = [
      { query: 'other' },
      { country: 'gb' },
      { language: 'fr' },
      { page: 2 },
      { perPage: 5 },
      { timeRange: 'week' },
    ];
    for (const variant of variants) await searchChain.find({ ...request, ...variant });
    assert.equal(calls.length, 1 + variants.length);
  });

  test('no_results and unavailable are not cached', async () => {
    let mode: 'none' | 'blocked' = 'none';
    const { searchChain, calls } = cachedChain((engine) =>
      mode === 'none' ? SERP_FIXTURES[engine].noResults('q') : Object.values(SERP_FIXTURES[engine].blocked)[0],
    );
    await searchChain.find(request);
    await searchChain.find(request);
    assert.equal(calls.length, 2);
    mode = 'blocked';
    calls.length = 0;
    await searchChain.find(request);
    await searchChain.find(request);
    // Every engine was asked again (the breaker is off here: with it, the second search would
    // skip the engines that answered a block page, which says nothing about the cache).
    assert.equal(calls.length, 10);
  });

  test('a failing cache does not fail the search', async () => {
    const broken: SearchCache = {
      get: async () => {
        throw new Error('cache down');
      },
      set: async () => {
        throw new Error('cache down');
      },
    };
    const { searchChain, warnings } = cachedChain((engine, page) => resultsPage(engine, page), broken);
    const outcome = await searchChain.find(request);
    assert.equal(outcome.kind, 'results');
    assert.equal(warnings.length, 2);
  });
});

describe('search chain: the caller goes away', () => {
  test('an aborted signal rejects with its reason, aborts the upstream fetches and asks no further engine', async () => {
    const caller = new AbortController();
    const { searchChain, calls } = chain(async () => {
      caller.abort(new Error('client closed'));
      return new Error('network down'); // the first engine fails, which would normally move on
    });
    await assert.rejects(searchChain.find(request, { signal: caller.signal }), /client closed/);
    assert.equal(calls.length, 1, 'no other engine was asked');
    assert.equal(calls[0].request.signal?.aborted, true, 'the upstream fetch saw the abort');
  });
});

describe('search chain: suspended engines (the circuit breaker)', () => {
  const callsOf = (calls: Call[], engine: EngineName) => calls.filter((call) => call.engine === engine).length;
  const verdicts = (events: RuntimeEvent[], upstream: string) =>
    events.filter((event) => event.type === 'call' && event.upstream === upstream).map((event) => event.type === 'call' && event.verdict);
  const circuit = (events: RuntimeEvent[], upstream: string) =>
    events.filter((event) => event.type === 'circuit' && event.upstream === upstream).map((event) => event.type === 'circuit' && event.state);

  test('an engine that answered a block page is skipped at once by the next search, and asked again after its back-off', async () => {
    let bingBlocks = true;
    const { searchChain, calls, events } = chain(
      (engine, page) => (engine === 'bing' && bingBlocks ? SERP_FIXTURES.bing.blocked.challenge : resultsPage(engine, page)),
      { engines: ['bing', 'mojeek'] },
      { breaker: { policy: { baseBackoffMs: 50 } } },
    );

    const first = await searchChain.find(request);
    assert.equal(first.kind === 'results' && first.engine, 'mojeek');
    assert.equal(callsOf(calls, 'bing'), 1);
    assert.deepEqual(circuit(events, 'bing'), ['open']);

    // Within the back-off: Bing is not asked at all, the next engine answers.
    const second = await searchChain.find({ ...request, query: 'second query' });
    assert.equal(second.kind === 'results' && second.engine, 'mojeek');
    assert.equal(callsOf(calls, 'bing'), 1, 'the suspended engine saw no second request');
    assert.deepEqual(verdicts(events, 'bing'), ['blocked', 'suspended']);

    // After the back-off, one probe goes; Bing answers cleanly and keeps the request.
    bingBlocks = false;
    await new Promise((resolve) => setTimeout(resolve, 80));
    const third = await searchChain.find({ ...request, query: 'third query' });
    assert.equal(third.kind === 'results' && third.engine, 'bing');
    assert.equal(callsOf(calls, 'bing'), 2);
    assert.deepEqual(verdicts(events, 'bing'), ['blocked', 'suspended', 'ok']);
    assert.deepEqual(circuit(events, 'bing'), ['open', 'half_open', 'closed']);

    // Closed again: the next search asks it straight away.
    const fourth = await searchChain.find({ ...request, query: 'fourth query' });
    assert.equal(fourth.kind === 'results' && fourth.engine, 'bing');
    assert.equal(callsOf(calls, 'mojeek'), 2);
  });

  test('a suspended engine is an attempt of an unavailable search, with the reason "suspended"', async () => {
    const { searchChain, calls } = chain(() => SERP_FIXTURES.bing.blocked.challenge, { engines: ['bing'] });
    await searchChain.find(request);
    const outcome = await searchChain.find(request);
    assert.equal(calls.length, 1);
    assert.equal(outcome.kind, 'unavailable');
    assert.match(outcome.kind === 'unavailable' ? outcome.attempts[0].reason : '', /^suspended: circuit open until /);
  });

  test('three searches in a row that find the engine unreachable suspend it', async () => {
    const { searchChain, calls, events } = chain(
      (engine, page) => (engine === 'bing' ? new OutboundError('network', 'connection refused', BASE_URLS.bing) : resultsPage(engine, page)),
      { engines: ['bing', 'mojeek'] },
      // No retry delay to wait for: the retry is the runtime's, with its own jitter.
    );
    for (let index = 0; index < 4; index++) await searchChain.find({ ...request, query: `query ${index}` });
    // Three calls of two attempts each, then nothing.
    assert.equal(callsOf(calls, 'bing'), 6);
    assert.deepEqual(verdicts(events, 'bing'), ['unreachable', 'unreachable', 'unreachable', 'suspended']);
    assert.deepEqual(circuit(events, 'bing'), ['open']);
  });
});

const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

async function redisSkipReason(): Promise<string | false> {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 1_000, maxRetriesPerRequest: 1, retryStrategy: () => null });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
    return false;
  } catch (error) {
    return `Redis is not reachable at ${REDIS_URL} (${(error as Error).message}); set TEST_REDIS_URL or start Redis to run this test`;
  } finally {
    probe.disconnect();
  }
}

describe('search chain: the circuit shared through Redis', async () => {
  const skip = await redisSkipReason();
  const redisA = skip ? undefined : new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const redisB = redisA?.duplicate();
  const prefix = `gleaner-test:${randomBytes(6).toString('hex')}:`;
  after(async () => {
    if (!redisA) return;
    const keys = await redisA.keys(`${prefix}*`);
    if (keys.length > 0) await redisA.del(...keys);
    redisA.disconnect();
    redisB?.disconnect();
  });

  test('two chains on two runtimes share the open circuit: after chain A meets the block page, chain B skips that engine', { skip }, async () => {
    const route: Route = (engine, page) => (engine === 'bing' ? SERP_FIXTURES.bing.blocked.challenge : resultsPage(engine, page));
    // Two replicas: each its own outbound client, runtime and Redis connection, one prefix.
    const a = chain(route, { engines: ['bing', 'mojeek'] }, { breaker: { store: new RedisBreakerStore(redisA!, prefix) } });
    const b = chain(route, { engines: ['bing', 'mojeek'] }, { breaker: { store: new RedisBreakerStore(redisB!, prefix) } });

    const first = await a.searchChain.find(request);
    assert.equal(first.kind === 'results' && first.engine, 'mojeek');
    assert.equal(a.calls.filter((call) => call.engine === 'bing').length, 1);
    // The verdict is recorded in the background: wait until Redis holds the open circuit.
    const deadline = Date.now() + 2000;
    while (!((await b.runtime.breaker.states()).get('bing')?.openUntil ?? 0)) {
      assert.ok(Date.now() < deadline, 'the open circuit never reached Redis');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }

    const second = await b.searchChain.find(request);
    assert.equal(second.kind === 'results' && second.engine, 'mojeek');
    assert.equal(b.calls.filter((call) => call.engine === 'bing').length, 0, 'chain B never asked the suspended engine');
    assert.deepEqual(
      b.events.filter((event) => event.type === 'call').map((event) => event.type === 'call' && [event.upstream, event.verdict]),
      [['bing', 'suspended'], ['mojeek', 'ok']],
    );
  });
});
