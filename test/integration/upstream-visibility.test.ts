/**
 * The upstream runtime's acceptance test, through the real server: a search engine, Reddit, X and
 * a /v1/web target all answering block pages. Each request answers 502 uncharged; every blocked
 * call is counted in /metrics by upstream, operation and verdict, and logged once on the
 * request's logger (its request id, the upstream, the operation, the verdict, the status and the
 * duration; never the query or a credential); a blocked engine's circuit opens, so the next
 * search does not ask it. Runs the same way in the scaled tier (TEST_DATABASE_URL and
 * TEST_REDIS_URL), where the circuit breaker's state lives in Redis.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { startTestService, type TestResponse, type TestService } from '../support/service.ts';
import { startFakeUpstream, type FakeUpstream, type UpstreamAnswer } from '../support/fake-upstream.ts';
import { bingFixtures } from '../support/search-fixtures.ts';
import { DEFAULT_X_CONFIG_FILE, parseXConfig } from '../../src/adapters/x/config.ts';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const REDDIT_CLIENT_ID = 'visibility-client-id';
const REDDIT_CLIENT_SECRET = 'visibility-client-secret-4f9a';
const REDDIT_ACCESS_TOKEN = 'reddit-access-token-8c1e77';
const GUEST_TOKEN = '7777000011112222333';
const X_BEARER_TOKEN = parseXConfig(JSON.parse(readFileSync(DEFAULT_X_CONFIG_FILE, 'utf8'))).bearerToken;

// What each request asks for: none of it may reach a log line.
const SEARCH_QUERY = 'visibility-search-query-kestrel';
const FORUM_QUERY = 'visibility-forum-query-osprey';
const POST_ID = '1649191520250245121';
const WEB_SECRET = 'visibility-web-secret-heron';

const html = (body: string, status: number): UpstreamAnswer => ({ status, headers: { 'content-type': 'text/html; charset=utf-8' }, body });
const BLOCK_PAGE = '<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>Checking your browser</body></html>';

let service: TestService;
let upstream: FakeUpstream;
const lines: Array<Record<string, unknown>> = [];
const rawLog: string[] = [];

/** The service's log: one JSON object per line, kept as written and parsed. */
const stream = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      rawLog.push(line);
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // Not JSON: kept in rawLog for the secrets check only.
      }
    }
    done();
  },
});

before(async () => {
  upstream = await startFakeUpstream();
  upstream.handle((hit) => {
    // Bing: a captcha page (answered 200).
    if (hit.path.startsWith('/bing/')) {
      const page = bingFixtures.blocked.challenge;
      return html(page.body, page.status);
    }
    // Reddit: a token for the right credentials, then 429 on every API call.
    if (hit.path === '/reddit-auth/api/v1/access_token') {
      const basic = `Basic ${Buffer.from(`${REDDIT_CLIENT_ID}:${REDDIT_CLIENT_SECRET}`).toString('base64')}`;
      if (hit.headers.authorization !== basic) return { status: 401, headers: { 'content-type': 'application/json' }, body: '{"error":401}' };
      return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ access_token: REDDIT_ACCESS_TOKEN, token_type: 'bearer', expires_in: 3600, scope: '*' }) };
    }
    if (hit.path.startsWith('/reddit/')) return { status: 429, headers: { 'content-type': 'application/json' }, body: '{"message":"Too Many Requests","error":429}' };
    // X: a guest token, then a block page with 403 on the guest GraphQL and on the embed source.
    if (hit.path === '/x-api/1.1/guest/activate.json') return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ guest_token: GUEST_TOKEN }) };
    if (hit.path.startsWith('/x-gql/') || hit.path.startsWith('/x-syn/')) return html(BLOCK_PAGE, 403);
    // The /v1/web target: refused.
    if (hit.path === '/site/page') return html('<html><body>Forbidden</body></html>', 403);
    return { status: 404, body: 'no such path' };
  });
  service = await startTestService(
    {
      METRICS_TOKEN,
      LOG_LEVEL: 'info',
      SEARCH_ENGINES: 'bing',
      UPSTREAM_BING_URL: `${upstream.url}/bing`,
      SEARCH_TIMEOUT_MS: '3000',
      REDDIT_CLIENT_ID,
      REDDIT_CLIENT_SECRET,
      UPSTREAM_REDDIT_URL: `${upstream.url}/reddit`,
      UPSTREAM_REDDIT_AUTH_URL: `${upstream.url}/reddit-auth`,
      REDDIT_TIMEOUT_MS: '3000',
      UPSTREAM_X_URL: `${upstream.url}/x-gql`,
      UPSTREAM_X_API_URL: `${upstream.url}/x-api`,
      UPSTREAM_X_SYNDICATION_URL: `${upstream.url}/x-syn`,
      X_TIMEOUT_MS: '3000',
    },
    { logger: { level: 'info', stream } },
  );
});

after(async () => {
  await service?.close();
  await upstream?.close();
});

const hitsUnder = (prefix: string) => upstream.hits.filter((hit) => hit.path.startsWith(prefix));

async function metricsText(): Promise<string> {
  const r = await service.call('GET', '/metrics', { token: METRICS_TOKEN });
  assert.equal(r.status, 200);
  return r.text;
}

