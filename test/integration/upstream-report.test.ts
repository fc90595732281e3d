/**
 * The upstream drift report through the real server: upstream calls (real ones, through the
 * runtime, against fake search engines on loopback; and events given to the store directly) are
 * flushed to the database, then read with GET /admin/upstreams (owner tokens only) and with
 * `gleaner upstreams`, which goes through the admin socket (embedded) or opens PostgreSQL itself
 * (the scaled tier, TEST_DATABASE_URL).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runGleaner, storageCliEnv } from '../support/cli.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { bingFixtures, fixtureResults, mojeekFixtures } from '../support/search-fixtures.ts';


let service: TestService;
let upstream: FakeUpstream;
let owner: string;
/** How the fake Bing answers the next search. */
let bing: 'results' | 'forbidden' = 'results';

before(async () => {
  upstream = await startFakeUpstream();
  upstream.handle((hit) => {
    const page = hit.path.startsWith('/bing')
      ? bing === 'results'
        ? bingFixtures.results(fixtureResults('bing', 10))
        : bingFixtures.blocked.forbidden
      : mojeekFixtures.results(fixtureResults('mojeek', 10));
    return { status: page.status, body: page.body };
  });
  service = await startTestService({
    SEARCH_ENGINES: 'bing,mojeek',
    UPSTREAM_BING_URL: `${upstream.url}/bing`,
    UPSTREAM_MOJEEK_URL: `${upstream.url}/mojeek`,
    SEARCH_TIMEOUT_MS: '3000',
  });
  assert.ok(service.owner, 'a fresh database creates the owner account');
  owner = service.owner.token;
});
after(async () => {
  await service.close();
  await upstream.close();
});

const report = (token = owner, query = '') => service.call('GET', `/admin/upstreams${query}`, { token });
const at = (ms: number) => new Date(ms).toISOString().replace('Z', '000Z');

/** `gleaner <args>` against this server's storage: its admin socket (embedded), or PostgreSQL directly. */
const gleaner = (...args: string[]) => runGleaner(args, storageCliEnv(service.env));

describe('GET /admin/upstreams', () => {
  test('owner tokens only; the report takes no query field', async () => {
    const user = await service.user();
    assert.equal((await service.call('GET', '/admin/upstreams')).status, 401);
    const refused = await report(user.token);
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.body, { message: 'This action is unauthorized.' });
    const filtered = await report(owner, '?upstream=bing');
    assert.equal(filtered.status, 422);
    assert.deepEqual(filtered.body.errors, { upstream: ['The upstream field is prohibited.'] });
  });

  test('events given to the store: verdicts, counts, last changed and blocked calls, circuits', async () => {
    const store = service.services.upstreamReport;
    const now = Date.now();
    store.record({ type: 'call', upstream: 'reddit', operation: 'listing', verdict: 'ok', status: 200, durationMs: 240, attempts: 1, at: now - 3_000 });
    store.record({ type: 'call', upstream: 'reddit', operation: 'listing', verdict: 'changed', status: 200, durationMs: 180, attempts: 1, at: now - 2_000 });
    store.record({ type: 'call', upstream: 'reddit', operation: 'listing', verdict: 'blocked', status: 429, durationMs: 90, attempts: 1, at: now - 1_000 });
    store.record({ type: 'circuit', upstream: 'reddit', state: 'open', openUntil: now + 60_000, trips: 1, at: now - 1_000 });
    assert.equal(await store.flush(), true);

    const r = await report();
    assert.equal(r.status, 200);
    const reddit = r.body.data.upstreams.find((u: { upstream: string }) => u.upstream === 'reddit');
    assert.deepEqual(reddit, {
      upstream: 'reddit',
      circuit: { state: 'open', open_until: at(now + 60_000), trips: 1, since: at(now - 1_000) },
      operations: [
        {
          upstream: 'reddit',
          operation: 'listing',
          last_verdicts: [
            { at: at(now - 1_000), verdict: 'blocked', status: 429, duration_ms: 90 },
            { at: at(now - 2_000), verdict: 'changed', status: 200, duration_ms: 180 },
            { at: at(now - 3_000), verdict: 'ok', status: 200, duration_ms: 240 },
          ],
          last_hour: { blocked: 1, changed: 1, ok: 1 },
          last_day: { blocked: 1, changed: 1, ok: 1 },
          last_changed: { at: at(now - 2_000), status: 200 },
          last_blocked: { at: at(now - 1_000), status: 429 },
          last_seen: at(now - 1_000),
        },
      ],
    });
    assert.match(r.body.data.generated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  test('real upstream calls reach the report through the runtime: an engine that answers, then refuses', async () => {
    const user = await service.user({ scraping: 100 });
    bing = 'results';
    assert.equal((await service.call('POST', '/v1/engine-search', { token: user.token, body: { query: 'drift report one' } })).status, 200);
    bing = 'forbidden';
    assert.equal((await service.call('POST', '/v1/engine-search', { token: user.token, body: { query: 'drift report two' } })).status, 200);
    assert.equal(await service.services.upstreamReport.flush(), true);

    const upstreams: Array<{ upstream: string; operations: Array<{ last_verdicts: Array<{ verdict: string; status: number | null }>; last_blocked: unknown }> }> =
      (await report()).body.data.upstreams;
    const verdicts = (name: string) => upstreams.find((u) => u.upstream === name)?.operations.flatMap((o) => o.last_verdicts) ?? [];
    assert.deepEqual(
      verdicts('bing').map((v) => [v.verdict, v.status]),
      [['blocked', 403], ['ok', null]],
    );
    assert.deepEqual(verdicts('mojeek').map((v) => [v.verdict, v.status]), [['ok', null]]);
    // The queries asked never reach the report.
    assert.doesNotMatch(JSON.stringify(upstreams), /drift report/);
  });
});

describe('gleaner upstreams', () => {
  test('--json prints the report the admin API answers', async () => {
    const store = service.services.upstreamReport;
    store.record({ type: 'call', upstream: 'x', operation: 'TweetResultByRestId', verdict: 'not_found', status: 200, durationMs: 300, attempts: 1, at: Date.now() });
    assert.equal(await store.flush(), true);

    const result = await gleaner('upstreams', '--json');
    assert.equal(result.code, 0, result.stdout + result.stderr);
    const printed = JSON.parse(result.stdout);
    const answered = (await report()).body.data;
    delete printed.generated_at;
    delete answered.generated_at;
    assert.deepEqual(printed, answered);
    assert.ok(printed.upstreams.some((u: { upstream: string }) => u.upstream === 'x'));
  });

  test('without --json, a table: one row per upstream operation', async () => {
    const result = await gleaner('upstreams');
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^upstream +operation +circuit /m);
    assert.match(result.stdout, /^reddit +listing +open until .*blocked 429, changed 200, ok/m);
    assert.match(result.stdout, /^x +TweetResultByRestId +.*not_found 200/m);
    assert.doesNotMatch(result.stdout, /\(index\)|'/);
  });

  test('an unknown subcommand is a usage error', async () => {
    const result = await gleaner('upstreams', 'everything', '--json');
    assert.equal(result.code, 2);
    assert.match(JSON.parse(result.stdout).error, /Unknown command "upstreams everything"/);
  });
});
