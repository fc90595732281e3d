/**
 * The five /v1/forum* endpoints through the real server, against a fake Reddit on loopback:
 * the app-only token flow, the rate-limit budget, pagination, every error mapping, anonymous
 * `.json` access, and billing (3 credits on success, nothing on any failure).
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../support/service.ts';
import { startFakeUpstream, type FakeUpstream, type UpstreamAnswer, type UpstreamHit } from '../support/fake-upstream.ts';
import { comment, listing, more, NETWORK_POLICY_PAGE, post, subredditAbout, suspendedUser, thread, user, WHOA_THERE_PAGE } from '../support/forum-fixtures.ts';

let service: TestService;
let upstream: FakeUpstream;

const CLIENT_ID = 'test-client';
const CLIENT_SECRET = 'test-secret';
const USER_AGENT = 'gleaner-tests/1.0 (integration)';

// The fake Reddit: /auth/api/v1/access_token issues tokens; /api/... is the OAuth API (bearer
// checked); /anon/... is the public site. `api` answers the API paths of the running test.
const fake = {
  tokenLifetimeS: 3600,
  tokenDelayMs: 0,
  issued: 0,
  /** Live tokens and when each expires (ms since the epoch). */
  tokens: new Map<string, number>(),
  api: (_hit: UpstreamHit, _path: string): UpstreamAnswer => ({ status: 404 }),
};

const json = (body: unknown, status = 200, headers: Record<string, string> = {}): UpstreamAnswer => ({
  status,
  headers: { 'content-type': 'application/json; charset=UTF-8', ...headers },
  body: JSON.stringify(body),
});
const html = (body: string, status: number): UpstreamAnswer => ({ status, headers: { 'content-type': 'text/html; charset=UTF-8' }, body });

before(async () => {
  upstream = await startFakeUpstream();
  upstream.handle(async (hit) => {
    if (hit.path === '/auth/api/v1/access_token') {
      if (fake.tokenDelayMs) await new Promise((resolve) => setTimeout(resolve, fake.tokenDelayMs));
      const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
      if (hit.method !== 'POST' || hit.headers.authorization !== basic || hit.body !== 'grant_type=client_credentials') return json({ message: 'Unauthorized', error: 401 }, 401);
      fake.issued += 1;
      const token = `tok-${fake.issued}`;
      fake.tokens.set(token, Date.now() + fake.tokenLifetimeS * 1000);
      return json({ access_token: token, token_type: 'bearer', expires_in: fake.tokenLifetimeS, scope: '*' });
    }
    if (hit.path.startsWith('/api/')) {
      const token = /^Bearer (.+)$/.exec(hit.headers.authorization ?? '')?.[1] ?? '';
      const expiresAt = fake.tokens.get(token);
      if (expiresAt === undefined || expiresAt <= Date.now()) return json({ message: 'Unauthorized', error: 401 }, 401);
      return fake.api(hit, hit.path.slice('/api'.length));
    }
    if (hit.path.startsWith('/anon/')) return fake.api(hit, hit.path.slice('/anon'.length));
    return { status: 404, body: 'no such path' };
  });
  service = await startTestService({
    REDDIT_CLIENT_ID: CLIENT_ID,
    REDDIT_CLIENT_SECRET: CLIENT_SECRET,
    REDDIT_USER_AGENT: USER_AGENT,
    UPSTREAM_REDDIT_URL: `${upstream.url}/api`,
    UPSTREAM_REDDIT_AUTH_URL: `${upstream.url}/auth`,
    REDDIT_TIMEOUT_MS: '3000',
  });
});
after(async () => {
  await service?.close();
  await upstream?.close();
});
beforeEach(async () => {
  // A block opens Reddit's circuit for the whole runtime (30 s at first): each test starts with it
  // closed, as it is once the back-off has passed and a probe got an answer.
  await closeCircuit(service);
  upstream.hits.length = 0;
  fake.tokenLifetimeS = 3600;
  fake.tokenDelayMs = 0;
  fake.api = defaultReddit;
});