/** /metrics once every line of `expected` is in it (the breaker's store may be Redis: its state lands a moment after the answer). */
async function metricsShowing(expected: string[]): Promise<string> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const text = await metricsText();
    const missing = expected.filter((line) => !text.split('\n').some((l) => l === line || l.startsWith(`${line} `)));
    if (missing.length === 0) return text;
    if (Date.now() > deadline) assert.fail(`/metrics lacks ${missing.join(', ')}\n${text.split('\n').filter((l) => l.startsWith('gleaner_upstream')).join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The runtime's one failure line of a request: the request id its answer carried. */
function failureLines(response: TestResponse): Array<Record<string, unknown>> {
  const requestId = response.headers.get('x-request-id');
  assert.ok(requestId, 'the answer names its request id');
  return lines.filter((line) => line.requestId === requestId && line.verdict !== undefined);
}

const SECRETS = [REDDIT_CLIENT_SECRET, Buffer.from(`${REDDIT_CLIENT_ID}:${REDDIT_CLIENT_SECRET}`).toString('base64'), REDDIT_ACCESS_TOKEN, GUEST_TOKEN, X_BEARER_TOKEN];

test('blocked upstreams: 502 uncharged, counted per upstream and verdict, logged once per request without query or credential; the circuit opens', async () => {
  const user = await service.user({ scraping: 100 });
  const call = (route: string, body: unknown) => service.call('POST', route, { token: user.token, body });

  const search = await call('/v1/engine-search', { query: SEARCH_QUERY });
  const forum = await call('/v1/forum/search', { query: FORUM_QUERY });
  const microblog = await call('/v1/mb/tweet', { id: POST_ID });
  const web = await call('/v1/web', { url: `${upstream.url}/site/page?secret=${WEB_SECRET}` });
  for (const [name, response] of Object.entries({ search, forum, microblog, web })) assert.equal(response.status, 502, `${name}: ${response.text}`);
  assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 100, 'nothing charged');
  assert.equal(hitsUnder('/bing/').length, 1);
  assert.ok(hitsUnder('/reddit/').length >= 1, 'Reddit was asked');
  assert.ok(hitsUnder('/x-gql/').length >= 1, 'X was asked');

  // /metrics: a blocked verdict per upstream and operation, and Bing's circuit open.
  const text = await metricsShowing([
    'gleaner_upstream_calls_total{upstream="bing",operation="search",verdict="blocked"}',
    'gleaner_upstream_calls_total{upstream="reddit",operation="search",verdict="blocked"}',
    'gleaner_upstream_calls_total{upstream="x",operation="TweetResultByRestId",verdict="blocked"}',
    'gleaner_upstream_calls_total{upstream="web",operation="page",verdict="blocked"}',
    'gleaner_upstream_circuit_open{upstream="bing"} 1',
  ]);
  assert.match(text, /^gleaner_upstream_calls_total\{upstream="bing",operation="search",verdict="blocked"\} 1$/m);

  // The log: for each request, one line of the runtime naming it, with no query and no credential.
  const expected: Array<[string, TestResponse, string, string, number, string]> = [
    ['search', search, 'bing', 'search', 200, SEARCH_QUERY],
    ['forum', forum, 'reddit', 'search', 429, FORUM_QUERY],
    ['microblog', microblog, 'x', 'TweetResultByRestId', 403, POST_ID],
    ['web', web, 'web', 'page', 403, WEB_SECRET],
  ];
  for (const [name, response, upstreamName, operation, status, asked] of expected) {
    const found = failureLines(response);
    assert.equal(found.length, 1, `${name}: one failure line (${JSON.stringify(found)})`);
    const [line] = found;
    assert.equal(line.level, 40, `${name}: a warning`);
    assert.equal(line.upstream, upstreamName, name);
    assert.equal(line.operation, operation, name);
    assert.equal(line.verdict, 'blocked', name);
    assert.equal(line.status, status, name);
    assert.equal(typeof line.durationMs, 'number', name);
    assert.ok((line.durationMs as number) >= 0, name);
    const written = JSON.stringify(line);
    assert.ok(!written.includes(asked), `${name}: the log line does not carry what was asked (${written})`);
    for (const secret of SECRETS) assert.ok(!written.includes(secret), `${name}: the log line carries no credential (${written})`);
  }
  // No credential anywhere in the service's log.
  for (const secret of SECRETS) assert.ok(!rawLog.some((line) => line.includes(secret)), 'no credential in the log');

  // Bing's circuit is open: the next search is answered without asking it, and not charged.
  const again = await call('/v1/engine-search', { query: `${SEARCH_QUERY} again` });
  assert.equal(again.status, 502, again.text);
  assert.equal(hitsUnder('/bing/').length, 1, 'Bing was not asked again');
  assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 100);
  const suspended = failureLines(again);
  assert.deepEqual(
    suspended.map((line) => [line.upstream, line.operation, line.verdict]),
    [['bing', 'search', 'suspended']],
  );
  await metricsShowing(['gleaner_upstream_calls_total{upstream="bing",operation="search",verdict="suspended"}', 'gleaner_upstream_circuit_open{upstream="bing"} 1']);
});
