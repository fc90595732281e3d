import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GroupCommit } from '../../src/storage/group-commit.ts';

/** A runner whose statements finish when the test says so, recording each batch it was given. */
function controlledRunner() {
  const batches: number[][] = [];
  const pending: Array<() => void> = [];
  const run = (items: number[]) =>
    new Promise<number[]>((resolve) => {
      batches.push(items);
      pending.push(() => resolve(items.map((i) => i * 10)));
    });
  const finishNext = async () => {
    pending.shift()!();
    await new Promise((r) => setImmediate(r));
  };
  return { batches, run, finishNext, pendingCount: () => pending.length };
}

/** The end of the current event-loop turn, when a batcher sends what it gathered. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

test('calls of one event-loop turn travel together; a later call on an idle batcher goes alone', async () => {
  const r = controlledRunner();
  const batcher = new GroupCommit(r.run, { maxInFlight: 1, maxBatch: 10 });
  const first = [batcher.submit(1), batcher.submit(2)];
  assert.deepEqual(r.batches, [], 'nothing is sent before the turn ends');
  await turn();
  assert.deepEqual(r.batches, [[1, 2]]);
  await r.finishNext();
  assert.deepEqual(await Promise.all(first), [10, 20]);
  const later = batcher.submit(3);
  await turn();
  assert.deepEqual(r.batches, [[1, 2], [3]]);
  await r.finishNext();
  assert.equal(await later, 30);
});

test('calls arriving while a statement runs share the next one, in order, each getting its own answer', async () => {
  const r = controlledRunner();
  const batcher = new GroupCommit(r.run, { maxInFlight: 1, maxBatch: 10 });
  const answers = [batcher.submit(1)];
  await turn();
  answers.push(batcher.submit(2));
  await turn();
  answers.push(batcher.submit(3), batcher.submit(4));
  await turn();
  assert.deepEqual(r.batches, [[1]]);
  assert.equal(batcher.queued, 3);
  await r.finishNext();
  assert.deepEqual(r.batches, [[1], [2, 3, 4]]);
  await r.finishNext();
  assert.deepEqual(await Promise.all(answers), [10, 20, 30, 40]);
});

test('maxInFlight statements run at once and maxBatch bounds a batch', async () => {
  const r = controlledRunner();
  const batcher = new GroupCommit(r.run, { maxInFlight: 2, maxBatch: 2 });
  const answers = [batcher.submit(1)];
  await turn();
  answers.push(batcher.submit(2));
  await turn();
  answers.push(...[3, 4, 5, 6].map((i) => batcher.submit(i)));
  await turn();
  assert.deepEqual(r.batches, [[1], [2]]);
  await r.finishNext();
  assert.deepEqual(r.batches, [[1], [2], [3, 4]]);
  await r.finishNext();
  assert.deepEqual(r.batches, [[1], [2], [3, 4], [5, 6]]);
  while (r.pendingCount() > 0) await r.finishNext();
  assert.deepEqual(await Promise.all(answers), [10, 20, 30, 40, 50, 60]);
});

test('a failed batch is retried call by call: only the bad call fails', async () => {
  const seen: number[][] = [];
  let gate!: () => void;
  const opened = new Promise<void>((resolve) => (gate = resolve));
  const batcher = new GroupCommit(
    async (items: number[]) => {
      seen.push(items);
      if (items.length === 1 && items[0] === 1) await opened; // hold the first statement so the rest queue
      if (items.includes(3)) throw new Error(`bad item in ${items.join(',')}`);
      return items.map((i) => -i);
    },
    { maxInFlight: 1, maxBatch: 10 },
  );
  const first = batcher.submit(1);
  await turn();
  const rest = [2, 3, 4].map((i) => batcher.submit(i).then((v) => ({ v }), (e: Error) => ({ e: e.message })));
  await turn();
  gate();
  assert.equal(await first, -1);
  assert.deepEqual(await Promise.all(rest), [{ v: -2 }, { e: 'bad item in 3' }, { v: -4 }]);
  assert.deepEqual(seen, [[1], [2, 3, 4], [2], [3], [4]]);
});

test('a single call that fails is rejected once, and the batcher keeps working', async () => {
  let fail = true;
  const batcher = new GroupCommit(
    async (items: number[]) => {
      if (fail) throw new Error('database down');
      return items;
    },
    { maxInFlight: 1, maxBatch: 10 },
  );
  await assert.rejects(batcher.submit(1), /database down/);
  fail = false;
  assert.equal(await batcher.submit(2), 2);
});

test('options below 1 are refused', () => {
  assert.throws(() => new GroupCommit(async (x: number[]) => x, { maxInFlight: 0, maxBatch: 1 }), /at least 1/);
  assert.throws(() => new GroupCommit(async (x: number[]) => x, { maxInFlight: 1, maxBatch: 0 }), /at least 1/);
});
