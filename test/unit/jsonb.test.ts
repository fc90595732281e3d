import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonbText, MAX_STORED_DEPTH, TOO_DEEP } from '../../src/storage/jsonb.ts';

test('NUL and lone surrogates become U+FFFD, in keys and values, at any depth', () => {
  const value = { 'a\u0000': ['x\u0000y', { deep: '\ud800' }], ok: 'caf\u00e9 \ud83d\ude00', n: 1, t: true, z: null };
  assert.deepEqual(JSON.parse(jsonbText(value)), { 'a\uFFFD': ['x\uFFFDy', { deep: '\uFFFD' }], ok: 'caf\u00e9 \ud83d\ude00', n: 1, t: true, z: null });
  assert.doesNotMatch(jsonbText(value), /\\u0000|\\ud800/);
});

test('anything else is the same JSON as JSON.stringify gives', () => {
  const value = { when: new Date(0), list: [1, 'two', [3]], text: 'back\\slash "quoted" \\u0000 as typed' };
  assert.equal(jsonbText(value), JSON.stringify(value));
});

test('nesting thousands of levels deep is cut, not a stack overflow', () => {
  let deep: unknown = 'bottom';
  for (let level = 0; level < 100_000; level++) deep = level % 2 ? [deep] : { a: deep };
  const stored = JSON.parse(jsonbText({ url: 'https://example.com/a.png', extra: deep }));
  assert.equal(stored.url, 'https://example.com/a.png');
  let cursor: any = stored.extra;
  let levels = 0;
  while (cursor !== null && typeof cursor === 'object') {
    cursor = Array.isArray(cursor) ? cursor[0] : cursor.a;
    levels++;
  }
  assert.equal(cursor, TOO_DEEP);
  assert.equal(levels, MAX_STORED_DEPTH - 1);
});
