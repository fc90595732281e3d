/**
 * The five microblog endpoints through the real server, against a fake X on loopback (GraphQL,
 * guest-token activation and the embed source): the guest-token flow, session rotation and
 * sidelining, pagination, page-token rules, the throttle, every error, and billing.
 *
 * Tests run in order and share one session pool: the pool-state tests come last, each leaving
 * the sessions it rested or sidelined out of the later ones' way.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../support/service.ts';
import { startFakeUpstream, type FakeUpstream, type UpstreamAnswer, type UpstreamHit } from '../support/fake-upstream.ts';
import {
  addEntries, cursorEntry, itemEntry, moduleEntry, pinEntry, searchBody, syndicationBody, tombstone, tweetResult, tweetResultBody,
  userBody, userResult, userTweetsBody, type UserSpec,
} from '../support/microblog-fixtures.ts';
import { syndicationToken } from '../../src/adapters/x/syndication.ts';
import { PageTokens, userScope } from '../../src/adapters/x/page-token.ts';
import { PAGE_TOKEN_SECRET_NAME, storedSecret } from '../../src/adapters/x/secret.ts';

type Handler = (hit: UpstreamHit, account: string | null) => UpstreamAnswer;

let service: TestService;
let unconfigured: TestService;
let x: FakeUpstream;
let validGuestToken = '';
let guestActivations = 0;
let handlers: Record<string, Handler>;

const ACCOUNTS = ['tokA:csrfA', 'tokB:csrfB', 'tokC:csrfC', 'tokD:csrfD'];
const JSON_HEADERS = { 'content-type': 'application/json' };
const ok = (body: string, headers: Record<string, string> = {}): UpstreamAnswer => ({ status: 200, headers: { ...JSON_HEADERS, ...headers }, body });

const developers: UserSpec = { id: '2244994945', screen_name: 'XDevelopers', name: 'Developers', generation: '2026', nullLegacy: true, followers: 695695, following: 762, posts: 4319, blueVerified: true, description: 'The voice of the X Dev team' };
const oldTimer: UserSpec = { id: '12', screen_name: 'jack', name: 'jack', generation: 'legacy', followers: 6_000_000, following: 4000, posts: 29000, legacyVerified: true };
const hidden: UserSpec = { id: '13', screen_name: 'hidden', generation: 'legacy', protected: true };

const post = (id: string, user: UserSpec = developers) => tweetResult({ id, user });
const variables = (hit: UpstreamHit) => JSON.parse(hit.query.get('variables') ?? '{}');
const operationOf = (hit: UpstreamHit) => hit.path.split('/').at(-1) ?? '';
const accountOf = (hit: UpstreamHit) => /auth_token=(\w+)/.exec(String(hit.headers.cookie ?? ''))?.[1] ?? null;
const gqlHits = (operation: string) => x.hits.filter((hit) => hit.path.startsWith('/gql/') && operationOf(hit) === operation);

/** One timeline page per cursor: the first page, the next (older) one, and back. */
function timelinePage(cursor: string | undefined, prefix: string): unknown[] {
  if (cursor === `${prefix}-B1`) {
    return [addEntries([itemEntry(post(`${prefix}6`)), itemEntry(post(`${prefix}7`)), cursorEntry('top', `${prefix}-T2`), cursorEntry('bottom', `${prefix}-B2`)])];
  }
  // No cursor, or the top cursor of the second page: the first page again.
  return [
    addEntries([
      itemEntry(post(`${prefix}1`)),
      itemEntry(post(`${prefix}99`), { promoted: true }),
      moduleEntry('m1', [post(`${prefix}2`), post(`${prefix}3`, oldTimer)]),
      itemEntry(post(`${prefix}4`)),
      cursorEntry('top', `${prefix}-T1`),
      cursorEntry('bottom', `${prefix}-B1`),
    ]),
  ];
}

