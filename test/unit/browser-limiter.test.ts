import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Limiter } from '../../src/browser/limiter.ts';

describe('browser pool limiter', () => {
  test('grants up to its capacity, then queues in arrival order', async () => {
    const limiter = new Limiter(2);
    const signal = new AbortController().signal;
    const first = await limiter.acquire(signal);
    await limiter.acquire(signal);
    const order: string[] = [];
    const third = limiter.acquire(signal).then((release) => {
      order.push('third');
      return release;
    });
    const fourth = limiter.acquire(signal).then((release) => {
      order.push('fourth');
      return release;
    });
    assert.equal(limiter.queued, 2);
    first();
    first(); // releasing twice must not free a second slot
    (await third)();
    (await fourth)();
    assert.deepEqual(order, ['third', 'fourth']);
    assert.equal(limiter.queued, 0);
  });

  test('a waiter that gives up leaves the queue with its abort reason', async () => {
    const limiter = new Limiter(1);
    const release = await limiter.acquire(new AbortController().signal);
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal);
    const reason = new Error('deadline');
    controller.abort(reason);
    await assert.rejects(waiting, (error) => error === reason);
    assert.equal(limiter.queued, 0);
    release();
    const again = await limiter.acquire(new AbortController().signal);
    again();
  });

  test('rejectAll fails every waiter', async () => {
    const limiter = new Limiter(1);
    await limiter.acquire(new AbortController().signal);
    const waiters = [limiter.acquire(new AbortController().signal), limiter.acquire(new AbortController().signal)];
    const reason = new Error('closing');
    limiter.rejectAll(reason);
    for (const waiter of waiters) await assert.rejects(waiter, (error) => error === reason);
  });

  test('a capacity below one is refused', () => {
    assert.throws(() => new Limiter(0), RangeError);
  });
});
