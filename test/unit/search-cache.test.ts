/**
 * The search result cache: the in-process LRU store with expiry, and the Redis store (against a
 * double, and against a real Redis from TEST_REDIS_URL, else redis://127.0.0.1:6379; those
 * tests are skipped with a message when it does not answer).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { MemorySearchCache, RedisSearchCache, searchCacheKey } from '../../src/adapters/search/cache.ts';
import type { CachedSearch, RedisStringClient } from '../../src/adapters/search/cache.ts';

const value = (label: string): CachedSearch => ({
  engine: 'bing',
  results: [{ title: `${label} title`, description: 'd', meta_data: 'm', url: `https://${label}.example/` }],
});

describe('searchCacheKey', () => {
  const base = { query: 'q', country: 'us', language: 'en' as const, page: 1, perPage: 10 };

  test('is stable for equal parameters and differs when any parameter differs', () => {
    assert.equal(searchCacheKey(base), searchCacheKey({ ...base }));
    const variants = [
      { query: 'Q' },
      { country: 'gb' },
      { language: 'de' as const },
      { page: 2 },
      { perPage: 20 },
      { timeRange: 'day' as const },
    ];
    const keys = new Set([searchCacheKey(base), ...variants.map((variant) => searchCacheKey({ ...base, ...variant }))]);
    assert.equal(keys.size, variants.length + 1);
  });

  test('cannot be confused by separators inside the query', () => {
    assert.notEqual(searchCacheKey({ ...base, query: 'a","us' }), searchCacheKey({ ...base, query: 'a', country: 'us' }));
  });
});

describe('MemorySearchCache', () => {
  test('returns what was stored until the TTL passes', async () => {
    let now = 1_000_000;
    const cache = new MemorySearchCache({ now: () => now });
    await cache.set('k', value('a'), 60);
    assert.deepEqual(await cache.get('k'), value('a'));
    now += 59_999;
    assert.deepEqual(await cache.get('k'), value('a'));
    now += 1;
    assert.equal(await cache.get('k'), undefined);
    assert.equal(cache.size, 0);
  });

  test('evicts the least recently used entry beyond maxEntries', async () => {
    const cache = new MemorySearchCache({ maxEntries: 2 });
    await cache.set('a', value('a'), 60);
    await cache.set('b', value('b'), 60);
    await cache.get('a');
    await cache.set('c', value('c'), 60);
    assert.deepEqual(await cache.get('a'), value('a'));
    assert.equal(await cache.get('b'), undefined);
    assert.deepEqual(await cache.get('c'), value('c'));
  });

  test('hands out copies: editing a returned value does not change the cache', async () => {
    const cache = new MemorySearchCache();
    const stored = value('a');
    await cache.set('k', stored, 60);
    stored.results[0].title = 'edited before';
    const first = await cache.get('k');
    first!.results[0].title = 'edited after';
    assert.equal((await cache.get('k'))!.results[0].title, 'a title');
  });

  test('a TTL of 0 stores nothing; maxEntries must be positive', async () => {
    const cache = new MemorySearchCache();
    await cache.set('k', value('a'), 0);
    assert.equal(await cache.get('k'), undefined);
    assert.throws(() => new MemorySearchCache({ maxEntries: 0 }), RangeError);
  });
});

describe('RedisSearchCache on a double', () => {
  function double() {
    const store = new Map<string, string>();
    const sets: unknown[][] = [];
    const client: RedisStringClient = {
      get: async (key) => store.get(key) ?? null,
      set: async (key, raw, mode, seconds) => {
        sets.push([key, mode, seconds]);
        store.set(key, raw);
        return 'OK';
      },
    };
    return { client, store, sets };
  }

  test('stores JSON under the prefix with an EX expiry and reads it back', async () => {
    const { client, store, sets } = double();
    const cache = new RedisSearchCache(client, { prefix: 'test:' });
    await cache.set('k', value('a'), 90);
    assert.deepEqual(sets, [['test:k', 'EX', 90]]);
    assert.deepEqual(JSON.parse(store.get('test:k')!), value('a'));
    assert.deepEqual(await cache.get('k'), value('a'));
    assert.equal(await cache.get('missing'), undefined);
  });

  test('a corrupt or foreign value reads as a miss', async () => {
    const { client, store } = double();
    const cache = new RedisSearchCache(client, { prefix: '' });
    store.set('bad', '{not json');
    store.set('foreign', '{"hello":1}');
    assert.equal(await cache.get('bad'), undefined);
    assert.equal(await cache.get('foreign'), undefined);
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
    return `Redis is not reachable at ${REDIS_URL} (${(error as Error).message}); set TEST_REDIS_URL or start Redis to run these tests`;
  } finally {
    probe.disconnect();
  }
}

describe('RedisSearchCache on Redis', async () => {
  const skip = await redisSkipReason();
  const redis = skip ? undefined : new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const prefix = `gleaner-test:${randomBytes(6).toString('hex')}:`;
  after(async () => {
    if (!redis) return;
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  test('round-trips a value and lets Redis expire it', { skip }, async () => {
    const cache = new RedisSearchCache(redis!, { prefix });
    await cache.set('k', value('a'), 30);
    assert.deepEqual(await cache.get('k'), value('a'));
    const ttl = await redis!.ttl(`${prefix}k`);
    assert.ok(ttl > 0 && ttl <= 30, `ttl ${ttl}`);
  });

  test('two stores on the same Redis share entries', { skip }, async () => {
    const second = redis!.duplicate();
    try {
      const writer = new RedisSearchCache(redis!, { prefix });
      const reader = new RedisSearchCache(second, { prefix });
      await writer.set('shared', value('b'), 30);
      assert.deepEqual(await reader.get('shared'), value('b'));
    } finally {
      second.disconnect();
    }
  });
});
