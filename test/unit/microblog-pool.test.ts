/** The session pool, guest tokens, page tokens, the configuration file and X_ACCOUNTS. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { AccountPool, MemoryPoolState, SIDELINE_MS } from '../../src/adapters/x/accounts.ts';
import { GuestTokens, GUEST_TOKEN_MAX_AGE_MS } from '../../src/adapters/x/guest-token.ts';
import { PageTokens, searchScope, userScope } from '../../src/adapters/x/page-token.ts';
import { DEFAULT_X_CONFIG_FILE, parseXConfig } from '../../src/adapters/x/config.ts';
import { graphqlRequest, parseSessions, withGuestToken, withSession } from '../../src/adapters/x/requests.ts';
import { xCapability } from '../../src/adapters/x/capability.ts';
import { envReader } from '../../src/core/env.ts';

const sessions = parseSessions(['aaa1:ccc1', 'aaa2:ccc2', 'aaa3:ccc3']);

describe('account pool', () => {
  test('spreads calls across sessions in turn', async () => {
    const pool = new AccountPool(sessions, new MemoryPoolState());
    const picked = [];
    for (let i = 0; i < 6; i++) picked.push((await pool.acquire('UserTweets'))?.index);
    assert.deepEqual(picked, [0, 1, 2, 0, 1, 2]);
  });

  test('a rate-limited session rests for that operation only, until the reset', async () => {
    let now = 1_000_000;
    const pool = new AccountPool(sessions, new MemoryPoolState(() => now), () => now);
    await pool.limit(pool.accounts[0], 'SearchTimeline', now + 60_000);
    await pool.limit(pool.accounts[1], 'SearchTimeline', now + 60_000);
    for (let i = 0; i < 3; i++) assert.equal((await pool.acquire('SearchTimeline'))?.index, 2);
    const others = new Set<number | undefined>();
    for (let i = 0; i < 3; i++) others.add((await pool.acquire('UserTweets'))?.index);
    assert.deepEqual([...others].sort(), [0, 1, 2]);
    now += 60_001;
    const after = new Set<number | undefined>();
    for (let i = 0; i < 3; i++) after.add((await pool.acquire('SearchTimeline'))?.index);
    assert.equal(after.size, 3);
  });

  test('a sidelined session is skipped for every operation; none left → null', async () => {
    let now = 0;
    const pool = new AccountPool(sessions.slice(0, 2), new MemoryPoolState(() => now), () => now);
    await pool.sideline(pool.accounts[0], 'refused');
    assert.equal((await pool.acquire('UserByScreenName'))?.index, 1);
    assert.equal(await pool.acquire('UserByScreenName', new Set([1])), null);
    now += SIDELINE_MS + 1;
    assert.equal((await pool.acquire('UserByScreenName', new Set([1])))?.index, 0);
  });

  test('logs name a session by position and hash, never by cookie', () => {
    const pool = new AccountPool(sessions, new MemoryPoolState());
    const name = AccountPool.describe(pool.accounts[1]);
    assert.match(name, /^#2 \([0-9a-f]{10}\)$/);
    assert.ok(!name.includes('aaa2') && !name.includes('ccc2'));
  });

  test('X_ACCOUNTS pairs', () => {
    assert.deepEqual(parseSessions(['tok:csrf']), [{ authToken: 'tok', ct0: 'csrf' }]);
    assert.throws(() => parseSessions(['ok:ok', 'missingcolon']), /entry 2/);
    assert.throws(() => parseSessions(['a:b:c']), /entry 1/);
  });
});

describe('guest tokens', () => {
  test('one activation for concurrent callers; renewed after a refusal or with age', async () => {
    let activations = 0;
    let now = 0;
    const tokens = new GuestTokens(async () => `g${++activations}`, () => now);
    assert.deepEqual(await Promise.all([tokens.get(), tokens.get(), tokens.get()]), ['g1', 'g1', 'g1']);
    tokens.refuse('g0');
    assert.equal(await tokens.get(), 'g1');
    tokens.refuse('g1');
    assert.equal(await tokens.get(), 'g2');
    now += GUEST_TOKEN_MAX_AGE_MS;
    assert.equal(await tokens.get(), 'g3');
  });

  test('a failed activation is not remembered', async () => {
    let fail = true;
    const tokens = new GuestTokens(async () => {
      if (fail) throw new Error('no');
      return 'ok';
    });
    await assert.rejects(tokens.get(), /no/);
    fail = false;
    assert.equal(await tokens.get(), 'ok');
  });
});

describe('page tokens', () => {
  const tokens = new PageTokens(async () => Buffer.from('k'.repeat(32)));

  test('round trip, bound to scope and direction', async () => {
    const scope = searchScope('cats', 'latest');
    const token = await tokens.sign('DAABCgABGT', scope, 'next');
    assert.deepEqual(await tokens.verify(token, scope, 'next'), { ok: true, cursor: 'DAABCgABGT' });
    assert.deepEqual(await tokens.verify(token, searchScope('dogs', 'latest'), 'next'), { ok: false, reason: 'other_scope' });
    assert.deepEqual(await tokens.verify(token, searchScope('cats', 'top'), 'next'), { ok: false, reason: 'other_scope' });
    assert.deepEqual(await tokens.verify(token, scope, 'previous'), { ok: false, reason: 'invalid' });
    assert.ok(!Buffer.from(token.split('.')[0], 'base64url').toString().includes('cats'), 'the query is not readable in the token');
  });

  test('forged, tampered and foreign-key tokens are invalid', async () => {
    const scope = userScope('Someone');
    assert.equal(scope, userScope('someone'));
    const token = await tokens.sign('C', scope, 'next');
    const [payload, mac] = token.split('.');
    const forgedPayload = Buffer.from(JSON.stringify({ c: 'OTHER', s: JSON.parse(Buffer.from(payload, 'base64url').toString()).s, d: 'next' })).toString('base64url');
    assert.deepEqual(await tokens.verify(`${forgedPayload}.${mac}`, scope, 'next'), { ok: false, reason: 'invalid' });
    assert.deepEqual(await tokens.verify('garbage', scope, 'next'), { ok: false, reason: 'invalid' });
    const other = new PageTokens(async () => Buffer.from('z'.repeat(32)));
    assert.deepEqual(await other.verify(token, scope, 'next'), { ok: false, reason: 'invalid' });
  });
});

describe('configuration data file', () => {
  const shipped = JSON.parse(readFileSync(DEFAULT_X_CONFIG_FILE, 'utf8'));

  test('the shipped file is valid and names every operation', () => {
    const config = parseXConfig(shipped);
    assert.deepEqual(Object.keys(config.operations).sort(), ['SearchTimeline', 'TweetResultByRestId', 'UserByScreenName', 'UserTweets']);
    assert.equal(config.operations.UserTweets.features.view_counts_everywhere_api_enabled, true);
  });

  test('bad entries are named', () => {
    assert.throws(() => parseXConfig({ ...shipped, bearerToken: '' }), /bearerToken/);
    assert.throws(() => parseXConfig({ ...shipped, operations: { ...shipped.operations, UserTweets: { ...shipped.operations.UserTweets, queryId: 'x y' } } }), /UserTweets\.queryId/);
    assert.throws(() => parseXConfig({ ...shipped, operations: { ...shipped.operations, SearchTimeline: { ...shipped.operations.SearchTimeline, features: 'nope' } } }), /unknown feature set "nope"/);
  });

  test('GraphQL requests: query id path, JSON parameters, session cookies and csrf header', () => {
    const config = parseXConfig(shipped);
    const bare = graphqlRequest(config, 'https://x.com', 'UserTweets', { userId: '5', cursor: 'C' });
    // The request as built carries no credential: the client's interceptors add one.
    assert.equal(bare.headers.cookie, undefined);
    assert.equal(bare.headers['x-csrf-token'], undefined);
    assert.equal(bare.headers['x-guest-token'], undefined);
    const request = withSession(bare, { authToken: 'tok', ct0: 'csrf' });
    assert.equal(request.url, bare.url);
    const url = new URL(request.url);
    assert.equal(url.pathname, `/i/api/graphql/${config.operations.UserTweets.queryId}/UserTweets`);
    const variables = JSON.parse(url.searchParams.get('variables') ?? '{}');
    assert.equal(variables.userId, '5');
    assert.equal(variables.cursor, 'C');
    assert.equal(variables.count, 20);
    assert.deepEqual(JSON.parse(url.searchParams.get('features') ?? '{}'), config.operations.UserTweets.features);
    assert.equal(request.headers.cookie, 'auth_token=tok; ct0=csrf');
    assert.equal(request.headers['x-csrf-token'], 'csrf');
    assert.equal(request.headers.authorization, `Bearer ${config.bearerToken}`);
    const guest = withGuestToken(graphqlRequest(config, 'https://x.com', 'TweetResultByRestId', { tweetId: '1' }), '123');
    assert.equal(guest.headers['x-guest-token'], '123');
    assert.equal(guest.headers.cookie, undefined);
  });
});

describe('settings', () => {
  const settings = (env: Record<string, string>) => envReader(env).read((reader) => xCapability.settings(reader));

  test('defaults: X\'s own hosts, no sessions, the shipped configuration', () => {
    const read = settings({});
    assert.deepEqual(read.baseUrls, { graphql: 'https://x.com', api: 'https://api.x.com', syndication: 'https://cdn.syndication.twimg.com' });
    assert.deepEqual(read.sessions, []);
    assert.equal(read.pageTokenSecret, undefined);
    assert.equal(read.timeoutMs, 15_000);
  });

  test('a bad value stops the start naming its variable', () => {
    const variableOf = (env: Record<string, string>) => {
      try {
        settings(env);
      } catch (error) {
        return (error as { variable?: string }).variable;
      }
      return 'accepted';
    };
    assert.equal(variableOf({ X_ACCOUNTS: 'tok:csrf,broken' }), 'X_ACCOUNTS');
    assert.equal(variableOf({ X_CONFIG_FILE: '/nonexistent/x-config.json' }), 'X_CONFIG_FILE');
    assert.equal(variableOf({ PAGE_TOKEN_SECRET: 'short' }), 'PAGE_TOKEN_SECRET');
    assert.equal(variableOf({ UPSTREAM_X_URL: 'ftp://x.com' }), 'UPSTREAM_X_URL');
    assert.equal(variableOf({ X_ACCOUNTS: 'tok:csrf', PAGE_TOKEN_SECRET: 'x'.repeat(32) }), 'accepted');
  });
});
