import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { setImmediate as nextMacrotask } from 'node:timers/promises';
import type { Transferable } from 'node:worker_threads';
import { InThreadPort } from '../../src/extract/pdf/in-thread-port.ts';

type Event = { data: unknown };

/** Posts one message and resolves with what a listener received. */
async function roundTrip(data: unknown, transfer?: Transferable[]): Promise<unknown> {
  const port = new InThreadPort();
  const received: unknown[] = [];
  port.addEventListener('message', (event) => received.push(event.data));
  port.postMessage(data, transfer);
  await nextMacrotask();
  assert.equal(received.length, 1);
  return received[0];
}

test('delivery is one microtask later: never inside postMessage, before later microtasks and any macrotask', async () => {
  const port = new InThreadPort();
  const order: string[] = [];
  port.addEventListener('message', (event) => order.push(`message ${String(event.data)}`));
  port.postMessage('a');
  order.push('after postMessage');
  queueMicrotask(() => order.push('later microtask'));
  setImmediate(() => order.push('macrotask'));
  await nextMacrotask();
  await nextMacrotask();
  assert.deepEqual(order, ['after postMessage', 'message a', 'later microtask', 'macrotask']);
});

test('messages arrive in the order posted, also those posted from a listener (after the ones already queued)', async () => {
  const port = new InThreadPort();
  const seen: unknown[] = [];
  port.addEventListener('message', ({ data }) => {
    seen.push(data);
    if (data === 1) port.postMessage('reply to 1'); // posted re-entrantly: queued, not delivered now
    assert.equal(seen.at(-1), data, 'no listener call happens inside another');
  });
  for (let i = 0; i < 500; i++) port.postMessage(i);
  await nextMacrotask();
  assert.deepEqual(seen, [...Array.from({ length: 500 }, (_, i) => i), 'reply to 1']);
});

test('every listener gets every message (both ends share the port), with the port as `this` and one event', async () => {
  const port = new InThreadPort();
  const calls: Array<{ who: string; self: unknown; event: Event }> = [];
  port.addEventListener('message', function (event) {
    calls.push({ who: 'first', self: this, event });
  });
  port.addEventListener('message', function (event) {
    calls.push({ who: 'second', self: this, event });
  });
  port.postMessage({ action: 'test' });
  await nextMacrotask();
  assert.deepEqual(calls.map((call) => call.who), ['first', 'second']);
  assert.ok(calls.every((call) => call.self === port));
  assert.equal(calls[0].event, calls[1].event, 'like pdf.js LoopbackPort, listeners share the event');
  assert.deepEqual(calls[0].event.data, { action: 'test' });
});

test('adding the same listener twice delivers once', async () => {
  const port = new InThreadPort();
  let count = 0;
  const listener = () => count++;
  port.addEventListener('message', listener);
  port.addEventListener('message', listener);
  port.postMessage(null);
  await nextMacrotask();
  assert.equal(count, 1);
});

test('listeners are those registered at delivery time, as in pdf.js LoopbackPort', async () => {
  const port = new InThreadPort();
  const seen: string[] = [];
  port.postMessage('posted before any listener');
  port.addEventListener('message', ({ data }) => seen.push(`late: ${String(data)}`));
  await nextMacrotask();
  assert.deepEqual(seen, ['late: posted before any listener']);
});

test('removeEventListener stops delivery, also of messages posted before but not yet delivered', async () => {
  const port = new InThreadPort();
  const kept: unknown[] = [];
  const removed: unknown[] = [];
  const removedListener = ({ data }: Event) => removed.push(data);
  port.addEventListener('message', ({ data }) => kept.push(data));
  port.addEventListener('message', removedListener);
  port.postMessage(1);
  await nextMacrotask();
  port.postMessage(2);
  port.removeEventListener('message', removedListener);
  port.postMessage(3);
  await nextMacrotask();
  assert.deepEqual(kept, [1, 2, 3]);
  assert.deepEqual(removed, [1]);
});

test('a listener removed by an earlier listener during a delivery is not called', async () => {
  const port = new InThreadPort();
  const seen: string[] = [];
  const second = () => seen.push('second');
  port.addEventListener('message', () => {
    seen.push('first');
    port.removeEventListener('message', second);
  });
  port.addEventListener('message', second);
  port.postMessage(null);
  await nextMacrotask();
  assert.deepEqual(seen, ['first']);
});

test('terminate stops all delivery, pending messages included, and detaches from abort signals', async () => {
  const port = new InThreadPort();
  const seen: unknown[] = [];
  const controller = new AbortController();
  port.addEventListener('message', ({ data }) => seen.push(data), { signal: controller.signal });
  port.addEventListener('message', ({ data }) => seen.push(data));
  assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
  port.postMessage('pending');
  port.terminate();
  port.postMessage('after terminate');
  await nextMacrotask();
  assert.deepEqual(seen, []);
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
});

