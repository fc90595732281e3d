/** The stateful parts of the forum client (token cache, rate-limit budget) and the request builders. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppTokenCache, refreshMarginMs, type TokenFetch } from '../../src/adapters/reddit/token.ts';
import { RateBudget } from '../../src/adapters/reddit/rate-budget.ts';
import { rateBudgetInterceptor, tokenInterceptor } from '../../src/adapters/reddit/client.ts';
import type { Exchange } from '../../src/adapters/kit/runtime.ts';
import type { UpstreamRequest } from '../../src/adapters/kit/types.ts';
import { commentContextAdapter, commentInfoAdapter, listingAdapter, searchAdapter, threadAdapter, tokenAdapter, userSubmittedAdapter } from '../../src/adapters/reddit/requests.ts';

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

/** A token endpoint that answers `tok-<n>` after `delayMs`, counting its calls. */
function tokenEndpoint(options: { lifetimeS?: number; delayMs?: number; fail?: () => boolean } = {}) {
  let calls = 0;
  const fetch: TokenFetch = async () => {
    calls += 1;
    const n = calls;
    await new Promise((resolve) => setTimeout(resolve, options.delayMs ?? 5));
    if (options.fail?.()) return { kind: 'failed', reason: 'token endpoint down' };
    return { kind: 'ok', value: { accessToken: `tok-${n}`, expiresInSeconds: options.lifetimeS ?? 3600 } };
  };
  return { fetch, calls: () => calls };
}

test('the first token is fetched once and reused until shortly before it expires', async () => {
  const time = clock();
  const endpoint = tokenEndpoint({ lifetimeS: 3600 });
  const cache = new AppTokenCache(endpoint.fetch, time.now);
  assert.deepEqual(await cache.token(), { kind: 'ok', token: 'tok-1' });
  time.advance(3600_000 - refreshMarginMs(3600_000) - 1);
  assert.deepEqual(await cache.token(), { kind: 'ok', token: 'tok-1' });
  assert.equal(endpoint.calls(), 1);
  time.advance(1); // inside the margin: refreshed before it expires
  assert.deepEqual(await cache.token(), { kind: 'ok', token: 'tok-2' });
  assert.equal(endpoint.calls(), 2);
});

test('20 concurrent requests share one refresh', async () => {
  const endpoint = tokenEndpoint({ delayMs: 30 });
  const cache = new AppTokenCache(endpoint.fetch);
  const tokens = await Promise.all(Array.from({ length: 20 }, () => cache.token()));
  assert.equal(endpoint.calls(), 1);
  assert.ok(tokens.every((t) => t.kind === 'ok' && t.token === 'tok-1'));
});

test('a refused token is dropped once: concurrent refusals of the same token cause one refresh', async () => {
  const endpoint = tokenEndpoint();
  const cache = new AppTokenCache(endpoint.fetch);
  await cache.token();
  for (let i = 0; i < 5; i += 1) cache.invalidate('tok-1');
  const again = await Promise.all(Array.from({ length: 5 }, () => cache.token()));
  assert.ok(again.every((t) => t.kind === 'ok' && t.token === 'tok-2'));
  // A late refusal of the old token does not throw away the new one.
  cache.invalidate('tok-1');
  assert.deepEqual(await cache.token(), { kind: 'ok', token: 'tok-2' });
  assert.equal(endpoint.calls(), 2);
});

test('a failed refresh keeps a token that has not expired; without one it fails, and the next call retries', async () => {
  const time = clock();
  let failing = false;
  const endpoint = tokenEndpoint({ lifetimeS: 100, fail: () => failing });
  const cache = new AppTokenCache(endpoint.fetch, time.now);
  await cache.token();
  failing = true;
  time.advance(60_000); // past the refresh point (50 s), before expiry (100 s)
  assert.deepEqual(await cache.token(), { kind: 'ok', token: 'tok-1' });
  time.advance(50_000); // expired
  assert.deepEqual(await cache.token(), { kind: 'failed', reason: 'token endpoint down' });
  failing = false;
  assert.equal((await cache.token()).kind, 'ok');
});

