/** The forum client over the real runner with a scripted outbound client: what it logs and when it does not call. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createUpstreamRunner } from '../../src/adapters/kit/runner.ts';
import { ForumClient } from '../../src/adapters/reddit/client.ts';
import type { OutboundClient, OutboundResponse } from '../../src/outbound/types.ts';
import { listing, post } from '../support/forum-fixtures.ts';

function scripted(answers: Array<Partial<OutboundResponse> & { body?: Buffer }>) {
  const urls: string[] = [];
  const outbound: OutboundClient = {
    async fetch(url) {
      urls.push(url);
      const next = answers.shift() ?? { status: 200, body: Buffer.from(JSON.stringify(listing([post('x1')]))) };
      return { url, status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(''), hops: [url], ...next };
    },
    isPublicUrl: async () => true,
  };
  const warnings: Array<Record<string, unknown>> = [];
  const logger = { warn: (details: Record<string, unknown>) => void warnings.push(details) };
  const client = new ForumClient({
    runner: createUpstreamRunner({ outbound, logger }),
    baseUrl: 'https://www.reddit.com',
    authUrl: 'https://www.reddit.com',
    userAgent: 'ua',
    timeoutMs: 1000,
    logger,
  });
  return { client, urls, warnings };
}

test('a failure is logged with the upstream status and the operation', async () => {
  const { client, warnings } = scripted([{ status: 503, headers: { 'content-type': 'text/html' }, body: Buffer.from('<html>down</html>') }]);
  const outcome = await client.listing({ subreddit: 'testsub', sort: 'hot', limit: 25 });
  assert.equal(outcome.kind, 'unavailable');
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0].upstream, 'reddit');
  assert.equal(warnings[0].operation, 'listing');
  assert.equal(warnings[0].status, 503);
  assert.equal(warnings[0].verdict, 'blocked');
});

test('after a 429 naming its reset, requests are refused without a call, and logged', async () => {
  const { client, urls, warnings } = scripted([{ status: 429, headers: { 'content-type': 'application/json', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '60' }, body: Buffer.from('{"message":"Too Many Requests","error":429}') }]);
  assert.equal((await client.thread('p1')).kind, 'unavailable');
  assert.equal((await client.thread('p1')).kind, 'unavailable');
  assert.equal(urls.length, 1);
  assert.deepEqual(
    warnings.map((w) => [w.operation, w.status, w.reason]),
    [
      ['thread', 429, 'rate limited (429)'],
      ['thread', undefined, 'rate-limit budget spent'],
    ],
  );
});

test('not found is not a failure: nothing is logged', async () => {
  const { client, warnings } = scripted([{ status: 404, body: Buffer.from('{"message":"Not Found","error":404}') }]);
  assert.deepEqual(await client.thread('zz'), { kind: 'not_found' });
  assert.equal(warnings.length, 0);
});
