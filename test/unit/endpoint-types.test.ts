/**
 * Endpoint rows are typed from their schema: `npm test` type-checks this file, and each
 * `@ts-expect-error` fails the check if the error it expects is no longer reported.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { defineEndpoint } from '../../src/pipeline/endpoint.ts';
import { between, boolean, custom, format, integer, oneOf, parsed, prohibits, required, requiredWithout, string, stringList, url } from '../../src/validation/rules.ts';
import { field, validate } from '../../src/validation/schema.ts';

const row = defineEndpoint({
  method: 'POST',
  path: '/v1/typed',
  summary: 'Typed',
  tag: 'Test',
  input: 'body',
  schema: {
    fields: {
      query: { rules: [required(), string(), custom('x', () => true, 'x')] },
      sort: { rules: [string(), oneOf(['hot', 'new'])], default: 'hot' },
      limit: { rules: [integer()] },
      nsfw: { rules: [boolean()] },
      urls: { rules: [required(), stringList(), between(1, 10)] },
    },
  },
  billing: { product: 'scraping', operation: 'forum', units: (input) => (input.limit ?? input.urls.length) },
  history: true,
  success: { status: 200, description: 'ok' },
  async handler({ input }) {
    const query: string = input.query;
    const sort: 'hot' | 'new' = input.sort;
    // @ts-expect-error an optional field may be absent
    const limit: number = input.limit;
    const nsfw: boolean | undefined = input.nsfw;
    const urls: string[] = input.urls;
    // @ts-expect-error a field the schema does not declare
    const other = input.other;
    return { body: { query, sort, limit, nsfw, urls, other } };
  },
});

test('a typed row is held in the table untyped, with its parts intact', () => {
  assert.equal(row.path, '/v1/typed');
  assert.equal(row.billing?.units?.({ limit: 7 }), 7);
  assert.equal(row.billing?.units?.({ urls: ['a', 'b'] }), 2);
});

test('a list of strings is handed over as strings', async () => {
  const result = await validate(row.schema, { query: 'q', urls: ['https://example.com/'] });
  assert.deepEqual(result.ok && result.value.urls, ['https://example.com/']);
  const notList = await validate(row.schema, { query: 'q', urls: 'https://example.com/' });
  assert.equal(!notList.ok && notList.errors.urls[0], 'The urls must be an array.');
});

test('no row casts its input, and the table holds rows without a cast: the rules give every type', () => {
  const src = path.resolve(import.meta.dirname, '../../src');
  const casts: string[] = [];
  for (const name of readdirSync(path.join(src, 'endpoints'))) {
    const source = readFileSync(path.join(src, 'endpoints', name), 'utf8');
    for (const match of source.matchAll(/\binput(?:\.\w+|\[[^\]]+\])\)?\s+as\s+(?!const\b)\S+/g)) casts.push(`endpoints/${name}: ${match[0]}`);
  }
  const rows = readFileSync(path.join(src, 'pipeline', 'endpoint.ts'), 'utf8');
  for (const match of rows.matchAll(/\bas\s+(?:unknown\s+as\s+)?Endpoint\b/g)) casts.push(`pipeline/endpoint.ts: ${match[0]}`);
  assert.deepEqual(casts, []);
});

/** A transforming rule: a "ticket" URL is checked as a URL and handed over as its number. */
const ticketNumber = parsed('ticket_url', (value) => (typeof value === 'string' ? (/\/tickets\/(\d+)$/.exec(value)?.[1] ?? null) : null), 'The url must be a ticket URL.');
const ticketId = format((value) => (/^#?\d+$/.test(value) ? { number: value.replace('#', '') } : null));

const transforming = defineEndpoint({
  method: 'POST',
  path: '/v1/tickets',
  summary: 'Transformed',
  tag: 'Test',
  input: 'body',
  schema: {
    fields: {
      url: { rules: [requiredWithout('id'), string(), url(), prohibits('id'), ticketNumber] },
      id: { rules: [requiredWithout('url'), string(), prohibits('url'), ticketId] },
      tags: { rules: [custom('tags', () => true, 'x'), parsed('tags', (value) => (Array.isArray(value) ? value.map(String) : null), 'x')] },
      page: field({ rules: [integer()], default: 1 }),
    },
  },
  history: true,
  success: { status: 200, description: 'ok' },
  async handler({ input }) {
    // The transformed types, not the wire's: a string and an object.
    const number: string = input.url !== undefined ? input.url : input.id.number;
    // @ts-expect-error the id is an object once transformed, not the string sent
    const sent: string | undefined = input.id;
    // @ts-expect-error either field may be the absent one
    const url: string = input.url;
    const tags: string[] | undefined = input.tags;
    const page: number = input.page;
    return { body: { number, sent, url, tags, page } };
  },
});

test('a transforming rule hands the handler its reading of the value', async () => {
  const result = await validate(transforming.schema, { url: ' https://example.com/tickets/42 ', tags: [1, 'b'] });
  assert.ok(result.ok);
  assert.deepEqual(result.value, { url: '42', tags: ['1', 'b'], page: 1 });
  const byId = await validate(transforming.schema, { id: '#7', page: '3' });
  assert.ok(byId.ok);
  assert.deepEqual(byId.value, { id: { number: '7' }, page: 3 });
  const both = await validate(transforming.schema, { url: 'https://example.com/tickets/42', id: '7' });
  assert.deepEqual(!both.ok && both.errors, { url: ['The url field prohibits id from being present.'], id: ['The id field prohibits url from being present.'] });
  const neither = await validate(transforming.schema, {});
  assert.deepEqual(!neither.ok && neither.errors, { url: ['The url field is required when id is not present.'], id: ['The id field is required when url is not present.'] });
  const wrong = await validate(transforming.schema, { url: 'https://example.com/issues/42' });
  assert.deepEqual(!wrong.ok && wrong.errors, { url: ['The url must be a ticket URL.'] });
});
