/**
 * The process pool (src/core/task-processes.ts) on its own, with a fixture module: answers and
 * failures, the time limit, aborts, both ways of running out of heap, a process that dies of
 * something else, a module that does not load, the queue bound and closing.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTaskProcesses, type TaskProcesses } from '../../src/core/task-processes.ts';
import type { FixtureTask } from '../support/task-process-fixture.ts';

const FIXTURE = new URL('../support/task-process-fixture.ts', import.meta.url).href;

const pools: TaskProcesses<FixtureTask, unknown>[] = [];
function pool(options: Partial<Parameters<typeof createTaskProcesses>[0]> = {}): TaskProcesses<FixtureTask, unknown> {
  const created = createTaskProcesses<FixtureTask, unknown>({ module: FIXTURE, processes: 1, timeoutMs: 10_000, maxHeapMb: 64, ...options });
  pools.push(created);
  return created;
}
after(() => Promise.all(pools.map((p) => p.close())));

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function busy(p: TaskProcesses<FixtureTask, unknown>): Promise<void> {
  while (p.stats().busy === 0) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('task processes', () => {
  test('answer with what the module returns; a task that throws rejects with its message and keeps the process', async () => {
    const p = pool();
    assert.deepEqual(await p.run({ kind: 'echo', value: 'é\u0000\ud800' }), { kind: 'done', result: { echoed: 'é\u0000\ud800' } });
    const pid = await p.run({ kind: 'pid' });
    await assert.rejects(p.run({ kind: 'throw', message: 'bad page' }), /^Error: bad page$/);
    assert.deepEqual(await p.run({ kind: 'pid' }), pid, 'the same process');
    assert.notEqual((pid as { result: number }).result, process.pid);
  });

  test('past the time limit the process is killed and replaced; the limit counts from the start, not the wait', async () => {
    const p = pool({ timeoutMs: 1_000 });
    const pid = await p.run({ kind: 'pid' });
    // The second waits 600 ms for the first: 1.2 s from its call, 0.6 s from its start.
    const both = await Promise.all([p.run({ kind: 'spin', ms: 600 }), p.run({ kind: 'spin', ms: 600 })]);
    assert.deepEqual(both, [{ kind: 'done', result: 'spun' }, { kind: 'done', result: 'spun' }]);
    assert.deepEqual(await p.run({ kind: 'spin', ms: 5_000 }), { kind: 'time_limit' });
    const after = await p.run({ kind: 'pid' });
    assert.equal(typeof (after as { result: number }).result, 'number');
    assert.notDeepEqual(after, pid, 'a new process');
    assert.deepEqual(p.stats(), { processes: 1, busy: 0, queued: 0, recycled: 0 });
  });

  test('large strings past the heap limit (fatal to a worker thread): out_of_memory, this process unharmed, the next task answered', async () => {
    const p = pool({ maxHeapMb: 64 });
    for (let i = 0; i < 3; i++) assert.deepEqual(await p.run({ kind: 'large-strings' }), { kind: 'out_of_memory' });
    assert.deepEqual(await p.run({ kind: 'echo', value: 'after' }), { kind: 'done', result: { echoed: 'after' } });
  });

  test('a heap filled by small objects: out_of_memory too', async () => {
    const p = pool({ maxHeapMb: 64 });
    assert.deepEqual(await p.run({ kind: 'many-small-allocations' }), { kind: 'out_of_memory' });
    assert.deepEqual(await p.run({ kind: 'echo', value: 'after' }), { kind: 'done', result: { echoed: 'after' } });
  });

  test('a process that dies of something else rejects with how it ended, and is replaced', async () => {
    const p = pool();
    await assert.rejects(p.run({ kind: 'exit', code: 3 }), /the task process ended \(exit code 3\)/);
    assert.deepEqual(await p.run({ kind: 'echo', value: 'after' }), { kind: 'done', result: { echoed: 'after' } });
  });

  test('an abort kills the process at work and takes a queued task out of the queue', async () => {
    const p = pool();
    const running = new AbortController();
    const queued = new AbortController();
    const first = p.run({ kind: 'spin', ms: 10_000 }, { signal: running.signal });
    const second = p.run({ kind: 'echo', value: 'never' }, { signal: queued.signal });
    await busy(p);
    assert.deepEqual(p.stats(), { processes: 1, busy: 1, queued: 1, recycled: 0 });
    queued.abort(new Error('gone'));
    await assert.rejects(second, /gone/);
    assert.equal(p.stats().queued, 0);
    const started = Date.now();
    running.abort(new Error('client went away'));
    await assert.rejects(first, /client went away/);
    assert.deepEqual(await p.run({ kind: 'echo', value: 'next' }), { kind: 'done', result: { echoed: 'next' } });
    assert.ok(Date.now() - started < 9_000, 'the next task did not wait for the aborted one');
    await assert.rejects(p.run({ kind: 'echo', value: 'x' }, { signal: AbortSignal.abort(new Error('before')) }), /before/);
  });

  test('past maxQueue waiting tasks a task is refused at once; room comes back', async () => {
    const p = pool({ maxQueue: 1 });
    const running = p.run({ kind: 'wait', ms: 300 });
    const waiting = p.run({ kind: 'echo', value: 'queued' });
    assert.equal(p.hasCapacity(), false);
    assert.deepEqual(await p.run({ kind: 'echo', value: 'refused' }), { kind: 'queue_full' });
    assert.deepEqual(await running, { kind: 'done', result: 'waited' });
    assert.deepEqual(await waiting, { kind: 'done', result: { echoed: 'queued' } });
    assert.equal(p.hasCapacity(), true);
  });

  test('a module that does not load fails the waiting tasks instead of keeping them for ever', async () => {
    const p = pool({ module: new URL('../support/no-such-module.ts', import.meta.url).href });
    await assert.rejects(p.run({ kind: 'echo', value: 'x' }), /a task process could not start/);
  });

  test('close waits for the tasks at work, then ends the processes; later tasks are refused', async () => {
    const p = createTaskProcesses<FixtureTask, unknown>({ module: FIXTURE, processes: 2, timeoutMs: 10_000, maxHeapMb: 64 });
    // Both at work at once: two processes, each asked its pid.
    const pids = await Promise.all([p.run({ kind: 'wait', ms: 300 }).then(() => p.run({ kind: 'pid' })), p.run({ kind: 'wait', ms: 300 }).then(() => p.run({ kind: 'pid' }))]);
    const working = p.run({ kind: 'wait', ms: 200 });
    await p.close();
    assert.deepEqual(await working, { kind: 'done', result: 'waited' });
    for (const run of pids) {
      const pid = (run as { result: number }).result;
      assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `process ${pid} has ended`);
    }
    await assert.rejects(p.run({ kind: 'echo', value: 'late' }), /closed/);
  });

  test('a process past the memory high-water mark after a task answers, then leaves for a fresh one', async () => {
    const p = pool({ maxHeapMb: 512, recycleAboveMb: 300 });
    const small = await p.run({ kind: 'grow', mb: 10 });
    assert.deepEqual(await p.run({ kind: 'pid' }), small, 'below the mark: the same process');
    assert.equal(p.stats().recycled, 0);
    const grown = await p.run({ kind: 'grow', mb: 300 });
    assert.deepEqual(grown, small, 'the task that grew it is answered by it');
    const next = await p.run({ kind: 'pid' });
    assert.notDeepEqual(next, grown, 'the next task runs in a fresh process');
    assert.equal(p.stats().recycled, 1);
    const oldPid = (grown as { result: number }).result;
    while (isAlive(oldPid)) await new Promise((resolve) => setTimeout(resolve, 10));
  });

  test('options are checked', () => {
    assert.throws(() => createTaskProcesses({ module: FIXTURE, processes: 0, timeoutMs: 1, maxHeapMb: 64 }), /processes/);
  });
});