/** A small Reddit: r/testsub has two pages of posts, post p1 a comment tree, u/someone a profile. */
function defaultReddit(hit: UpstreamHit, path: string): UpstreamAnswer {
  const route = path.replace(/\.json$/, '');
  if (route === '/r/testsub/hot' || route === '/r/testsub/new') {
    return hit.query.get('after') === 't3_p2'
      ? json(listing([post('p3'), post('p4')], { after: null, before: 't3_p3' }))
      : json(listing([post('p1'), post('p2')], { after: 't3_p2' }));
  }
  if (route === '/r/testsub/search' || route === '/search') return json(listing([post('s1')], { after: 't3_s1' }));
  if (route === '/comments/p1') return json(thread(post('p1'), [comment('c1', {}, [comment('c2', { parent_id: 't1_c1' })]), more(['m1', 'm2'])]));
  if (route === '/api/info' && hit.query.get('id') === 't1_c2') return json(listing([comment('c2', { parent_id: 't1_c1' })]));
  if (route === '/api/info') return json(listing([]));
  if (route === '/comments/p1/_/c2') return json(thread(post('p1'), [comment('c2', { parent_id: 't1_c1' }, [comment('c3', { parent_id: 't1_c2' })])]));
  if (route === '/user/someone/about') return json(user('someone'));
  if (route === '/user/someone/submitted') return json(listing([post('u1', { author: 'someone' })], { after: 't3_u1' }));
  if (route === '/r/testsub/about') return json(subredditAbout('testsub'));
  return json({ message: 'Not Found', error: 404 }, 404);
}