test('an aborted signal removes its listener; an already-aborted signal never adds it', async () => {
  const port = new InThreadPort();
  const withSignal: unknown[] = [];
  const controller = new AbortController();
  port.addEventListener('message', ({ data }) => withSignal.push(data), { signal: controller.signal });
  port.postMessage(1);
  await nextMacrotask();
  controller.abort();
  port.postMessage(2);
  await nextMacrotask();
  assert.deepEqual(withSignal, [1]);

  let calledAfterAbort = false;
  port.addEventListener('message', () => (calledAfterAbort = true), { signal: AbortSignal.abort() });
  port.postMessage(3);
  await nextMacrotask();
  assert.equal(calledAfterAbort, false);
});

test('removeEventListener also drops the listener’s abort handler', () => {
  const port = new InThreadPort();
  const controller = new AbortController();
  const listener = () => {};
  port.addEventListener('message', listener, { signal: controller.signal });
  assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
  port.removeEventListener('message', listener);
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  controller.abort(); // nothing left to call
});

test('messages are copied when posted: later changes on either side never show on the other', async () => {
  const port = new InThreadPort();
  const received: Array<Record<string, any>> = [];
  port.addEventListener('message', ({ data }) => received.push(data as Record<string, any>));

  // pdf.js reuses objects right after sending them.
  const plain = { items: [{ str: 'Hello', transform: [1, 0, 0, 1, 72, 720] }], styles: { f1: { fontFamily: 'serif' } } };
  const binary = { bytes: new Uint8Array([1, 2, 3]), map: new Map([['k', { v: 1 }]]) };
  port.postMessage(plain);
  port.postMessage(binary);
  plain.items[0].str = 'changed';
  plain.items[0].transform[4] = 0;
  plain.items.push({ str: 'added', transform: [] });
  plain.styles.f1.fontFamily = 'changed';
  binary.bytes[0] = 99;
  binary.map.get('k')!.v = 99;
  await nextMacrotask();

  const [gotPlain, gotBinary] = received;
  assert.deepEqual(gotPlain, { items: [{ str: 'Hello', transform: [1, 0, 0, 1, 72, 720] }], styles: { f1: { fontFamily: 'serif' } } });
  assert.notEqual(gotPlain, plain);
  assert.notEqual(gotPlain.items, plain.items);
  assert.deepEqual([...gotBinary.bytes], [1, 2, 3]);
  assert.notEqual(gotBinary.bytes.buffer, binary.bytes.buffer);
  assert.equal(gotBinary.map.get('k').v, 1);

  gotPlain.items[0].str = 'receiver change';
  gotBinary.bytes[1] = 42;
  assert.equal(plain.items[0].str, 'changed');
  assert.equal(binary.bytes[1], 2);
});

test('plain data is copied as structuredClone copies it', async () => {
  const nullPrototype = Object.assign(Object.create(null), { a: 1, nested: Object.assign(Object.create(null), { b: [2] }) });
  class Point {
    x = 1;
    y = 2;
    get sum() {
      return this.x + this.y;
    }
  }
  const withHidden = { shown: 1 };
  Object.defineProperty(withHidden, 'hidden', { value: 2, enumerable: false });
  (withHidden as Record<symbol, number>)[Symbol('s')] = 3;
  const sparse = [1, , 3]; // eslint-disable-line no-sparse-arrays
  const named = Object.assign([1, 2], { extra: 'x' });

  const samples: unknown[] = [
    null,
    undefined,
    0,
    -0,
    NaN,
    Infinity,
    12345678901234567890n,
    '',
    'text with ünïcödé and \u0000',
    true,
    [],
    {},
    [1, 'two', null, undefined, false, [3, [4]], { five: 5 }],
    { str: 'Hello', dir: 'ltr', width: 20.5, height: 12, transform: [12, 0, 0, 12, 72, 720], fontName: 'g_d0_f1', hasEOL: false },
    { b: 1, a: 2, 10: 'ten', 2: 'two', '-1': 'minus one', undefinedValue: undefined },
    nullPrototype,
    JSON.parse('{"__proto__": {"polluted": true}, "x": 1}'),
    new Point(),
    withHidden,
    sparse,
    named,
    new Date(0),
    new Map([[1, { a: 1 }]]),
    new Set(['a']),
    /re/g,
    new Uint8Array([1, 2, 3]),
    new Float32Array([0.5, -1]),
    new ArrayBuffer(4),
    new Error('boom'),
  ];
  for (const [index, sample] of samples.entries()) {
    const copy = await roundTrip(sample);
    const expected = structuredClone(sample);
    assert.deepStrictEqual(copy, expected, `sample ${index}`);
    if (typeof sample === 'object' && sample !== null) {
      assert.notEqual(copy, sample);
      assert.deepEqual(Reflect.ownKeys(copy as object), Reflect.ownKeys(expected as object), `sample ${index}: same keys in the same order`);
      assert.equal(Object.getPrototypeOf(copy), Object.getPrototypeOf(expected));
    }
  }

  const proto = (await roundTrip(JSON.parse('{"__proto__": {"polluted": true}}'))) as Record<string, unknown>;
  assert.ok(Object.hasOwn(proto, '__proto__'), '__proto__ stays an own property');
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  assert.equal(proto.polluted, undefined);
  assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);

  const holes = (await roundTrip(sparse)) as unknown[];
  assert.equal(1 in holes, false, 'holes stay holes');
});