test('the budget: spent remaining refuses until the reset; a 429 refuses for the time it names', () => {
  const time = clock();
  const budget = new RateBudget(time.now);
  assert.deepEqual(budget.take(), { ok: true }); // nothing known yet
  budget.observe({ 'X-Ratelimit-Remaining': '2.0', 'X-Ratelimit-Reset': '30', 'X-Ratelimit-Used': '598' }, 200);
  assert.deepEqual(budget.take(), { ok: true });
  assert.deepEqual(budget.take(), { ok: true });
  assert.deepEqual(budget.take(), { ok: false, resetInMs: 30_000 });
  time.advance(29_999);
  assert.equal(budget.take().ok, false);
  time.advance(1);
  assert.deepEqual(budget.take(), { ok: true }); // a new window

  budget.observe({ 'retry-after': '7' }, 429);
  assert.deepEqual(budget.take(), { ok: false, resetInMs: 7_000 });
  time.advance(7_000);
  assert.deepEqual(budget.take(), { ok: true });

  // A 429 that names no wait does not stop the next request.
  budget.observe({}, 429);
  assert.deepEqual(budget.take(), { ok: true });
});

const access = { oauth: false, userAgent: 'test-agent/1.0' };
const oauthAccess = { oauth: true, userAgent: 'test-agent/1.0' };
const context = { baseUrl: 'https://oauth.reddit.com', now: new Date(0) };

/** A request as the client sends it: through its token interceptor, with a cache holding `token`. */
async function sentWithToken(request: UpstreamRequest, token = 'tok'): Promise<UpstreamRequest> {
  const tokens = new AppTokenCache(async () => ({ kind: 'ok', value: { accessToken: token, expiresInSeconds: 3600 } }));
  let sent: UpstreamRequest | undefined;
  await tokenInterceptor(tokens)(exchangeOf(request), async (exchange) => {
    sent = exchange.request;
    return { outcome: { kind: 'empty' }, response: { status: 200, url: exchange.request.url, headers: {}, body: '' } };
  });
  assert.ok(sent, 'the request was sent');
  return sent;
}

function exchangeOf(request: UpstreamRequest): Exchange {
  return { upstream: 'reddit', operation: 'test', request, idempotent: true, signal: new AbortController().signal, deadline: Date.now() + 10_000, log: { warn() {} }, notes: {} };
}

test('requests: OAuth paths with the bearer token, anonymous .json paths, raw_json=1 and the User-Agent always', async () => {
  const built = listingAdapter.buildRequest({ subreddit: 'AskReddit', sort: 'top', timeRange: 'week', limit: 50, after: 't3_x', access: oauthAccess }, context);
  // The adapter is pure: the token is the client's interceptor's to add, never the adapter's.
  assert.equal(built.headers.Authorization, undefined);
  const oauth = await sentWithToken(built);
  assert.equal(oauth.url, 'https://oauth.reddit.com/r/AskReddit/top?raw_json=1&limit=50&t=week&after=t3_x');
  assert.equal(oauth.headers.Authorization, 'Bearer tok');
  assert.equal(oauth.headers['User-Agent'], 'test-agent/1.0');

  const anonymous = listingAdapter.buildRequest({ subreddit: 'pics+funny', sort: 'hot', timeRange: 'week', limit: 25, access }, { ...context, baseUrl: 'https://www.reddit.com/' });
  assert.equal(anonymous.url, 'https://www.reddit.com/r/pics+funny/hot.json?raw_json=1&limit=25'); // t= only for top/controversial
  assert.equal(anonymous.headers.Authorization, undefined);
  assert.equal(anonymous.headers['User-Agent'], 'test-agent/1.0');

  const search = searchAdapter.buildRequest({ query: 'praw oauth', subreddit: 'redditdev', sort: 'new', timeRange: 'all', limit: 10, access }, context);
  assert.equal(search.url, 'https://oauth.reddit.com/r/redditdev/search.json?raw_json=1&q=praw+oauth&sort=new&t=all&limit=10&restrict_sr=1&type=link');
  const everywhere = searchAdapter.buildRequest({ query: 'q', limit: 25, access: oauthAccess }, context);
  assert.equal(everywhere.url, 'https://oauth.reddit.com/search?raw_json=1&q=q&limit=25&type=link');

  assert.equal(threadAdapter.buildRequest({ postId: '2gmzqe', access }, context).url, 'https://oauth.reddit.com/comments/2gmzqe.json?raw_json=1');
  assert.equal(commentInfoAdapter.buildRequest({ commentId: 'cklhv0f', access: oauthAccess }, context).url, 'https://oauth.reddit.com/api/info?raw_json=1&id=t1_cklhv0f');
  assert.equal(commentContextAdapter.buildRequest({ postId: '2gmzqe', commentId: 'cklhv0f', access: oauthAccess }, context).url, 'https://oauth.reddit.com/comments/2gmzqe/_/cklhv0f?raw_json=1');
  assert.equal(userSubmittedAdapter.buildRequest({ username: 'spez', after: 't3_a', access: oauthAccess }, context).url, 'https://oauth.reddit.com/user/spez/submitted?raw_json=1&limit=25&after=t3_a');
});