function defaultHandlers(): Record<string, Handler> {
  return {
    TweetResultByRestId: (hit) => {
      if (hit.headers['x-guest-token'] !== validGuestToken) return { status: 403, headers: JSON_HEADERS, body: '{"errors":[{"code":239,"message":"Bad guest token."}]}' };
      const id = variables(hit).tweetId;
      return ok(tweetResultBody(tweetResult({ id, user: developers, note: 'the whole note text', views: '2525462', media: [{ type: 'photo', image: 'https://pbs.twimg.com/media/p.jpg' }] })));
    },
    UserByScreenName: (hit) => {
      const name = String(variables(hit).screen_name).toLowerCase();
      const user = [developers, oldTimer, hidden].find((u) => u.screen_name.toLowerCase() === name);
      if (name === 'suspended') return ok(userBody({ __typename: 'UserUnavailable', reason: 'Suspended' }));
      return ok(userBody(user ? userResult(user) : undefined));
    },
    UserTweets: (hit) => {
      const vars = variables(hit);
      const instructions = timelinePage(vars.cursor, 'u');
      if (vars.cursor === undefined) instructions.unshift(pinEntry(post('u1000')));
      return ok(userTweetsBody(instructions));
    },
    SearchTimeline: (hit) => ok(searchBody(timelinePage(variables(hit).cursor, 's'))),
  };
}

before(async () => {
  x = await startFakeUpstream();
  x.handle((hit) => {
    if (hit.path === '/api/1.1/guest/activate.json') {
      if (hit.method !== 'POST' || !String(hit.headers.authorization).startsWith('Bearer AAAA')) return { status: 401, body: '' };
      validGuestToken = String(1_000_000 + ++guestActivations);
      return ok(JSON.stringify({ guest_token: validGuestToken }));
    }
    if (hit.path === '/syn/tweet-result') {
      const id = hit.query.get('id') ?? '';
      if (hit.query.get('token') !== syndicationToken(id)) return { status: 400, body: '' };
      if (id === '404') return { status: 404, body: '' };
      return ok(syndicationBody({ id, screen_name: 'Embedded', likes: 11, media: 'video' }));
    }
    if (hit.path.startsWith('/gql/i/api/graphql/')) {
      const handler = handlers[operationOf(hit)];
      return handler ? handler(hit, accountOf(hit)) : { status: 404, body: '' };
    }
    return { status: 404, body: 'unknown path' };
  });
  const urls = { UPSTREAM_X_URL: `${x.url}/gql`, UPSTREAM_X_API_URL: `${x.url}/api`, UPSTREAM_X_SYNDICATION_URL: `${x.url}/syn`, X_TIMEOUT_MS: '5000' };
  service = await startTestService({ ...urls, X_ACCOUNTS: ACCOUNTS.join(',') });
  unconfigured = await startTestService(urls);
});
after(async () => {
  await service?.close();
  await unconfigured?.close();
  await x?.close();
});
beforeEach(async () => {
  // A block opens X's circuit for the whole runtime (30 s at first): each test starts with the
  // circuits closed, as they are once the back-off has passed and a probe got an answer.
  await closeCircuits(service);
  await closeCircuits(unconfigured);
  x.hits.length = 0;
  handlers = defaultHandlers();
});

