/**
 * The Redis leases behind the per-user pool bound across replicas (src/throttle/pool-leases.ts):
 * at most `limit` leases per user and pool whoever takes them, a waiter served when one is
 * released or gives up with its signal, and the leases of a replica that died gone on their own.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { RedisPoolLeases } from '../../src/throttle/pool-leases.ts';

const redisUrl = process.env.TEST_REDIS_URL;
const skip = !redisUrl ? 'set TEST_REDIS_URL (a Redis) to run the scaled tier' : false;

describe('pool leases in Redis', { skip }, () => {
  const prefix = `gleaner-leases-${Math.random().toString(36).slice(2)}:`;
  let one: Redis;
  let two: Redis;

  before(async () => {
    one = new Redis(redisUrl!, { lazyConnect: true, maxRetriesPerRequest: 1 });
    two = new Redis(redisUrl!, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await Promise.all([one.connect(), two.connect()]);
  });

  after(async () => {
    const keys = await one.keys(`${prefix}*`);
    if (keys.length > 0) await one.del(...keys);
    one.disconnect();
    two.disconnect();
  });

  test('two replicas share the bound: the third lease waits for a release', async () => {
    const first = new RedisPoolLeases(one, { prefix, pollMs: 10 });
    const second = new RedisPoolLeases(two, { prefix, pollMs: 10 });
    const a = await first.acquire('web', '7', 2);
    const b = await second.acquire('web', '7', 2);
    assert.equal(await first.held('web', '7'), 2);
    let third: (() => void) | undefined;
    const waiting = first.acquire('web', '7', 2).then((release) => (third = release));
    // Another user and another pool are counted apart.
    const other = await second.acquire('web', '8', 2);
    const pdf = await second.acquire('pdf', '7', 2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(third, undefined, 'no third lease while two are held');
    b();
    await waiting;
    assert.equal(await first.held('web', '7'), 2);
    a();
    third!();
    other();
    pdf();
    await new Promise((resolve) => setTimeout(resolve, 50)); // the removals are sent, not awaited
    assert.equal(await first.held('web', '7'), 0);
  });

  test('a waiter that gives up rejects with its reason and takes no lease', async () => {
    const leases = new RedisPoolLeases(one, { prefix, pollMs: 10 });
    const held = await leases.acquire('browser', '9', 1);
    const controller = new AbortController();
    const waiting = leases.acquire('browser', '9', 1, controller.signal);
    const reason = new Error('deadline');
    setTimeout(() => controller.abort(reason), 50);
    await assert.rejects(waiting, (error) => error === reason);
    held();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(await leases.held('browser', '9'), 0);
  });

  test('a replica that dies leaves leases that expire after their time to live', async () => {
    const dying = new Redis(redisUrl!, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    await dying.connect();
    const gone = new RedisPoolLeases(dying, { prefix, ttlMs: 300 });
    await gone.acquire('ocr', '11', 1);
    const survivor = new RedisPoolLeases(one, { prefix, pollMs: 20 });
    assert.equal(await survivor.held('ocr', '11'), 1);
    dying.disconnect(); // its renewals fail from now on, as a killed process's would stop
    // Taken once the dead replica's lease has expired (it would wait for ever otherwise).
    const release = await survivor.acquire('ocr', '11', 1);
    assert.equal(await survivor.held('ocr', '11'), 1);
    release();
  });
});
