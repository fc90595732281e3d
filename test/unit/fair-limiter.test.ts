import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultPerTenant, FairLimiter, tenantKey, SYSTEM_TENANT, type TenantLeases } from '../../src/core/fair-limiter.ts';
import { envReader } from '../../src/core/env.ts';
import { webCapability } from '../../src/adapters/web/index.ts';
import { browserCapability } from '../../src/browser/config.ts';
import { pdfCapability } from '../../src/extract/pdf/capability.ts';
import { readOcrOptions } from '../../src/extract/image/index.ts';

/** Acquires for `tenant`, recording the grant order in `order`. */
function queue(limiter: FairLimiter, tenant: string, order: string[], label = tenant, signal?: AbortSignal) {
  return limiter.acquire(tenant, { signal }).then((release) => {
    order.push(label);
    return release;
  });
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('fair pool admission', () => {
  test('one tenant holds at most its bound, even with slots free', async () => {
    const limiter = new FairLimiter({ capacity: 4, perTenant: 2 });
    const order: string[] = [];
    const a = [queue(limiter, 'a', order, 'a1'), queue(limiter, 'a', order, 'a2'), queue(limiter, 'a', order, 'a3')];
    await tick();
    assert.deepEqual(order, ['a1', 'a2']);
    assert.equal(limiter.runningFor('a'), 2);
    assert.equal(limiter.queued, 1);
    assert.equal(limiter.stats().boundWaits, 1);
    // Another tenant takes a free slot at once, past A's waiting task.
    const b = await queue(limiter, 'b', order, 'b1');
    assert.deepEqual(order, ['a1', 'a2', 'b1']);
    (await a[0])();
    await tick();
    assert.deepEqual(order, ['a1', 'a2', 'b1', 'a3']);
    b();
    (await a[1])();
    (await a[2])();
    assert.deepEqual(limiter.stats(), { capacity: 4, perTenant: 2, running: 0, queued: 0, waitingTenants: 0, boundWaits: 1, peakTenantRunning: 2 });
  });

  test('waiting tenants are served in turn, first come first served within each', async () => {
    const limiter = new FairLimiter({ capacity: 1, perTenant: 1 });
    const order: string[] = [];
    const first = await queue(limiter, 'a', order, 'a0');
    const waiting = [
      queue(limiter, 'a', order, 'a1'),
      queue(limiter, 'a', order, 'a2'),
      queue(limiter, 'a', order, 'a3'),
      queue(limiter, 'b', order, 'b1'),
      queue(limiter, 'c', order, 'c1'),
      queue(limiter, 'b', order, 'b2'),
    ];
    assert.equal(limiter.stats().waitingTenants, 3);
    // Each task ends as soon as it is granted, which hands the slot to the next in turn.
    for (const next of waiting) void next.then((release) => release());
    first();
    await Promise.all(waiting);
    // A global FIFO would have run a1 a2 a3 before B and C.
    assert.deepEqual(order, ['a0', 'a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  });

  test('a waiter that gives up leaves its queue with its reason, and the next one is served', async () => {
    const limiter = new FairLimiter({ capacity: 1 });
    const order: string[] = [];
    const release = await queue(limiter, 'a', order);
    const controller = new AbortController();
    const leaving = queue(limiter, 'b', order, 'b', controller.signal);
    const staying = queue(limiter, 'c', order);
    const reason = new Error('deadline');
    controller.abort(reason);
    await assert.rejects(leaving, (error) => error === reason);
    release();
    (await staying)();
    assert.deepEqual(order, ['a', 'c']);
    assert.equal(limiter.queued, 0);
    await assert.rejects(limiter.acquire('d', { signal: controller.signal }), (error) => error === reason);
  });

  test('a continuation goes first in its own tenant\'s queue', async () => {
    const limiter = new FairLimiter({ capacity: 1 });
    const order: string[] = [];
    const release = await queue(limiter, 'a', order, 'a0');
    const later = queue(limiter, 'a', order, 'a-new');
    const next = limiter.acquire('a', { front: true }).then((r) => (order.push('a-continued'), r));
    release();
    (await next)();
    (await later)();
    assert.deepEqual(order, ['a0', 'a-continued', 'a-new']);
  });

  test('rejectAll fails every waiter; releasing twice frees one slot', async () => {
    const limiter = new FairLimiter({ capacity: 1 });
    const release = await limiter.acquire('a');
    const waiting = limiter.acquire('b');
    const reason = new Error('closed');
    limiter.rejectAll(reason);
    await assert.rejects(waiting, (error) => error === reason);
    release();
    release();
    assert.equal(limiter.stats().running, 0);
  });

  test('the shared lease is taken before a slot, released with it, and a failing store falls back to the local bound', async () => {
    const taken: string[] = [];
    let failing = false;
    const leases: TenantLeases = {
      async acquire(pool, tenant, limit) {
        if (failing) throw new Error('redis away');
        taken.push(`${pool}/${tenant}/${limit}`);
        return () => taken.push(`released ${pool}/${tenant}`);
      },
    };
    const errors: unknown[] = [];
    const limiter = new FairLimiter({ capacity: 3, perTenant: 2, name: 'web', leases, onLeaseError: (error) => errors.push(error) });
    const release = await limiter.acquire('7');
    assert.deepEqual(taken, ['web/7/2']);
    release();
    assert.deepEqual(taken, ['web/7/2', 'released web/7']);
    failing = true;
    const local = await limiter.acquire('7');
    assert.equal(errors.length, 1);
    assert.equal(limiter.runningFor('7'), 1);
    local();
  });

  test('work for no user takes its turns but is not bounded, and takes no shared lease', async () => {
    let leased = 0;
    const leases: TenantLeases = {
      async acquire() {
        leased++;
        return () => undefined;
      },
    };
    const limiter = new FairLimiter({ capacity: 3, perTenant: 1, leases });
    const releases = await Promise.all([limiter.acquire(SYSTEM_TENANT), limiter.acquire(SYSTEM_TENANT), limiter.acquire(SYSTEM_TENANT)]);
    assert.equal(limiter.runningFor(SYSTEM_TENANT), 3);
    assert.equal(leased, 0);
    assert.equal(limiter.stats().peakTenantRunning, 0, 'the peak is a user\'s');
    for (const release of releases) release();
  });

  test('defaults and keys', () => {
    assert.deepEqual([1, 2, 3, 11].map(defaultPerTenant), [1, 1, 2, 6]);
    assert.equal(tenantKey(42), '42');
    assert.equal(tenantKey(undefined), SYSTEM_TENANT);
    assert.equal(new FairLimiter({ capacity: 2, perTenant: 5 }).perTenant, 2);
    assert.throws(() => new FairLimiter({ capacity: 0 }), RangeError);
    assert.throws(() => new FairLimiter({ capacity: 2, perTenant: 0 }), RangeError);
  });

  test('POOL_USER_CONCURRENCY and BROWSER_USER_CONCURRENCY: read by each pool, unset by default, refused unless a positive integer', () => {
    const read = (env: Record<string, string>) => {
      const reader = envReader(env);
      return {
        web: reader.read((r) => webCapability.settings(r)).conversion.userConcurrency,
        pdf: reader.read((r) => pdfCapability.settings(r)).userConcurrency,
        ocr: reader.read((r) => readOcrOptions(r)).userConcurrency,
        browser: reader.read((r) => browserCapability.settings(r)).userConcurrency,
      };
    };
    assert.deepEqual(read({}), { web: undefined, pdf: undefined, ocr: undefined, browser: undefined });
    assert.deepEqual(read({ POOL_USER_CONCURRENCY: '3', BROWSER_USER_CONCURRENCY: '4' }), { web: 3, pdf: 3, ocr: 3, browser: 4 });
    for (const [variable, value] of [
      ['POOL_USER_CONCURRENCY', '0'],
      ['POOL_USER_CONCURRENCY', 'half'],
      ['BROWSER_USER_CONCURRENCY', '-1'],
      ['BROWSER_USER_CONCURRENCY', '1.5'],
    ]) {
      assert.throws(() => read({ [variable]: value }), (error: Error & { variable?: string }) => error.variable === variable, `${variable}=${value}`);
    }
  });
});
