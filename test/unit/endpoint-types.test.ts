/**
 * Endpoint rows are typed from their schema: `npm test` type-checks this file, and each
 * `@ts-expect-error` fails the check if the error it expects is no longer reported.
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { defineEndpoint } from '../../src/pipeline/endpoint.ts';
import { boolean, custom, integer, oneOf, required, string } from '../../src/validation/rules.ts';

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
    },
  },
  billing: { product: 'scraping', operation: 'forum', units: (input) => (input.limit ?? 1) },
  history: true,
  success: { status: 200, description: 'ok' },
  async handler({ input }) {
    const query: string = input.query;
    const sort: 'hot' | 'new' = input.sort;
    // @ts-expect-error an optional field may be absent
    const limit: number = input.limit;
    const nsfw: boolean | undefined = input.nsfw;
    // @ts-expect-error a field the schema does not declare
    const other = input.other;
    return { body: { query, sort, limit, nsfw, other } };
  },
});

test('a typed row is held in the table untyped, with its parts intact', () => {
  assert.equal(row.path, '/v1/typed');
  assert.equal(row.billing?.units?.({ limit: 7 }), 7);
});
