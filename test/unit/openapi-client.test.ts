/**
 * The typed client's generated files (client/src/schema.ts, operations.ts) match the current
 * endpoint table: after changing a row, run `npm run client:generate`. Plus compile-time checks
 * that the methods are typed from the document (`npx tsc` fails if an expectation breaks).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { generateClientFiles } from '../../client/scripts/generated-files.ts';
import { createGleanerClient, type InputOf, type OutputOf } from '../../client/src/index.ts';

test('the generated client files are up to date (npm run client:generate)', async () => {
  const files = await generateClientFiles();
  for (const [name, expected] of Object.entries(files)) {
    const actual = readFileSync(new URL(`../../client/src/${name}`, import.meta.url), 'utf8');
    assert.ok(actual === expected, `client/src/${name} is stale: run \`npm run client:generate\` and commit the result`);
  }
});

test('methods are typed from the document', () => {
  const client = createGleanerClient({ baseUrl: 'http://127.0.0.1:9', token: 'x' });
  const typed = async () => {
    const results: OutputOf<'search'> = await client.search({ query: 'q', per_page: 20 });
    const title: string = results.response[0].title;
    const usage = await client.getUsage();
    const credits: number = usage.data[0].credits;
    // @ts-expect-error: query is required
    await client.search({});
    // @ts-expect-error: per_page is a number
    await client.search({ query: 'q', per_page: '20' });
    // @ts-expect-error: the user path parameter is required
    await client.getAdminUsersByUser({});
    const input: InputOf<'postAdminUsersByUserCredits'> = { user: 2, product: 'scraping', amount: 10 };
    return [title, credits, input];
  };
  assert.equal(typeof typed, 'function');
});