/** Closes X's circuits, and checks the breaker's store says so. */
async function closeCircuits(on: TestService): Promise<void> {
  const breaker = on.services.capabilities.runtime.breaker;
  for (const upstream of ['x', 'x-syndication']) await breaker.reset(upstream);
  for (let waited = 0; [...(await breaker.states()).keys()].some((upstream) => upstream.startsWith('x')); waited += 10) {
    if (waited > 2000) throw new Error("X's circuits did not close");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const call = (route: string, token: string, body: unknown, on: TestService = service) => on.call('POST', route, { token, body });
const balance = (id: number, on: TestService = service) => on.services.ledger.balance(id, 'scraping');

describe('validation (422, nothing charged, X not asked)', () => {
  test('url or id, exactly one; a post URL; a username', async () => {
    const user = await service.user({ scraping: 100 });
    assert.deepEqual((await call('/v1/mb/tweet', user.token, {})).body, { message: 'The given data was invalid.', errors: { url: ['The url field is required when id is not present.'] } });
    assert.deepEqual((await call('/v1/mb/tweet', user.token, { url: 'https://x.com/a/status/1', id: '1' })).body.errors, { id: ['The id field prohibits url from being present.'] });
    assert.deepEqual((await call('/v1/mb-legacy', user.token, { url: 'https://example.com/a/status/1' })).body.errors, { url: ['The url must be a link to a post on x.com.'] });
    assert.deepEqual((await call('/v1/mb/tweet', user.token, { url: 'not a url' })).body.errors, { url: ['The url must be a valid URL.'] });
    assert.deepEqual((await call('/v1/mb/tweet', user.token, { id: '12ab' })).body.errors, { id: ['The id must be a post id (digits only).'] });
    assert.deepEqual((await call('/v1/mb/user', user.token, { username: 'no spaces allowed' })).body.errors, { username: ['The username must be an X username (1 to 15 letters, digits or underscores).'] });
    assert.deepEqual((await call('/v1/mb/search', user.token, { product: 'people' })).body.errors, { query: ['The query field is required.'], product: ['The selected product is invalid.'] });
    const both = await call('/v1/mb/user-tweets', user.token, { username: 'XDevelopers', next_page_token: 'a', previous_page_token: 'b' });
    assert.equal(both.status, 422);
    assert.deepEqual(both.body.errors, { next_page_token: ['The next page token field prohibits previous page token from being present.'] });
    assert.equal(x.hits.length, 0);
    assert.equal(await balance(user.id), 100);
  });
});

describe('/v1/mb/tweet (guest token)', () => {
  test('activates a guest token once, reuses it, renews it when X refuses it; 3 credits each', async () => {
    const user = await service.user({ scraping: 100 });
    const before = guestActivations;
    const first = await call('/v1/mb/tweet', user.token, { url: 'https://twitter.com/XDevelopers/status/2019881223666233717?s=20' });
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.response, {
      id: '2019881223666233717',
      tweet_url: 'https://x.com/XDevelopers/status/2019881223666233717',
      text: 'the whole note text',
      like_count: 1,
      view_count: 2525462,
      source: 'Twitter Web App',
      sensitive: false,
      media: [{ type: 'photo', image_url: 'https://pbs.twimg.com/media/p.jpg', video_url: null }],
      created_at: '2026-02-06T21:09:45.000000Z',
      author: { id: '2244994945', username: 'XDevelopers', name: 'Developers' },
      reply_count: 2,
      retweet_count: 3,
      quote_count: 4,
      lang: 'en',
    });
    const second = await call('/v1/mb/tweet', user.token, { id: '42' });
    assert.equal(second.body.response.id, '42');
    assert.equal(guestActivations - before, 1, 'one activation for both calls');
    const gql = gqlHits('TweetResultByRestId');
    assert.equal(gql.length, 2);
    assert.equal(gql[0].headers['x-guest-token'], validGuestToken);
    assert.equal(gql[0].headers.cookie, undefined, 'guest calls carry no session');

    validGuestToken = 'expired'; // X stops accepting the cached token
    const third = await call('/v1/mb/tweet', user.token, { id: 43 });
    assert.equal(third.status, 200);
    assert.equal(guestActivations - before, 2, 'renewed once');
    assert.equal(await balance(user.id), 91);
  });

  test('TweetWithVisibilityResults is read', async () => {
    const user = await service.user({ scraping: 10 });
    handlers.TweetResultByRestId = (hit) => ok(tweetResultBody(tweetResult({ id: variables(hit).tweetId, user: oldTimer, limited: true })));
    const r = await call('/v1/mb/tweet', user.token, { id: '7' });
    assert.equal(r.status, 200);
    assert.equal(r.body.response.tweet_url, 'https://x.com/jack/status/7');
  });

  const failures: Array<[string, UpstreamAnswer, number]> = [
    ['a deleted post (tombstone) → 404', ok(tweetResultBody(tombstone())), 404],
    ['a post X does not have → 404', ok(tweetResultBody(undefined)), 404],
    ['a Cloudflare page → 502', { status: 403, headers: { 'content-type': 'text/html' }, body: '<!DOCTYPE html><title>Just a moment...</title>' }, 502],
    ['a 404 with an empty body (changed query id) → 502', { status: 404, body: '' }, 502],
    ['GraphQL errors without data → 502', ok('{"errors":[{"message":"Query: Unspecified"}]}'), 502],
  ];
  for (const [name, answer, status] of failures) {
    test(`${name}, not charged`, async () => {
      const user = await service.user({ scraping: 10 });
      handlers.TweetResultByRestId = () => answer;
      const r = await call('/v1/mb/tweet', user.token, { id: '1' });
      assert.equal(r.status, status);
      assert.deepEqual(r.body, { message: status === 404 ? 'Not found.' : 'The upstream service is unavailable, please retry.' });
      assert.equal(await balance(user.id), 10);
    });
  }
});

describe('/v1/mb-legacy (embed source)', () => {
  test('the embed answer as a post item, token derived from the id; 3 credits', async () => {
    const user = await service.user({ scraping: 10 });
    const r = await call('/v1/mb-legacy', user.token, { url: 'https://x.com/Embedded/status/1649191520250245121' });
    assert.equal(r.status, 200);
    assert.equal(r.body.response.id, '1649191520250245121');
    assert.equal(r.body.response.tweet_url, 'https://x.com/Embedded/status/1649191520250245121');
    assert.equal(r.body.response.like_count, 11);
    assert.equal(r.body.response.view_count, null);
    assert.equal(r.body.response.source, null);
    assert.deepEqual(r.body.response.media, [{ type: 'video', image_url: 'https://pbs.twimg.com/thumb/v.jpg', video_url: 'https://video.twimg.com/high.mp4' }]);
    assert.equal(x.hits[0].query.get('token'), syndicationToken('1649191520250245121'));
    assert.equal(await balance(user.id), 7);
  });

  test('an unknown post → 404, not charged', async () => {
    const user = await service.user({ scraping: 10 });
    const r = await call('/v1/mb-legacy', user.token, { id: '404' });
    assert.equal(r.status, 404);
    assert.equal(await balance(user.id), 10);
  });
});

describe('/v1/mb/user', () => {
  test('both schema generations; session cookies and csrf header; 3 credits', async () => {
    const user = await service.user({ scraping: 10 });
    const modern = await call('/v1/mb/user', user.token, { username: '@XDevelopers' });
    assert.equal(modern.status, 200);
    assert.deepEqual(modern.body.response, {
      id: '2244994945', username: 'XDevelopers', name: 'Developers', description: 'The voice of the X Dev team', followers_count: 695695, following_count: 762,
      posts_count: 4319, verified: true, created_at: '2013-12-14T04:35:55.000000Z', profile_image_url: 'https://pbs.twimg.com/profile_images/2244994945/a_normal.jpg',
    });
    const old = await call('/v1/mb/user', user.token, { username: 'jack' });
    assert.equal(old.body.response.followers_count, 6_000_000);
    assert.equal(old.body.response.verified, true);
    const hit = gqlHits('UserByScreenName')[0];
    const account = accountOf(hit);
    assert.ok(account);
    assert.equal(hit.headers['x-csrf-token'], account.replace('tok', 'csrf'));
    assert.match(String(hit.headers.cookie), new RegExp(`ct0=${account.replace('tok', 'csrf')}`));
    assert.equal(await balance(user.id), 4);
  });

  test('an unknown user and a suspended one → 404, not charged', async () => {
    const user = await service.user({ scraping: 10 });
    assert.equal((await call('/v1/mb/user', user.token, { username: 'nobody_here' })).status, 404);
    assert.equal((await call('/v1/mb/user', user.token, { username: 'suspended' })).status, 404);
    assert.equal(await balance(user.id), 10);
  });
});

describe('/v1/mb/user-tweets', () => {
  test('pinned first, module posts, promoted skipped; next then previous; 10 credits a page', async () => {
    const user = await service.user({ scraping: 100 });
    const first = await call('/v1/mb/user-tweets', user.token, { username: 'XDevelopers' });
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.response.map((p: any) => p.id), ['u1000', 'u1', 'u2', 'u3', 'u4']);
    assert.equal(first.body.response[3].tweet_url, 'https://x.com/jack/status/u3');
    assert.equal(first.body.pagination.previous_page_token, null);
    assert.equal(typeof first.body.pagination.next_page_token, 'string');
    assert.equal(variables(gqlHits('UserTweets')[0]).userId, '2244994945');

    const second = await call('/v1/mb/user-tweets', user.token, { username: 'xdevelopers', next_page_token: first.body.pagination.next_page_token });
    assert.equal(second.status, 200);
    assert.deepEqual(second.body.response.map((p: any) => p.id), ['u6', 'u7']);
    assert.equal(variables(gqlHits('UserTweets')[1]).cursor, 'u-B1');

    const back = await call('/v1/mb/user-tweets', user.token, { username: 'XDevelopers', previous_page_token: second.body.pagination.previous_page_token });
    assert.equal(back.status, 200);
    assert.equal(variables(gqlHits('UserTweets')[2]).cursor, 'u-T2');
    assert.deepEqual(back.body.response.map((p: any) => p.id), ['u1', 'u2', 'u3', 'u4']);
    assert.equal(await balance(user.id), 70);
  });

  test('a token of another user, a forged token, a token sent in the wrong field → 422, not charged', async () => {
    const user = await service.user({ scraping: 100 });
    const first = await call('/v1/mb/user-tweets', user.token, { username: 'XDevelopers' });
    const token = first.body.pagination.next_page_token;
    const other = await call('/v1/mb/user-tweets', user.token, { username: 'jack', next_page_token: token });
    assert.equal(other.status, 422);
    assert.deepEqual(other.body.errors, { next_page_token: ['The next page token does not belong to this user.'] });
    const [payload, mac] = token.split('.');
    const forged = `${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), c: 'u-B9' })).toString('base64url')}.${mac}`;
    assert.deepEqual((await call('/v1/mb/user-tweets', user.token, { username: 'XDevelopers', next_page_token: forged })).body.errors, { next_page_token: ['The next page token is invalid.'] });
    assert.deepEqual((await call('/v1/mb/user-tweets', user.token, { username: 'XDevelopers', previous_page_token: token })).body.errors, { previous_page_token: ['The previous page token is invalid.'] });
    assert.equal(await balance(user.id), 90);
  });

  test('the signing secret is kept in the database: another process reading it accepts the tokens', async () => {
    const user = await service.user({ scraping: 10 });
    const token = (await call('/v1/mb/user-tweets', user.token, { username: 'XDevelopers' })).body.pagination.next_page_token;
    const rows = await service.services.db.query<{ name: string }>('SELECT name FROM service_secrets');
    assert.deepEqual(rows.map((r) => r.name), [PAGE_TOKEN_SECRET_NAME]);
    const elsewhere = new PageTokens(() => storedSecret(service.services.db, PAGE_TOKEN_SECRET_NAME));
    assert.deepEqual(await elsewhere.verify(token, userScope('XDevelopers'), 'next'), { ok: true, cursor: 'u-B1' });
  });

  test('a protected account\'s posts, an unknown user → 404, not charged', async () => {
    const user = await service.user({ scraping: 100 });
    assert.equal((await call('/v1/mb/user-tweets', user.token, { username: 'hidden' })).status, 404);
    assert.equal((await call('/v1/mb/user-tweets', user.token, { username: 'nobody_here' })).status, 404);
    assert.equal(gqlHits('UserTweets').length, 0);
    assert.equal(await balance(user.id), 100);
  });
});

