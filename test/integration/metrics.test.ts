/**
 * GET /metrics is never public by accident (no METRICS_* → no route; METRICS_TOKEN → bearer only;
 * METRICS_PORT → its own listener), reports requests, credits, upstream verdicts, latency and
 * circuits, pools and holds; GET /ready checks the database, migrations and pools while /health
 * stays liveness only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService } from '../support/service.ts';
import { startFakeUpstream } from '../support/fake-upstream.ts';
import { TEST_ENDPOINTS } from '../support/work-endpoint.ts';
import { readiness } from '../../src/http/readiness.ts';
import type { Adapter } from '../../src/adapters/kit/types.ts';

const TOKEN = 'metrics-token-0123456789';

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name + '{') && !line.startsWith(name + ' ')) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

test('without METRICS_PORT or METRICS_TOKEN there is no /metrics route', async () => {
  const service = await startTestService();
  try {
    assert.equal((await service.call('GET', '/metrics')).status, 404);
    assert.equal(service.server.metricsUrl(), undefined);
  } finally {
    await service.close();
  }
});

/** A GET of `path` on the fake upstream, read as `verdict`. */
function fakeAdapter(upstream: string, path: string, verdict: 'ok' | 'blocked'): Adapter<void, number> {
  return {
    upstream,
    operation: 'page',
    buildRequest: (_params, { baseUrl }) => ({ method: 'GET', url: `${baseUrl}${path}`, headers: {} }),
    parse: () => (verdict === 'ok' ? { kind: 'ok', value: 1 } : { kind: 'blocked', reason: 'captcha' }),
  };
}

