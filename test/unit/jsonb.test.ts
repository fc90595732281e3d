import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonbText } from '../../src/storage/jsonb.ts';

test('NUL and lone surrogates become U+FFFD, in keys and values, at any depth', () => {
  const value = { 'a\u0000': ['x\u0000y', { deep: '\ud800' }], ok: 'caf\u00e9 \ud83d\ude00', n: 1, t: true, z: null };
  assert.deepEqual(JSON.parse(jsonbText(value)), { 'a\uFFFD': ['x\uFFFDy', { deep: '\uFFFD' }], ok: 'caf\u00e9 \ud83d\ude00', n: 1, t: true, z: null });
  assert.doesNotMatch(jsonbText(value), /\\u0000|\\ud800/);
});

test('anything else is the same JSON as JSON.stringify gives', () => {
  const value = { when: new Date(0), list: [1, 'two', [3]], text: 'back\\slash "quoted" \\u0000 as typed' };
  assert.equal(jsonbText(value), JSON.stringify(value));
});