describe('/v1/mb/search', () => {
  test('a page of results and a round trip; 10 credits a page; a token reused for another query → 422', async () => {
    const user = await service.user({ scraping: 100 });
    const first = await call('/v1/mb/search', user.token, { query: 'from:XDevelopers api' });
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.response.map((p: any) => p.id), ['s1', 's2', 's3', 's4']);
    const searched = variables(gqlHits('SearchTimeline')[0]);
    assert.equal(searched.rawQuery, 'from:XDevelopers api');
    assert.equal(searched.product, 'Latest');
    const next = await call('/v1/mb/search', user.token, { query: 'from:XDevelopers api', next_page_token: first.body.pagination.next_page_token });
    assert.deepEqual(next.body.response.map((p: any) => p.id), ['s6', 's7']);
    const previous = await call('/v1/mb/search', user.token, { query: 'from:XDevelopers api', previous_page_token: next.body.pagination.previous_page_token });
    assert.deepEqual(previous.body.response.map((p: any) => p.id), ['s1', 's2', 's3', 's4']);
    const reused = await call('/v1/mb/search', user.token, { query: 'something else', next_page_token: first.body.pagination.next_page_token });
    assert.equal(reused.status, 422);
    assert.deepEqual(reused.body.errors, { next_page_token: ['The next page token does not belong to this query.'] });
    const otherProduct = await call('/v1/mb/search', user.token, { query: 'from:XDevelopers api', product: 'top', next_page_token: first.body.pagination.next_page_token });
    assert.equal(otherProduct.status, 422);
    assert.equal(await balance(user.id), 70);
  });

  test('the 61st request within a minute → 429 Too Many Attempts., with the Laravel headers', async () => {
    const user = await service.user({ scraping: 10 });
    for (let i = 1; i <= 60; i++) {
      const r = await call('/v1/mb/search', user.token, {});
      assert.equal(r.status, 422);
      assert.equal(r.headers.get('x-ratelimit-remaining'), String(60 - i));
    }
    const limited = await call('/v1/mb/search', user.token, { query: 'q' });
    assert.equal(limited.status, 429);
    assert.deepEqual(limited.body, { message: 'Too Many Attempts.' });
    assert.equal(limited.headers.get('x-ratelimit-limit'), '60');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.equal(x.hits.length, 0);
    assert.equal(await balance(user.id), 10);
  });
});