test('shared references and cycles survive the copy as such', async () => {
  const style = { fontFamily: 'serif' };
  const acyclic = (await roundTrip({ a: style, b: style, list: [style, [style]] })) as Record<string, any>;
  assert.notEqual(acyclic.a, style);
  assert.equal(acyclic.a, acyclic.b);
  assert.equal(acyclic.list[0], acyclic.a);
  assert.equal(acyclic.list[1][0], acyclic.a);

  const shared = { name: 'shared' };
  const cyclic: Record<string, unknown> = { list: [shared, shared], other: shared };
  cyclic.self = cyclic;
  (cyclic.list as unknown[]).push(cyclic.list);
  const copy = (await roundTrip(cyclic)) as Record<string, any>;
  assert.notEqual(copy, cyclic);
  assert.equal(copy.self, copy);
  assert.equal(copy.list[0], copy.list[1]);
  assert.equal(copy.list[0], copy.other);
  assert.notEqual(copy.other, shared);
  assert.equal(copy.list[2], copy.list);
  assert.deepEqual(copy.other, { name: 'shared' });
});

test('very deep messages are copied whole (past the walk’s depth limit)', async () => {
  let deep: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < 300; i++) deep = { child: deep, items: [i] };
  const copy = (await roundTrip(deep)) as Record<string, any>;
  let node = copy;
  let levels = 0;
  while (node.child) {
    assert.deepEqual(node.items, [299 - levels]);
    node = node.child;
    levels++;
  }
  assert.equal(levels, 300);
  assert.deepEqual(node, { leaf: true });
});

test('functions and symbols are refused when posted, like a real port, and nothing is delivered', async () => {
  const port = new InThreadPort();
  const seen: unknown[] = [];
  port.addEventListener('message', ({ data }) => seen.push(data));
  assert.throws(() => port.postMessage({ callback() {} }), { name: 'DataCloneError' });
  assert.throws(() => port.postMessage([1, Symbol('s')]), { name: 'DataCloneError' });
  assert.throws(() => port.postMessage(() => {}), { name: 'DataCloneError' });
  await nextMacrotask();
  assert.deepEqual(seen, []);
});

test('transferred ArrayBuffers move: the sender’s copy is detached and the receiver has the bytes', async () => {
  const bytes = new Uint8Array([5, 6, 7, 8]);
  const message = { chunk: bytes.buffer, view: bytes, label: 'data' };
  const copy = (await roundTrip(message, [bytes.buffer])) as { chunk: ArrayBuffer; view: Uint8Array; label: string };
  assert.equal(bytes.buffer.byteLength, 0, 'detached on the sending side');
  assert.equal(bytes.byteLength, 0);
  assert.deepEqual([...new Uint8Array(copy.chunk)], [5, 6, 7, 8]);
  assert.equal(copy.view.buffer, copy.chunk, 'the view still sits on the moved buffer');
  assert.equal(copy.label, 'data');
});

test('an ArrayBuffer posted without a transfer list is copied and stays usable for the sender', async () => {
  const bytes = new Uint8Array([1, 2, 3]);
  const copy = (await roundTrip({ chunk: bytes.buffer })) as { chunk: ArrayBuffer };
  assert.equal(bytes.byteLength, 3);
  bytes[0] = 9;
  assert.deepEqual([...new Uint8Array(copy.chunk)], [1, 2, 3]);
});

test('an empty transfer list is no transfer', async () => {
  const copy = await roundTrip({ a: [1, 2] }, []);
  assert.deepEqual(copy, { a: [1, 2] });
});

test('a listener that throws does not keep the message from the others; its error is still reported as uncaught', async () => {
  // In a child process: the error surfaces as an uncaught exception, which would fail this runner.
  const { spawnSync } = await import('node:child_process');
  const portModule = new URL('../../src/extract/pdf/in-thread-port.ts', import.meta.url).href;
  const script = `
    const { InThreadPort } = await import(${JSON.stringify(portModule)});
    const port = new InThreadPort();
    const seen = [];
    process.on('uncaughtException', (error) => seen.push('uncaught ' + error.message));
    port.addEventListener('message', () => { throw new Error('first listener failed'); });
    port.addEventListener('message', (event) => seen.push('second got ' + event.data));
    port.postMessage('m');
    setImmediate(() => console.log(JSON.stringify(seen)));
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  assert.deepEqual(JSON.parse(child.stdout), ['second got m', 'uncaught first listener failed']);
});