test('the token interceptor: a 401 forgets the token and tries once more with a fresh one', async () => {
  let issued = 0;
  const tokens = new AppTokenCache(async () => ({ kind: 'ok', value: { accessToken: `tok-${++issued}`, expiresInSeconds: 3600 } }));
  const seen: Array<string | undefined> = [];
  const exchange = exchangeOf(threadAdapter.buildRequest({ postId: 'p1', access: oauthAccess }, context));
  const answered = await tokenInterceptor(tokens)(exchange, async (current) => {
    seen.push(current.request.headers.Authorization);
    return { outcome: { kind: 'blocked', reason: 'unauthorized', status: 401 }, response: { status: 401, url: current.request.url, headers: {}, body: '' } };
  });
  assert.deepEqual(seen, ['Bearer tok-1', 'Bearer tok-2']); // once more, not forever
  assert.equal(answered.response?.status, 401);
  assert.equal(exchange.notes.tokenRefreshed, true);
});

test('the rate budget interceptor: once spent it answers blocked without calling', async () => {
  const time = clock();
  const budget = new RateBudget(time.now);
  let calls = 0;
  const send = async (current: Exchange) => {
    calls += 1;
    return { outcome: { kind: 'empty' as const }, response: { status: 200, url: current.request.url, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '30' }, body: '' } };
  };
  const interceptor = rateBudgetInterceptor(budget);
  const request = threadAdapter.buildRequest({ postId: 'p1', access }, context);
  assert.equal((await interceptor(exchangeOf(request), send)).outcome.kind, 'empty');
  assert.deepEqual((await interceptor(exchangeOf(request), send)).outcome, { kind: 'blocked', reason: 'rate-limit budget spent, resets in 30 s' });
  assert.equal(calls, 1);
});

test('the token request: client_credentials with HTTP Basic auth', () => {
  const request = tokenAdapter.buildRequest({ clientId: 'id', clientSecret: 'secret', userAgent: 'ua' }, { baseUrl: 'https://www.reddit.com', now: new Date(0) });
  assert.equal(request.url, 'https://www.reddit.com/api/v1/access_token');
  assert.equal(request.method, 'POST');
  assert.equal(request.body, 'grant_type=client_credentials');
  assert.equal(request.headers.Authorization, `Basic ${Buffer.from('id:secret').toString('base64')}`);
  assert.equal(request.headers['Content-Type'], 'application/x-www-form-urlencoded');
});

test('settings: credentials both or neither, base URL by mode, every variable validated', async () => {
  const { forumCapability, DEFAULT_USER_AGENT } = await import('../../src/adapters/reddit/index.ts');
  const { envReader, ConfigError } = await import('../../src/core/env.ts');
  const read = (env: Record<string, string>) => envReader(env).read((reader) => forumCapability.settings(reader));
  assert.deepEqual(read({}), { credentials: undefined, baseUrl: 'https://www.reddit.com', authUrl: 'https://www.reddit.com', userAgent: DEFAULT_USER_AGENT, timeoutMs: 15_000 });
  const oauth = read({ REDDIT_CLIENT_ID: 'id', REDDIT_CLIENT_SECRET: 'secret', REDDIT_USER_AGENT: 'ua/1' });
  assert.equal(oauth.baseUrl, 'https://oauth.reddit.com');
  assert.deepEqual(oauth.credentials, { clientId: 'id', clientSecret: 'secret' });
  assert.equal(oauth.userAgent, 'ua/1');
  assert.equal(read({ UPSTREAM_REDDIT_URL: 'http://127.0.0.1:9/x' }).baseUrl, 'http://127.0.0.1:9/x');
  const failure = (env: Record<string, string>) => {
    try {
      read(env);
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      return error.variable;
    }
    return 'no error';
  };
  assert.equal(failure({ REDDIT_CLIENT_ID: 'id' }), 'REDDIT_CLIENT_SECRET');
  assert.equal(failure({ REDDIT_CLIENT_SECRET: 'secret' }), 'REDDIT_CLIENT_ID');
  assert.equal(failure({ UPSTREAM_REDDIT_URL: 'oauth.reddit.com' }), 'UPSTREAM_REDDIT_URL');
  assert.equal(failure({ UPSTREAM_REDDIT_AUTH_URL: 'ftp://x' }), 'UPSTREAM_REDDIT_AUTH_URL');
  assert.equal(failure({ REDDIT_TIMEOUT_MS: '0' }), 'REDDIT_TIMEOUT_MS');
});