describe('without X_ACCOUNTS', () => {
  test('search, user and user-tweets answer 503, not charged; tweet and legacy still work', async () => {
    const user = await unconfigured.user({ scraping: 100 });
    for (const [route, body] of [['/v1/mb/search', { query: 'q' }], ['/v1/mb/user', { username: 'jack' }], ['/v1/mb/user-tweets', { username: 'jack' }]] as const) {
      const r = await call(route, user.token, body, unconfigured);
      assert.equal(r.status, 503, route);
      assert.deepEqual(r.body, { message: 'This endpoint is not configured.' });
    }
    assert.equal(await balance(user.id, unconfigured), 100);
    assert.equal((await call('/v1/mb/tweet', user.token, { id: '5' }, unconfigured)).status, 200);
    assert.equal((await call('/v1/mb-legacy', user.token, { id: '5' }, unconfigured)).status, 200);
    assert.equal(await balance(user.id, unconfigured), 94);
  });
});

describe('the session pool (these tests change its state: they run last)', () => {
  test('a session answered 429 rests for that operation until its reset; the call moves on', async () => {
    const user = await service.user({ scraping: 100 });
    const reset = String(Math.floor(Date.now() / 1000) + 3600);
    const defaults = defaultHandlers();
    handlers.UserByScreenName = (hit, account) =>
      account === 'tokA' ? { status: 429, headers: { ...JSON_HEADERS, 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': reset }, body: '{"errors":[{"code":88,"message":"Rate limit exceeded"}]}' } : defaults.UserByScreenName(hit, account);
    for (let i = 0; i < 4; i++) assert.equal((await call('/v1/mb/user', user.token, { username: 'jack' })).status, 200);
    const used = gqlHits('UserByScreenName').map(accountOf);
    assert.equal(used.filter((a) => a === 'tokA').length, 1, 'asked once, then left alone');
    x.hits.length = 0;
    // Other operations still use it.
    for (let i = 0; i < 4; i++) await call('/v1/mb/search', user.token, { query: 'q' });
    assert.ok(gqlHits('SearchTimeline').map(accountOf).includes('tokA'));
    assert.equal(await balance(user.id), 100 - 4 * 3 - 4 * 10);
  });

  test('x-rate-limit-remaining 0 on a good answer rests the session after that answer', async () => {
    const user = await service.user({ scraping: 200 });
    const reset = String(Math.floor(Date.now() / 1000) + 3600);
    const defaults = defaultHandlers();
    handlers.SearchTimeline = (hit, account) => {
      const answer = defaults.SearchTimeline(hit, account);
      return account === 'tokB' ? { ...answer, headers: { ...answer.headers, 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': reset } } : answer;
    };
    for (let i = 0; i < 8; i++) assert.equal((await call('/v1/mb/search', user.token, { query: 'q' })).status, 200);
    assert.equal(gqlHits('SearchTimeline').filter((hit) => accountOf(hit) === 'tokB').length, 1);
  });

  test('a session refused (401, or 403 code 326) is sidelined for every operation; the call succeeds with another', async () => {
    const user = await service.user({ scraping: 200 });
    const defaults = defaultHandlers();
    const refuse: Handler = (hit, account) =>
      account === 'tokC' ? { status: 401, headers: JSON_HEADERS, body: '{"errors":[{"code":32,"message":"Could not authenticate you."}]}' }
        : account === 'tokD' ? { status: 403, headers: JSON_HEADERS, body: '{"errors":[{"code":326,"message":"To protect our users from spam..."}]}' }
        : defaults[operationOf(hit)](hit, account);
    handlers.UserTweets = refuse;
    handlers.UserByScreenName = refuse;
    handlers.SearchTimeline = refuse;
    for (let i = 0; i < 4; i++) assert.equal((await call('/v1/mb/user-tweets', user.token, { username: 'jack' })).status, 200);
    const refusedCalls = x.hits.filter((hit) => ['tokC', 'tokD'].includes(accountOf(hit) ?? ''));
    assert.ok(refusedCalls.length <= 2, `each refused session is asked at most once (${refusedCalls.length})`);
    x.hits.length = 0;
    for (let i = 0; i < 4; i++) assert.equal((await call('/v1/mb/search', user.token, { query: 'q' })).status, 200);
    assert.deepEqual(x.hits.filter((hit) => ['tokC', 'tokD'].includes(accountOf(hit) ?? '')), []);
    assert.equal(await balance(user.id), 200 - 8 * 10);
  });

  test('every session rate-limited (429 / code 88) → 502, not charged', async () => {
    const user = await service.user({ scraping: 100 });
    handlers.UserByScreenName = () => ({ status: 429, headers: JSON_HEADERS, body: '{"errors":[{"code":88,"message":"Rate limit exceeded"}]}' });
    const r = await call('/v1/mb/user', user.token, { username: 'jack' });
    assert.equal(r.status, 502);
    assert.deepEqual(r.body, { message: 'The upstream service is unavailable, please retry.' });
    // The block opened X's circuit; closed again, the call reaches the pool, which has no session left.
    await closeCircuits(service);
    const again = await call('/v1/mb/user-tweets', user.token, { username: 'jack' });
    assert.equal(again.status, 502);
    assert.equal(await balance(user.id), 100);
  });

  test('search upstream failures: HTML, changed query id, GraphQL errors → 502, not charged', async () => {
    const user = await service.user({ scraping: 100 });
    for (const answer of [
      { status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body>Attention Required! | Cloudflare</body></html>' },
      { status: 404, body: '' },
      ok('{"errors":[{"message":"Bad request"}]}'),
    ]) {
      handlers.SearchTimeline = () => answer;
      // Each answer judged on its own: the previous one's block must not have suspended X.
      await closeCircuits(service);
      const asked = gqlHits('SearchTimeline').length;
      assert.equal((await call('/v1/mb/search', user.token, { query: 'q' })).status, 502);
      assert.ok(gqlHits('SearchTimeline').length > asked, 'X was asked');
    }
    assert.equal(await balance(user.id), 100);
  });
});
