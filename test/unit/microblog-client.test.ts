/** The microblog client's logs: failures name the operation and X's status; sessions are never logged by cookie. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { XClient } from '../../src/adapters/x/client.ts';
import { AccountPool, MemoryPoolState } from '../../src/adapters/x/accounts.ts';
import { DEFAULT_X_CONFIG_FILE, parseXConfig } from '../../src/adapters/x/config.ts';
import { parseSessions } from '../../src/adapters/x/requests.ts';
import { createUpstreamRuntime } from '../../src/adapters/kit/runtime.ts';
import type { UpstreamRequest, UpstreamResponse } from '../../src/adapters/kit/types.ts';
import type { OutboundClient } from '../../src/outbound/types.ts';
import { userBody, userResult } from '../support/microblog-fixtures.ts';

function clientAnswering(answer: (request: UpstreamRequest) => Omit<UpstreamResponse, 'url' | 'bytes'>) {
  const logs: Array<{ details: Record<string, unknown>; message: string }> = [];
  const outbound: OutboundClient = {
    async fetch(url, request) {
      const upstreamRequest: UpstreamRequest = { url, method: (request.method ?? 'GET') as UpstreamRequest['method'], headers: request.headers ?? {} };
      const answered = answer(upstreamRequest);
      return { url, status: answered.status, headers: answered.headers, body: Buffer.from(answered.body), hops: [url] };
    },
    isPublicUrl: async () => true,
  };
  const client = new XClient({
    config: parseXConfig(JSON.parse(readFileSync(DEFAULT_X_CONFIG_FILE, 'utf8'))),
    runtime: createUpstreamRuntime({ outbound }),
    pool: new AccountPool(parseSessions(['secretauthA:secretcsrfA', 'secretauthB:secretcsrfB']), new MemoryPoolState()),
    baseUrls: { graphql: 'https://x.test', api: 'https://api.x.test', syndication: 'https://syn.x.test' },
    timeoutMs: 1000,
  });
  return { client, logs, log: { warn: (details: Record<string, unknown>, message: string) => void logs.push({ details, message }) } };
}

test('a changed query id is logged with the operation and the status', async () => {
  const { client, logs, log } = clientAnswering(() => ({ status: 404, headers: {}, body: '' }));
  assert.deepEqual(await client.user('jack', { log }), { kind: 'unavailable', reason: 'changed: 404 with an empty body: the query id may have changed' });
  assert.equal(logs.length, 1);
  assert.equal(logs[0].details.operation, 'UserByScreenName');
  assert.equal(logs[0].details.status, 404);
  assert.equal(logs[0].details.upstream, 'x');
});

test('a sidelined session is named by position and hash, never by its cookies', async () => {
  const { client, logs, log } = clientAnswering((request) =>
    request.headers.cookie?.includes('secretauthA')
      ? { status: 403, headers: { 'content-type': 'application/json' }, body: '{"errors":[{"code":326,"message":"locked"}]}' }
      : { status: 200, headers: { 'content-type': 'application/json' }, body: userBody(userResult({ id: '1', screen_name: 'jack' })) },
  );
  for (let i = 0; i < 2; i++) assert.equal((await client.user('jack', { log })).kind, 'ok');
  assert.equal(logs.length, 1);
  assert.match(logs[0].message, /^x session #1 \([0-9a-f]{10}\) sidelined \(refused: status 403, code 326\)$/);
  assert.ok(!JSON.stringify(logs).includes('secret'), 'no cookie value in the log');
});

test('with no session left the failure says why', async () => {
  const { client, logs, log } = clientAnswering(() => ({ status: 429, headers: { 'content-type': 'application/json' }, body: '{"errors":[{"code":88}]}' }));
  const result = await client.search('q', 'latest', undefined, { log });
  // The reason names the verdict first, as every other failure's does.
  assert.deepEqual(result, { kind: 'unavailable', reason: 'blocked: no session left: rate-limited' });
  assert.equal(logs.at(-1)?.details.operation, 'SearchTimeline');
  assert.equal(logs.at(-1)?.details.status, 429);
  assert.equal(logs.at(-1)?.details.verdict, 'blocked');
  assert.ok(!JSON.stringify(logs).includes('secret'), 'no cookie value in the log');
});
