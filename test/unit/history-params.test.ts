/**
 * What request history keeps of a request's input (src/history/params.ts): declared fields only,
 * secrets left out, each value and the whole row bounded.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { boundedParams, CUT_MARKER, HISTORY_PARAMS_MAX_BYTES, HISTORY_VALUE_MAX_CHARS, historyParams } from '../../src/history/params.ts';
import { MAX_STORED_DEPTH, TOO_DEEP, jsonbText } from '../../src/storage/jsonb.ts';
import { email, integer, string } from '../../src/validation/rules.ts';
import type { Schema } from '../../src/validation/schema.ts';

const schema: Schema = {
  fields: {
    url: { rules: [string()] },
    email: { rules: [email()] },
    secret_key: { rules: [string()], secret: true },
    page: { rules: [integer()] },
    headers: { rules: [] },
    body: { rules: [], secret: true },
    note: { rules: [string()] },
  },
};

const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

describe('historyParams', () => {
  test('keeps declared fields in schema order, drops secret and unknown ones', () => {
    const input = { extra: 'x', page: 2, secret_key: 'hunter2', email: 'a@example.com', body: 'raw', _method: 'GET', __proto__: { polluted: 1 } };
    assert.deepEqual(Object.entries(historyParams(schema, input)), [
      ['email', 'a@example.com'],
      ['page', 2],
    ]);
  });

  test('small values are kept as sent, nested ones included', () => {
    const headers = { 'x-a': '1', list: [1, 'two', null, true, { deep: 'yes' }] };
    assert.deepEqual(historyParams(schema, { url: 'https://example.com/', page: 'not a number', headers, note: null }), {
      url: 'https://example.com/',
      page: 'not a number',
      headers,
      note: null,
    });
  });

  test(`a string past ${HISTORY_VALUE_MAX_CHARS} characters is cut there and marked`, () => {
    const stored = historyParams(schema, { url: 'u'.repeat(880 * 1024) }).url as string;
    assert.equal(stored, 'u'.repeat(HISTORY_VALUE_MAX_CHARS) + CUT_MARKER);
    assert.equal(historyParams(schema, { url: 'u'.repeat(HISTORY_VALUE_MAX_CHARS) }).url, 'u'.repeat(HISTORY_VALUE_MAX_CHARS), 'at the limit: untouched');
  });

  test('a cut never splits a surrogate pair', () => {
    const stored = historyParams(schema, { note: 'a' + '😀'.repeat(HISTORY_VALUE_MAX_CHARS) }).note as string;
    assert.ok(stored.endsWith(CUT_MARKER));
    assert.equal(stored.slice(0, -CUT_MARKER.length), stored.slice(0, -CUT_MARKER.length).toWellFormed());
  });

  test('a large array or object is kept as its JSON text, cut and marked; a huge one is never serialised whole', () => {
    const huge = Array.from({ length: 200_000 }, (_, i) => ({ i, text: 'x'.repeat(10) }));
    const stored = historyParams(schema, { headers: huge }).headers as string;
    assert.equal(typeof stored, 'string');
    assert.equal(stored, JSON.stringify(huge.slice(0, 100)).slice(0, HISTORY_VALUE_MAX_CHARS) + CUT_MARKER);
  });

  test(`nesting is cut at ${MAX_STORED_DEPTH} levels, even thousands of levels deep`, () => {
    let deep: unknown = 'bottom';
    for (let level = 0; level < 100_000; level++) deep = [deep];
    const stored = historyParams(schema, { headers: deep }).headers;
    assert.equal(JSON.stringify(stored), '['.repeat(MAX_STORED_DEPTH) + JSON.stringify(TOO_DEEP) + ']'.repeat(MAX_STORED_DEPTH), 'small enough to stay a value');
  });

  test(`the whole row stays within ${HISTORY_PARAMS_MAX_BYTES} bytes of JSON, whatever the characters`, () => {
    const wide: Schema = { fields: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`field_${i}`, { rules: [] }])) };
    for (const filler of ['a', 'é', '😀', '"', '\u0001', '\\']) {
      const input = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`field_${i}`, filler.repeat(5000)]));
      const stored = historyParams(wide, input);
      assert.ok(bytes(stored) <= HISTORY_PARAMS_MAX_BYTES, `${JSON.stringify(filler)}: ${bytes(stored)} bytes`);
      assert.ok(Buffer.byteLength(jsonbText(stored)) <= HISTORY_PARAMS_MAX_BYTES, 'as written to the database too');
      const values = Object.values(stored) as string[];
      // A control character takes 6 bytes as JSON: its first field alone is cut to the row's budget.
      const fullAllowance = filler.repeat(HISTORY_VALUE_MAX_CHARS / filler.length) + CUT_MARKER;
      if (filler !== '\u0001') assert.ok(values[0] === fullAllowance, 'the first field gets its full allowance');
      assert.ok(values.every((value) => value.endsWith(CUT_MARKER) && fullAllowance.startsWith(value.slice(0, -CUT_MARKER.length))));
      assert.ok(values.length < 40, 'fields past the budget are left out');
    }
  });

  test('a summary is already within its bounds: summarising it again changes nothing', () => {
    const stored = historyParams(schema, { url: 'u'.repeat(5000), headers: { a: 'b'.repeat(5000) }, note: 'n'.repeat(5000), page: 1 });
    assert.deepEqual(boundedParams(stored), stored);
    assert.deepEqual(historyParams(schema, stored), stored);
  });
});

describe('boundedParams (rows stored before the summary)', () => {
  test('small params come back as they are', () => {
    const params = { url: 'https://example.com/', extra: [1, 2] };
    assert.equal(boundedParams(params), params);
  });

  test('large ones are cut with the same rules, their keys kept', () => {
    const stored = boundedParams({ url: 'https://example.com/', pad: 'x'.repeat(880 * 1024), more: { list: 'y'.repeat(5000) } });
    assert.equal(stored.url, 'https://example.com/');
    assert.equal(stored.pad, 'x'.repeat(HISTORY_VALUE_MAX_CHARS) + CUT_MARKER);
    assert.ok(bytes(stored) <= HISTORY_PARAMS_MAX_BYTES);
  });

  test('anything but an object is an empty object', () => {
    for (const value of [null, 'text', 3, ['a']]) assert.deepEqual(boundedParams(value), {});
  });
});
