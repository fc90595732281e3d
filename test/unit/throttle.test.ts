/**
 * Fixed-window throttles with Laravel's ThrottleRequests headers, on the in-memory store and on
 * a real Redis (REDIS_URL semantics: one counter shared by every process).
 * Redis is taken from TEST_REDIS_URL, else redis://127.0.0.1:6379; its tests are skipped with a
 * message when it does not answer.
 */
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { MemoryThrottleStore, RedisThrottleStore, throttle, type ThrottleStore } from '../../src/throttle/limiter.ts';

const REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

function connectRedis(): Redis {
  return new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 1_000, maxRetriesPerRequest: 1, retryStrategy: () => null });
}

async function redisSkipReason(): Promise<string | false> {
  const probe = connectRedis();
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
    return false;
  } catch (error) {
    return `Redis is not reachable at ${REDIS_URL} (${(error as Error).message}); set TEST_REDIS_URL or start Redis to run these tests`;
  } finally {
    probe.disconnect();
  }
}

/** The semantics every store must have; `makeStore` returns a store on a fresh key space. */
function throttleSemantics(makeStore: () => ThrottleStore) {
  test('every allowed answer carries X-RateLimit-Limit and a decreasing X-RateLimit-Remaining', async () => {
    const store = makeStore();
    for (let i = 1; i <= 3; i++) {
      const decision = await throttle(store, 'k', 3, 60);
      assert.equal(decision.allowed, true);
      assert.deepEqual(decision.headers, { 'X-RateLimit-Limit': '3', 'X-RateLimit-Remaining': String(3 - i) });
    }
  });

  test('the (max+1)th hit is refused with Retry-After, X-RateLimit-Reset and Remaining 0', async () => {
    const store = makeStore();
    for (let i = 0; i < 2; i++) assert.equal((await throttle(store, 'k', 2, 60)).allowed, true);
    const before = Date.now();
    const refused = await throttle(store, 'k', 2, 60);
    assert.equal(refused.allowed, false);
    assert.equal(refused.headers['X-RateLimit-Limit'], '2');
    assert.equal(refused.headers['X-RateLimit-Remaining'], '0');
    const retryAfter = Number(refused.headers['Retry-After']);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${refused.headers['Retry-After']}`);
    const reset = Number(refused.headers['X-RateLimit-Reset']);
    assert.ok(Number.isInteger(reset), `X-RateLimit-Reset ${refused.headers['X-RateLimit-Reset']}`);
    assert.ok(reset > before / 1000, 'X-RateLimit-Reset is in the future, in epoch seconds');
    assert.ok(reset <= Math.ceil(Date.now() / 1000) + 60, 'X-RateLimit-Reset is within the window');
    // Still refused afterwards: the window did not move.
    const again = await throttle(store, 'k', 2, 60);
    assert.equal(again.allowed, false);
    assert.equal(again.headers['X-RateLimit-Remaining'], '0');
  });

  test('a new window starts once the old one ends', async () => {
    const store = makeStore();
    assert.equal((await throttle(store, 'k', 1, 1)).allowed, true);
    const refused = await throttle(store, 'k', 1, 1);
    assert.equal(refused.allowed, false);
    assert.equal(refused.headers['Retry-After'], '1');
    await sleep(1_100);
    const fresh = await throttle(store, 'k', 1, 1);
    assert.equal(fresh.allowed, true);
    assert.equal(fresh.headers['X-RateLimit-Remaining'], '0');
  });

  test('keys are counted separately', async () => {
    const store = makeStore();
    assert.equal((await throttle(store, 'token:1', 1, 60)).allowed, true);
    assert.equal((await throttle(store, 'token:1', 1, 60)).allowed, false);
    const other = await throttle(store, 'token:2', 1, 60);
    assert.equal(other.allowed, true);
    assert.equal(other.headers['X-RateLimit-Remaining'], '0');
    assert.equal((await store.hit('token:3', 60_000)).count, 1);
  });

  test('hit reports the count and the time left in the window', async () => {
    const store = makeStore();
    const first = await store.hit('k', 5_000);
    const second = await store.hit('k', 5_000);
    assert.deepEqual([first.count, second.count], [1, 2]);
    assert.ok(first.resetInMs > 0 && first.resetInMs <= 5_000, `resetInMs ${first.resetInMs}`);
    assert.ok(second.resetInMs <= first.resetInMs, 'the second hit does not extend the window');
  });
}

describe('MemoryThrottleStore', () => {
  const stores: MemoryThrottleStore[] = [];
  after(async () => {
    for (const store of stores) await store.close();
  });
  throttleSemantics(() => {
    const store = new MemoryThrottleStore();
    stores.push(store);
    return store;
  });

  test('two memory stores do not share counters (one process only)', async () => {
    const a = new MemoryThrottleStore();
    const b = new MemoryThrottleStore();
    stores.push(a, b);
    await a.hit('k', 60_000);
    assert.equal((await b.hit('k', 60_000)).count, 1);
  });
});

const redisSkip = await redisSkipReason();

describe('RedisThrottleStore', { skip: redisSkip }, () => {
  const connections: Redis[] = [];
  const prefixes: string[] = [];
  const connect = () => {
    const redis = connectRedis();
    connections.push(redis);
    return redis;
  };
  const freshPrefix = () => {
    const prefix = `gleaner-test:${randomBytes(6).toString('hex')}:`;
    prefixes.push(prefix);
    return prefix;
  };

  after(async () => {
    const cleaner = connections[0];
    if (cleaner) {
      for (const prefix of prefixes) {
        const keys = await cleaner.keys(`${prefix}*`);
        if (keys.length) await cleaner.del(...keys);
      }
    }
    await Promise.all(connections.map((c) => c.quit().catch(() => c.disconnect())));
  });

  throttleSemantics(() => new RedisThrottleStore(connect(), freshPrefix()));

  test('two stores on two connections share one counter', async () => {
    const prefix = freshPrefix();
    const a = new RedisThrottleStore(connect(), prefix);
    const b = new RedisThrottleStore(connect(), prefix);
    assert.equal((await throttle(a, 'shared', 2, 60)).headers['X-RateLimit-Remaining'], '1');
    assert.equal((await throttle(b, 'shared', 2, 60)).headers['X-RateLimit-Remaining'], '0');
    const refused = await throttle(a, 'shared', 2, 60);
    assert.equal(refused.allowed, false);
    assert.ok(Number(refused.headers['Retry-After']) >= 1);
  });

  test('concurrent hits from two connections are counted atomically', async () => {
    const prefix = freshPrefix();
    const a = new RedisThrottleStore(connect(), prefix);
    const b = new RedisThrottleStore(connect(), prefix);
    const hits = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).hit('burst', 60_000)));
    assert.deepEqual(
      hits.map((h) => h.count).sort((x, y) => x - y),
      Array.from({ length: 40 }, (_, i) => i + 1),
    );
  });

  test('different prefixes do not share counters', async () => {
    const redis = connect();
    const a = new RedisThrottleStore(redis, freshPrefix());
    const b = new RedisThrottleStore(redis, freshPrefix());
    await a.hit('k', 60_000);
    assert.equal((await b.hit('k', 60_000)).count, 1);
  });

  test('the counter key expires with the window, even one left without a TTL', async () => {
    const redis = connect();
    const prefix = freshPrefix();
    const store = new RedisThrottleStore(redis, prefix);
    await store.hit('ttl', 30_000);
    const ttl = await redis.pttl(`${prefix}ttl`);
    assert.ok(ttl > 0 && ttl <= 30_000, `PTTL ${ttl}`);
    // A counter that lost its expiry (written by hand, or an interrupted older version) gets one back.
    await redis.set(`${prefix}stuck`, '5');
    const hit = await store.hit('stuck', 30_000);
    assert.equal(hit.count, 6);
    assert.ok(hit.resetInMs > 0 && hit.resetInMs <= 30_000, `resetInMs ${hit.resetInMs}`);
    assert.ok((await redis.pttl(`${prefix}stuck`)) > 0);
  });
});
