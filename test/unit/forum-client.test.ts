/** The forum client over the real upstream runtime with a scripted outbound client: what it logs and when it does not call. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createUpstreamRuntime } from '../../src/adapters/kit/runtime.ts';
import type { BreakerPolicy } from '../../src/adapters/kit/breaker.ts';
import { ForumClient } from '../../src/adapters/reddit/client.ts';
import type { OutboundClient, OutboundResponse } from '../../src/outbound/types.ts';
import { listing, post } from '../support/forum-fixtures.ts';

function scripted(answers: Array<Partial<OutboundResponse> & { body?: Buffer }>, breaker?: Partial<BreakerPolicy>) {
  const urls: string[] = [];
  const outbound: OutboundClient = {
    async fetch(url) {
      urls.push(url);
      const next = answers.shift() ?? { status: 200, body: Buffer.from(JSON.stringify(listing([post('x1')]))) };
      return { url, status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(''), hops: [url], ...next };
    },
    isPublicUrl: async () => true,
  };
  // The request's logger (each call's failures) and the runtime's own (circuit changes) apart.
  const warnings: Array<Record<string, unknown>> = [];
  const log = { warn: (details: Record<string, unknown>) => void warnings.push(details) };
  const runtimeWarnings: Array<Record<string, unknown>> = [];
  const runtime = createUpstreamRuntime({ outbound, logger: { warn: (details) => void runtimeWarnings.push(details) }, breaker: breaker && { policy: breaker } });
  const client = new ForumClient({
    runtime,
    baseUrl: 'https://www.reddit.com',
    authUrl: 'https://www.reddit.com',
    userAgent: 'ua',
    timeoutMs: 1000,
  });
  return { client, urls, warnings, runtimeWarnings, context: { log, requestId: 'req-1' } };
}

test('a failure is logged with the upstream status and the operation', async () => {
  const { client, warnings, context } = scripted([{ status: 503, headers: { 'content-type': 'text/html' }, body: Buffer.from('<html>down</html>') }]);
  const outcome = await client.listing({ subreddit: 'testsub', sort: 'hot', limit: 25 }, context);
  assert.equal(outcome.kind, 'unavailable');
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0].upstream, 'reddit');
  assert.equal(warnings[0].operation, 'listing');
  assert.equal(warnings[0].status, 503);
  assert.equal(warnings[0].verdict, 'blocked');
  assert.equal(warnings[0].requestId, 'req-1');
});

test('after a 429 naming its reset, requests are refused without a call, and logged', async () => {
  // A breaker that lets the next call probe at once, so it reaches the client's rate budget (with
  // the default policy the block opens Reddit's circuit and the call is suspended: the next test).
  const { client, urls, warnings, context } = scripted([{ status: 429, headers: { 'content-type': 'application/json', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '60' }, body: Buffer.from('{"message":"Too Many Requests","error":429}') }], { baseBackoffMs: 0 });
  assert.equal((await client.thread('p1', context)).kind, 'unavailable');
  assert.equal((await client.thread('p1', context)).kind, 'unavailable');
  assert.equal(urls.length, 1);
  assert.deepEqual(
    warnings.map((w) => [w.operation, w.verdict, w.status, w.reason]),
    [
      ['thread', 'blocked', 429, 'rate limited (429)'],
      ['thread', 'blocked', undefined, 'rate-limit budget spent, resets in 60 s'],
    ],
  );
});

test('a block opens Reddit\'s circuit: the next call is suspended without a call, and logged', async () => {
  const { client, urls, warnings, runtimeWarnings, context } = scripted([{ status: 429, headers: { 'content-type': 'application/json', 'retry-after': '1' }, body: Buffer.from('{"message":"Too Many Requests","error":429}') }]);
  assert.equal((await client.thread('p1', context)).kind, 'unavailable');
  const second = await client.thread('p1', context);
  assert.equal(second.kind, 'unavailable');
  assert.match(second.kind === 'unavailable' ? second.reason : '', /^circuit open until /);
  assert.equal(urls.length, 1);
  assert.deepEqual(
    warnings.map((w) => [w.operation, w.verdict, w.status]),
    [
      ['thread', 'blocked', 429],
      ['thread', 'suspended', undefined],
    ],
  );
  // The circuit's opening is the runtime's news, on its own logger, once.
  assert.equal(runtimeWarnings.filter((w) => w.upstream === 'reddit' && w.trips === 1).length, 1);
});

test('not found is not a failure: nothing is logged', async () => {
  const { client, warnings, runtimeWarnings, context } = scripted([{ status: 404, body: Buffer.from('{"message":"Not Found","error":404}') }]);
  assert.deepEqual(await client.thread('zz', context), { kind: 'not_found' });
  assert.equal(warnings.length, 0);
  assert.equal(runtimeWarnings.length, 0);
});

test('a call without a request logs on the runtime\'s own logger', async () => {
  const { client, warnings, runtimeWarnings } = scripted([{ status: 503, headers: { 'content-type': 'text/html' }, body: Buffer.from('<html>down</html>') }]);
  assert.equal((await client.thread('p1')).kind, 'unavailable');
  assert.equal(warnings.length, 0);
  assert.deepEqual(
    runtimeWarnings.filter((w) => w.verdict !== undefined).map((w) => [w.operation, w.verdict, w.status]),
    [['thread', 'blocked', 503]],
  );
});