/** Closes Reddit's circuit, and checks the breaker's store says so. */
async function closeCircuit(on: TestService): Promise<void> {
  const breaker = on.services.capabilities.runtime.breaker;
  await breaker.reset('reddit');
  for (let waited = 0; (await breaker.states()).has('reddit'); waited += 10) {
    if (waited > 2000) throw new Error("Reddit's circuit did not close");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Whether Reddit's circuit is open now (after a block), once the breaker's store has it. */
async function circuitOpen(on: TestService): Promise<boolean> {
  const breaker = on.services.capabilities.runtime.breaker;
  for (let waited = 0; waited <= 2000; waited += 10) {
    if (((await breaker.states()).get('reddit')?.openUntil ?? 0) > Date.now()) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return false;
}

const call = (path: string, token: string, body: unknown) => service.call('POST', path, { token, body });
const balance = (id: number) => service.services.ledger.balance(id, 'scraping');
const apiHits = () => upstream.hits.filter((hit) => hit.path.startsWith('/api/') || hit.path.startsWith('/anon/'));
const tokenHits = () => upstream.hits.filter((hit) => hit.path === '/auth/api/v1/access_token');

async function history(token: string): Promise<Array<{ endpoint: string; status: number; credits: number }>> {
  const r = await service.call('GET', '/requests?per_page=100', { token });
  return r.body.data.map((row: any) => ({ endpoint: row.endpoint, status: row.status, credits: row.credits }));
}

describe('token flow', () => {
  test('the first request fetches an app-only token (client_credentials, HTTP Basic); the next ones reuse it', async () => {
    const u = await service.user({ scraping: 10 });
    const r = await call('/v1/forum', u.token, { subreddit: 'testsub' });
    assert.equal(r.status, 200, r.text);
    assert.equal(tokenHits().length, 1);
    const [tokenHit] = tokenHits();
    assert.equal(tokenHit.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.equal(tokenHit.headers['user-agent'], USER_AGENT);
    const [apiHit] = apiHits();
    assert.equal(apiHit.path, '/api/r/testsub/hot');
    assert.equal(apiHit.headers.authorization, `Bearer tok-${fake.issued}`);
    assert.equal(apiHit.headers['user-agent'], USER_AGENT);
    assert.equal(apiHit.query.get('raw_json'), '1');
    assert.equal(apiHit.query.get('limit'), '25');

    const again = await call('/v1/forum', u.token, { subreddit: 'testsub' });
    assert.equal(again.status, 200);
    assert.equal(tokenHits().length, 1);
    assert.equal(await balance(u.id), 4);
  });

  test('a token is refreshed before it expires, and 20 concurrent requests share one refresh', async () => {
    const u = await service.user({ scraping: 100 });
    fake.tokenLifetimeS = 2; // refreshed after half its life
    fake.tokens.clear(); // the cached token is refused: a 401, one refresh, a retry
    assert.equal((await call('/v1/forum', u.token, { subreddit: 'testsub' })).status, 200);
    const shortLived = `tok-${fake.issued}`;
    upstream.hits.length = 0;

    await new Promise((resolve) => setTimeout(resolve, 1200));
    assert.ok(fake.tokens.get(shortLived)! > Date.now(), 'the old token is still valid');
    fake.tokenLifetimeS = 3600;
    fake.tokenDelayMs = 150; // every request arrives while the refresh is in flight
    const answers = await Promise.all(Array.from({ length: 20 }, () => call('/v1/forum', u.token, { subreddit: 'testsub' })));
    assert.deepEqual(answers.map((a) => a.status), Array(20).fill(200));
    assert.equal(tokenHits().length, 1, 'one refresh for 20 requests');
    assert.equal(apiHits().length, 20);
    assert.ok(apiHits().every((hit) => hit.headers.authorization === `Bearer tok-${fake.issued}`));
    assert.ok(apiHits().every((hit) => hit.headers.authorization !== `Bearer ${shortLived}`));
    assert.equal(await balance(u.id), 100 - 21 * 3);
  });

  test('a 401 refreshes the token once and retries; a second 401 is a 502, uncharged', async () => {
    const u = await service.user({ scraping: 10 });
    fake.tokens.clear();
    const r = await call('/v1/forum/post', u.token, { id: 'p1' });
    assert.equal(r.status, 200);
    assert.deepEqual(upstream.hits.map((hit) => hit.path), ['/api/comments/p1', '/auth/api/v1/access_token', '/api/comments/p1']);
    assert.equal(await balance(u.id), 7);

    upstream.hits.length = 0;
    fake.api = () => json({ message: 'Unauthorized', error: 401 }, 401); // refuses every token
    const refused = await call('/v1/forum/post', u.token, { id: 'p1' });
    assert.equal(refused.status, 502);
    assert.deepEqual(refused.body, { message: 'The upstream service is unavailable, please retry.' });
    assert.deepEqual(upstream.hits.map((hit) => hit.path), ['/api/comments/p1', '/auth/api/v1/access_token', '/api/comments/p1']);
    assert.equal(await balance(u.id), 7);
  });
});

describe('rate limit', () => {
  test('a spent budget answers 502 at once, without calling Reddit, until the reset', async () => {
    const u = await service.user({ scraping: 10 });
    fake.api = (hit, path) => ({ ...defaultReddit(hit, path), headers: { 'content-type': 'application/json', 'x-ratelimit-used': '600', 'x-ratelimit-remaining': '0.0', 'x-ratelimit-reset': '1' } });
    assert.equal((await call('/v1/forum', u.token, { subreddit: 'testsub' })).status, 200);
    assert.equal(apiHits().length, 1);
    const refused = await call('/v1/forum', u.token, { subreddit: 'testsub' });
    assert.equal(refused.status, 502);
    assert.deepEqual(refused.body, { message: 'The upstream service is unavailable, please retry.' });
    assert.equal(apiHits().length, 1, 'Reddit was not called');
    assert.equal(await balance(u.id), 7);

    // The budget refused on its own, without asking Reddit: the circuit breaker learns from
    // Reddit's answers only, so Reddit is not suspended, and after the reset it is asked again.
    assert.equal(await circuitOpen(service), false, "the spent budget did not open Reddit's circuit");
    await new Promise((resolve) => setTimeout(resolve, 1100));
    fake.api = defaultReddit;
    assert.equal((await call('/v1/forum', u.token, { subreddit: 'testsub' })).status, 200);
    assert.equal(apiHits().length, 2);
    assert.equal(await balance(u.id), 4);
  });
});

describe('endpoints', () => {
  test('/v1/forum: a page of posts; `after` fetches the next page (round trip)', async () => {
    const u = await service.user({ scraping: 10 });
    const first = await call('/v1/forum', u.token, { subreddit: 'r/testsub', sort: 'new', limit: 2 });
    assert.equal(first.status, 200);
    assert.equal(first.body.response.subreddit, 'testsub');
    assert.deepEqual(first.body.response.posts.map((p: any) => p.id), ['p1', 'p2']);
    assert.equal(first.body.response.after, 't3_p2');
    assert.equal(first.body.response.before, null);
    assert.deepEqual(first.body.response.posts[0], {
      id: 'p1',
      name: 't3_p1',
      subreddit: 'testsub',
      title: 'Post p1 & <friends>',
      author: 'author_p1',
      score: 42,
      num_comments: 3,
      created_at: '2023-11-14T14:13:20.250000Z',
      url: 'https://www.reddit.com/r/testsub/comments/p1/post_p1/',
      permalink: 'https://www.reddit.com/r/testsub/comments/p1/post_p1/',
      selftext: 'Body of p1',
      over_18: false,
      is_self: true,
    });
    const second = await call('/v1/forum', u.token, { subreddit: 'testsub', sort: 'new', limit: 2, after: first.body.response.after });
    assert.equal(second.status, 200);
    assert.deepEqual(second.body.response.posts.map((p: any) => p.id), ['p3', 'p4']);
    assert.equal(second.body.response.after, null);
    assert.equal(second.body.response.before, 't3_p3');
    assert.equal(apiHits()[1].query.get('after'), 't3_p2');
    assert.equal(apiHits()[1].query.get('limit'), '2');
    assert.equal(await balance(u.id), 4);
  });

  test('/v1/forum: top with a time range sends t=', async () => {
    const u = await service.user({ scraping: 10 });
    fake.api = () => json(listing([post('t1x')]));
    const r = await call('/v1/forum', u.token, { subreddit: 'testsub', sort: 'top', time_range: 'week' });
    assert.equal(r.status, 200);
    assert.equal(apiHits()[0].path, '/api/r/testsub/top');
    assert.equal(apiHits()[0].query.get('t'), 'week');
  });

  test('/v1/forum/search: everywhere, and restricted to a subreddit', async () => {
    const u = await service.user({ scraping: 10 });
    const all = await call('/v1/forum/search', u.token, { query: 'praw oauth' });
    assert.equal(all.status, 200);
    assert.deepEqual(all.body.response, { query: 'praw oauth', subreddit: null, posts: [all.body.response.posts[0]], after: 't3_s1', before: null });
    assert.equal(all.body.response.posts[0].id, 's1');
    const within = await call('/v1/forum/search', u.token, { query: 'praw', subreddit: 'testsub', sort: 'top', time_range: 'year', limit: 5 });
    assert.equal(within.status, 200);
    const hit = apiHits()[1];
    assert.equal(hit.path, '/api/r/testsub/search');
    assert.deepEqual(Object.fromEntries(hit.query), { raw_json: '1', q: 'praw', sort: 'top', t: 'year', limit: '5', restrict_sr: '1', type: 'link' });
    assert.equal(await balance(u.id), 4);
  });

  test('/v1/forum/post by id or by any URL form: the post, nested comments and more_count', async () => {
    const u = await service.user({ scraping: 20 });
    const byId = await call('/v1/forum/post', u.token, { id: 't3_p1' });
    assert.equal(byId.status, 200);
    const thread = byId.body.response;
    assert.equal(thread.id, 'p1');
    assert.equal(thread.more_count, 2);
    assert.deepEqual(thread.comments.map((c: any) => [c.id, c.depth, c.replies.map((r: any) => [r.id, r.depth])]), [['c1', 0, [['c2', 1]]]]);
    for (const url of ['https://old.reddit.com/r/testsub/comments/p1/post_p1/', 'https://redd.it/p1', 'https://np.reddit.com/r/testsub/comments/p1/?utm=x']) {
      const r = await call('/v1/forum/post', u.token, { url });
      assert.equal(r.status, 200, url);
      assert.deepEqual(r.body.response, thread);
    }
    assert.equal(await balance(u.id), 8);
  });

  test('/v1/forum/comment: by id (info, then context) and by URL (context only)', async () => {
    const u = await service.user({ scraping: 10 });
    const byId = await call('/v1/forum/comment', u.token, { id: 'c2' });
    assert.equal(byId.status, 200, byId.text);
    assert.deepEqual(apiHits().map((hit) => hit.path), ['/api/api/info', '/api/comments/p1/_/c2']);
    assert.equal(apiHits()[0].query.get('id'), 't1_c2');
    const answer = byId.body.response;
    assert.deepEqual([answer.id, answer.depth, answer.parent_id, answer.subreddit, answer.post_id], ['c2', 0, 't1_c1', 'testsub', 'p1']);
    assert.deepEqual(answer.replies.map((r: any) => [r.id, r.depth]), [['c3', 1]]);
    upstream.hits.length = 0;
    const byUrl = await call('/v1/forum/comment', u.token, { url: 'https://www.reddit.com/r/testsub/comments/p1/post_p1/c2/?context=3' });
    assert.equal(byUrl.status, 200);
    assert.deepEqual(byUrl.body.response, answer);
    assert.deepEqual(apiHits().map((hit) => hit.path), ['/api/comments/p1/_/c2']);
    assert.equal(await balance(u.id), 4);
  });

  test('/v1/forum/user: the profile and submissions; a suspended account answers is_suspended', async () => {
    const u = await service.user({ scraping: 10 });
    const r = await call('/v1/forum/user', u.token, { username: 'u/someone', after: 't3_x1' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.response.user, { id: 'u1abc', name: 'someone', created_at: '2011-11-29T07:49:13.000000Z', link_karma: 10, comment_karma: 20, is_suspended: false });
    assert.deepEqual(r.body.response.posts.map((p: any) => p.author), ['someone']);
    assert.equal(r.body.response.after, 't3_u1');
    assert.equal(apiHits().find((hit) => hit.path.endsWith('/submitted'))?.query.get('after'), 't3_x1');

    fake.api = (hit, path) => (path === '/user/gone/about' ? json(suspendedUser('gone')) : path === '/user/gone/submitted' ? json({ message: 'Not Found', error: 404 }, 404) : defaultReddit(hit, path));
    const suspended = await call('/v1/forum/user', u.token, { username: 'gone' });
    assert.equal(suspended.status, 200);
    assert.deepEqual(suspended.body.response, {
      user: { id: null, name: 'gone', created_at: null, link_karma: null, comment_karma: null, is_suspended: true },
      posts: [],
      after: null,
      before: null,
    });
    assert.equal(await balance(u.id), 4);
  });

  test('an existing subreddit with no posts is an empty page (charged); asked to /about first', async () => {
    const u = await service.user({ scraping: 10 });
    fake.api = (hit, path) => (path === '/r/quiet/hot' ? json(listing([])) : path === '/r/quiet/about' ? json(subredditAbout('quiet')) : defaultReddit(hit, path));
    const r = await call('/v1/forum', u.token, { subreddit: 'quiet' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.response, { subreddit: 'quiet', posts: [], after: null, before: null });
    assert.equal(await balance(u.id), 7);
  });
});

describe('errors: 404 or 502, never charged', () => {
  const notFound = { message: 'Not found.' };
  const unavailable = { message: 'The upstream service is unavailable, please retry.' };
  const cases: Array<{ name: string; path: string; body: unknown; api: (hit: UpstreamHit, path: string) => UpstreamAnswer; status: number }> = [
    {
      name: 'unknown subreddit (redirected to the subreddit search)',
      path: '/v1/forum',
      body: { subreddit: 'nosuchsub' },
      api: (hit, path) =>
        path === '/r/nosuchsub/hot'
          ? { status: 302, headers: { location: `${upstream.url}/api/subreddits/search?q=nosuchsub` } }
          : path === '/subreddits/search'
            ? json(listing([{ kind: 't5', data: { display_name: 'nosuchsubreddit' } }]))
            : defaultReddit(hit, path),
      status: 404,
    },
    {
      name: 'unknown subreddit (an empty listing; /about says 404)',
      path: '/v1/forum',
      body: { subreddit: 'emptyghost' },
      api: (hit, path) => (path === '/r/emptyghost/hot' ? json(listing([])) : json({ message: 'Not Found', error: 404 }, 404)),
      status: 404,
    },
    { name: 'banned subreddit', path: '/v1/forum', body: { subreddit: 'bannedsub' }, api: () => json({ reason: 'banned', message: 'Not Found', error: 404 }, 404), status: 404 },
    { name: 'private subreddit', path: '/v1/forum', body: { subreddit: 'privsub' }, api: () => json({ reason: 'private', message: 'Forbidden', error: 403 }, 403), status: 404 },
    {
      name: 'quarantined subreddit',
      path: '/v1/forum/search',
      body: { query: 'x', subreddit: 'quarsub' },
      api: () => json({ reason: 'quarantined', quarantine_message: 'This community is quarantined.', message: 'Forbidden', error: 403 }, 403),
      status: 404,
    },
    { name: 'unknown post', path: '/v1/forum/post', body: { id: 'zzzzzz' }, api: () => json({ message: 'Not Found', error: 404 }, 404), status: 404 },
    { name: 'unknown comment (empty /api/info)', path: '/v1/forum/comment', body: { id: 'zzzzzz' }, api: () => json(listing([])), status: 404 },
    { name: 'comment not in the thread the URL names', path: '/v1/forum/comment', body: { url: 'https://www.reddit.com/r/testsub/comments/p1/x/zzz/' }, api: () => json(thread(post('p1'), [])), status: 404 },
    { name: 'unknown or shadow-banned user', path: '/v1/forum/user', body: { username: 'nobody' }, api: () => json({ message: 'Not Found', error: 404 }, 404), status: 404 },
    { name: 'network-policy block page (403 HTML)', path: '/v1/forum', body: { subreddit: 'testsub' }, api: () => html(NETWORK_POLICY_PAGE, 403), status: 502 },
    { name: '"whoa there, pardner" (429 HTML)', path: '/v1/forum/post', body: { id: 'p1' }, api: () => html(WHOA_THERE_PAGE, 429), status: 502 },
    { name: 'HTML page with 200', path: '/v1/forum/search', body: { query: 'q' }, api: () => html(WHOA_THERE_PAGE, 200), status: 502 },
    { name: '429 JSON', path: '/v1/forum/user', body: { username: 'someone' }, api: () => json({ message: 'Too Many Requests', error: 429 }, 429), status: 502 },
    { name: '500', path: '/v1/forum/comment', body: { id: 'c2' }, api: () => ({ status: 500, body: 'Internal Server Error' }), status: 502 },
    { name: '503', path: '/v1/forum', body: { subreddit: 'testsub' }, api: () => html('<html><body>Our CDN was unable to reach our servers</body></html>', 503), status: 502 },
    { name: 'JSON of an unexpected shape', path: '/v1/forum', body: { subreddit: 'testsub' }, api: () => json({ kind: 'Listing', data: { children: [{ kind: 't3', data: { id: 1 } }] } }), status: 502 },
    { name: 'a thread that is not two listings', path: '/v1/forum/post', body: { id: 'p1' }, api: () => json({ data: [] }), status: 502 },
  ];

  for (const c of cases) {
    test(`${c.name} → ${c.status}`, async () => {
      const u = await service.user({ scraping: 10 });
      fake.api = c.api;
      const r = await call(c.path, u.token, c.body);
      assert.equal(r.status, c.status, r.text);
      assert.deepEqual(r.body, c.status === 404 ? notFound : unavailable);
      assert.ok(apiHits().length >= 1, 'Reddit was asked');
      assert.equal(await balance(u.id), 10);
      assert.deepEqual(await history(u.token), [{ endpoint: c.path, status: c.status, credits: 0 }]);
    });
  }

  test('the token endpoint refusing the credentials is a 502, uncharged', async () => {
    // A separate service with the wrong secret: its first request needs a token.
    const other = await startTestService({
      REDDIT_CLIENT_ID: CLIENT_ID,
      REDDIT_CLIENT_SECRET: 'wrong',
      UPSTREAM_REDDIT_URL: `${upstream.url}/api`,
      UPSTREAM_REDDIT_AUTH_URL: `${upstream.url}/auth`,
    });
    try {
      const u = await other.user({ scraping: 10 });
      const r = await other.call('POST', '/v1/forum', { token: u.token, body: { subreddit: 'testsub' } });
      assert.equal(r.status, 502);
      assert.equal(apiHits().length, 0);
      assert.equal(tokenHits().length, 1);
      assert.equal(await other.services.ledger.balance(u.id, 'scraping'), 10);
    } finally {
      await other.close();
    }
  });
});

describe('validation: 422 before any upstream request, nothing held', () => {
  test('url and id: neither, both, another site, a malformed id', async () => {
    const u = await service.user({ scraping: 10 });
    const neither = await call('/v1/forum/post', u.token, {});
    assert.equal(neither.status, 422);
    assert.deepEqual(neither.body, {
      message: 'The given data was invalid.',
      errors: { url: ['The url field is required when id is not present.'], id: ['The id field is required when url is not present.'] },
    });
    const both = await call('/v1/forum/comment', u.token, { url: 'https://www.reddit.com/r/a/comments/p1/x/c2/', id: 'c2' });
    assert.deepEqual(both.body.errors, { url: ['The url field prohibits id from being present.'], id: ['The id field prohibits url from being present.'] });
    const elsewhere = await call('/v1/forum/post', u.token, { url: 'https://example.com/r/testsub/comments/p1/x/' });
    assert.deepEqual(elsewhere.body.errors, { url: ['The url must be a Reddit post URL.'] });
    const postUrlForComment = await call('/v1/forum/comment', u.token, { url: 'https://www.reddit.com/r/testsub/comments/p1/x/' });
    assert.deepEqual(postUrlForComment.body.errors, { url: ['The url must be a Reddit comment URL.'] });
    const notUrl = await call('/v1/forum/post', u.token, { url: 'reddit.com/comments/p1' });
    assert.deepEqual(notUrl.body.errors, { url: ['The url must be a valid URL.'] });
    const badId = await call('/v1/forum/post', u.token, { id: 't1_abc' });
    assert.deepEqual(badId.body.errors, { id: ['The id format is invalid.'] });
    assert.equal(upstream.hits.length, 0);
    assert.equal(await balance(u.id), 10);
  });

  test('listing, search and user fields', async () => {
    const u = await service.user({ scraping: 10 });
    const listingErrors = await call('/v1/forum', u.token, { subreddit: 'bad name!', sort: 'best', time_range: 'decade', limit: 101, after: 'p2' });
    assert.deepEqual(listingErrors.body.errors, {
      subreddit: ['The subreddit format is invalid.'],
      sort: ['The selected sort is invalid.'],
      time_range: ['The selected time range is invalid.'],
      limit: ['The limit must be between 1 and 100.'],
      after: ['The after format is invalid.'],
    });
    const missing = await call('/v1/forum', u.token, {});
    assert.deepEqual(missing.body.errors, { subreddit: ['The subreddit field is required.'] });
    const searchErrors = await call('/v1/forum/search', u.token, { query: 7, sort: 'rising' });
    assert.deepEqual(searchErrors.body.errors, { query: ['The query must be a string.'], sort: ['The selected sort is invalid.'] });
    const userErrors = await call('/v1/forum/user', u.token, { username: 'no spaces' });
    assert.deepEqual(userErrors.body.errors, { username: ['The username format is invalid.'] });
    assert.equal(upstream.hits.length, 0);
    assert.equal(await balance(u.id), 10);
  });

  test('a balance below 3: 403 before any upstream request', async () => {
    const u = await service.user({ scraping: 2 });
    const r = await call('/v1/forum', u.token, { subreddit: 'testsub' });
    assert.equal(r.status, 403);
    assert.equal(upstream.hits.length, 0);
    assert.equal(await balance(u.id), 2);
  });
});

describe('anonymous access (no credentials)', () => {
  test('.json paths on the public site, no token, the User-Agent and raw_json=1', async () => {
    const anonymous = await startTestService({ UPSTREAM_REDDIT_URL: `${upstream.url}/anon` });
    try {
      const u = await anonymous.user({ scraping: 10 });
      const r = await anonymous.call('POST', '/v1/forum/post', { token: u.token, body: { url: 'https://redd.it/p1' } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.response.id, 'p1');
      assert.equal(tokenHits().length, 0);
      const [hit] = apiHits();
      assert.equal(hit.path, '/anon/comments/p1.json');
      assert.equal(hit.headers.authorization, undefined);
      assert.match(hit.headers['user-agent'] ?? '', /gleaner/);
      assert.equal(hit.query.get('raw_json'), '1');
      assert.equal(await anonymous.services.ledger.balance(u.id, 'scraping'), 7);
    } finally {
      await anonymous.close();
    }
  });
});