test('METRICS_TOKEN: bearer only; requests, credits, upstream verdicts and circuits, holds and process metrics', async () => {
  const upstream = await startFakeUpstream();
  const service = await startTestService({ METRICS_TOKEN: TOKEN }, { endpoints: TEST_ENDPOINTS });
  try {
    assert.equal((await service.call('GET', '/metrics')).status, 401);
    assert.equal((await service.call('GET', '/metrics', { token: 'wrong-token-0123456789' })).status, 401);
    const user = await service.user({ scraping: 100 });
    assert.equal((await service.call('POST', '/v1/test/work', { token: user.token, body: { cost: 5, charge: 3 } })).status, 200);
    assert.equal((await service.call('POST', '/v1/test/work', { token: user.token, body: { cost: 4, outcome: 'fail' } })).status, 400);

    upstream.handle((hit) => (hit.path === '/slow' ? { status: 200, body: 'late', delayMs: 2000 } : { status: 200, body: 'fine' }));
    const runtime = service.services.capabilities.runtime;
    const fake = runtime.upstream({ timeoutMs: 1000, baseUrl: upstream.url, retry: false });
    assert.equal((await fake.call(fakeAdapter('fake', '/ok', 'ok'), undefined, {})).kind, 'ok');
    assert.equal((await fake.call(fakeAdapter('fake', '/slow', 'ok'), undefined, {})).kind, 'timeout');
    // A block opens the circuit at once: the next call is not made.
    assert.equal((await fake.call(fakeAdapter('fake', '/blocked', 'blocked'), undefined, {})).kind, 'blocked');
    // The breaker records the verdict after the call; with Redis (the scaled tier) that is a round trip.
    for (let waited = 0; !(await runtime.breaker.states()).has('fake'); waited += 10) {
      assert.ok(waited < 2000, "the block did not open the circuit");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal((await fake.call(fakeAdapter('fake', '/ok', 'ok'), undefined, {})).kind, 'suspended');
    // A caller that leaves: counted, but not as the upstream's latency.
    const leaving = new AbortController();
    setTimeout(() => leaving.abort(new Error('the client went away')), 200);
    await assert.rejects(fake.call(fakeAdapter('fake-other', '/slow', 'ok'), undefined, { signal: leaving.signal }), /went away/);

    const scrape = await service.call('GET', '/metrics', { token: TOKEN });
    assert.equal(scrape.status, 200);
    assert.match(scrape.headers.get('content-type') ?? '', /^text\/plain/);
    const text = scrape.text;
    assert.equal(sample(text, 'gleaner_http_requests_total', { route: '/v1/test/work', status: '200' }), 1);
    assert.equal(sample(text, 'gleaner_http_requests_total', { route: '/v1/test/work', status: '400' }), 1);
    assert.equal(sample(text, 'gleaner_http_request_duration_seconds_count', { route: '/v1/test/work' }), 2);
    assert.equal(sample(text, 'gleaner_credits_total', { product: 'scraping', outcome: 'charged' }), 3);
    assert.equal(sample(text, 'gleaner_credits_total', { product: 'scraping', outcome: 'released' }), 2 + 4);
    for (const verdict of ['ok', 'timeout', 'blocked', 'suspended']) {
      assert.equal(sample(text, 'gleaner_upstream_calls_total', { upstream: 'fake', operation: 'page', verdict }), 1, verdict);
    }
    assert.equal(sample(text, 'gleaner_upstream_duration_seconds_count', { upstream: 'fake', operation: 'page' }), 3, 'the suspended call is not timed');
    assert.ok((sample(text, 'gleaner_upstream_duration_seconds_sum', { upstream: 'fake', operation: 'page' }) ?? 0) >= 1, 'the timed-out call took its second');
    assert.equal(sample(text, 'gleaner_upstream_circuit_open', { upstream: 'fake' }), 1);
    assert.equal(sample(text, 'gleaner_upstream_calls_total', { upstream: 'fake-other', verdict: 'aborted' }), 1);
    assert.equal(sample(text, 'gleaner_upstream_duration_seconds_count', { upstream: 'fake-other' }), undefined, 'an aborted call is not timed');
    assert.equal(sample(text, 'gleaner_upstream_circuit_open', { upstream: 'fake-other' }), undefined, 'a circuit that never opened has no series');
    assert.equal(sample(text, 'gleaner_credit_holds'), 0);
    assert.ok((sample(text, 'gleaner_process_resident_memory_bytes') ?? 0) > 0, 'default process metrics');
  } finally {
    await service.close();
    await upstream.close();
  }
});

test('METRICS_PORT: a separate listener; the main port has no /metrics; pools report once started', async () => {
  const service = await startTestService({ METRICS_PORT: '0' });
  try {
    assert.equal((await service.call('GET', '/metrics')).status, 404);
    const url = service.server.metricsUrl();
    assert.ok(url && !url.startsWith(service.url), url);
    service.services.capabilities.pdf();
    service.services.capabilities.web();
    const text = await (await fetch(url)).text();
    assert.ok((sample(text, 'gleaner_pool_workers', { pool: 'pdf' }) ?? 0) >= 1, 'pdf workers');
    assert.equal(sample(text, 'gleaner_pool_queue_depth', { pool: 'pdf' }), 0);
    assert.equal(sample(text, 'gleaner_pool_busy_workers', { pool: 'pdf' }), 0);
    assert.equal(sample(text, 'gleaner_pool_workers', { pool: 'web' }), 2, 'web conversion processes');
    assert.equal(sample(text, 'gleaner_pool_recycled_workers_total', { pool: 'web' }), 0);
    assert.equal(sample(text, 'gleaner_pool_recycled_workers_total', { pool: 'pdf' }), undefined, 'the PDF pool does not recycle by count');
  } finally {
    await service.close();
  }
});

test('a bad METRICS_PORT stops the start with the variable name', async () => {
  await assert.rejects(startTestService({ METRICS_PORT: 'abc' }), /METRICS_PORT/);
});

test('/ready: 503 with the reason when migrations are behind or ahead or the pools are starting; /health stays 200', async () => {
  const service = await startTestService();
  try {
    assert.deepEqual((await service.call('GET', '/ready')).body, { status: 'ready' });
    await service.services.db.query("INSERT INTO schema_migrations (version) VALUES ('9999_from_a_newer_version')");
    const ahead = await service.call('GET', '/ready');
    assert.equal(ahead.status, 503);
    assert.match(ahead.body.message, /9999_from_a_newer_version/);
    await service.services.db.query("DELETE FROM schema_migrations WHERE version IN ('9999_from_a_newer_version', '0004_refunds')");
    const behind = await service.call('GET', '/ready');
    assert.equal(behind.status, 503);
    assert.match(behind.body.message, /pending migrations 0004_refunds/);
    await service.services.db.query("INSERT INTO schema_migrations (version) VALUES ('0004_refunds')");
    const starting = await readiness({ ...service.services, capabilities: { ...service.services.capabilities, started: () => false } });
    assert.deepEqual(starting, { ready: false, reason: 'The PDF, OCR and browser pools are starting.' });
    assert.equal((await service.call('GET', '/health')).status, 200);
  } finally {
    await service.close();
  }
});
