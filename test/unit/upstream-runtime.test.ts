/**
 * The upstream runtime (src/adapters/kit/runtime.ts) and its circuit breaker (breaker.ts), on a
 * fake outbound client: one deadline per call across its retries, the caller's abort, parsers
 * that throw, which failures are retried, interceptors, the breaker's rules, the events told to
 * watchers and the one log line of a failed call.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { OutboundError, type OutboundClient, type OutboundRequest, type OutboundResponse } from '../../src/outbound/types.ts';
import { createUpstreamRuntime, DEFAULT_RETRY, type Interceptor, type UpstreamProfile, type UpstreamRuntimeOptions } from '../../src/adapters/kit/runtime.ts';
import { DEFAULT_BREAKER_POLICY, transition, type BreakerPolicy, type BreakerStore, type CircuitState } from '../../src/adapters/kit/breaker.ts';
import type { Adapter, RuntimeEvent, UpstreamLogger, Verdict } from '../../src/adapters/kit/types.ts';

// ---- a fake upstream ------------------------------------------------------------------------------

interface Answer {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
}
type Reply = Answer | Error | Promise<Answer | Error>;
interface Sent {
  url: string;
  request: OutboundRequest;
  at: number;
}

/** An outbound client whose n-th fetch (0-based) is answered by `reply(n, request)`. */
function fakeOutbound(reply: (index: number, url: string, request: OutboundRequest) => Reply) {
  const sent: Sent[] = [];
  const outbound: OutboundClient = {
    async fetch(url: string, request: OutboundRequest): Promise<OutboundResponse> {
      const index = sent.length;
      sent.push({ url, request, at: performance.now() });
      const answer = await reply(index, url, request);
      if (answer instanceof Error) throw answer;
      return {
        url,
        status: answer.status ?? 200,
        headers: answer.headers ?? { 'content-type': 'text/plain; charset=utf-8' },
        body: Buffer.from(answer.body ?? 'hello', 'utf8'),
        hops: [url],
      };
    },
    async isPublicUrl() {
      return true;
    },
  };
  return { outbound, sent };
}

/** Never answers unless its signal aborts (a transport that respects the deadline). */
function hang(request: OutboundRequest): Promise<Error> {
  return new Promise((resolve) => request.signal?.addEventListener('abort', () => resolve(new OutboundError('timeout', 'aborted', '')), { once: true }));
}

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Params {
  q: string;
}

/** A small adapter: 200 is the body, 403 blocked, 404 not found, 204 empty, anything else changed. */
function adapter(overrides: Partial<Adapter<Params, string>> = {}): Adapter<Params, string> {
  return {
    upstream: 'fake',
    operation: 'lookup',
    baseUrl: 'http://fake.test',
    buildRequest: (params, { baseUrl }) => ({ url: `${baseUrl}/search?q=${encodeURIComponent(params.q)}`, method: 'GET', headers: {} }),
    parse: (response) => {
      if (response.status === 200) return { kind: 'ok', value: response.body };
      if (response.status === 403 || response.status === 401) return { kind: 'blocked', reason: `HTTP ${response.status}` };
      if (response.status === 404) return { kind: 'not_found' };
      if (response.status === 204) return { kind: 'empty' };
      return { kind: 'changed', reason: `unexpected HTTP ${response.status}` };
    },
    ...overrides,
  };
}

interface Line {
  details: Record<string, unknown>;
  message: string;
}

function collector() {
  const lines: Line[] = [];
  const logger: UpstreamLogger = { warn: (details, message) => lines.push({ details, message }) };
  return { lines, logger };
}

/** A runtime on `outbound`, its events and its own log lines kept. */
function runtimeOn(outbound: OutboundClient, options: Partial<UpstreamRuntimeOptions> = {}) {
  const service = collector();
  const runtime = createUpstreamRuntime({ outbound, logger: service.logger, ...options });
  const events: RuntimeEvent[] = [];
  runtime.observe((event) => events.push(event));
  const calls = () => events.filter((event): event is Extract<RuntimeEvent, { type: 'call' }> => event.type === 'call');
  const circuits = () => events.filter((event): event is Extract<RuntimeEvent, { type: 'circuit' }> => event.type === 'circuit');
  return { runtime, events, calls, circuits, serviceLines: service.lines };
}

const PROFILE: UpstreamProfile = { timeoutMs: 2000 };
const FAST_RETRY = { attempts: 2, baseDelayMs: 5 };

// ---- outcomes ---------------------------------------------------------------------------------

describe('upstream runtime: outcomes', () => {
  test('a clean answer is ok; every non-ok outcome carries the status of the answer', async () => {
    const statuses = [200, 403, 404, 204, 500];
    const { outbound } = fakeOutbound((index) => ({ status: statuses[index], body: 'value' }));
    const { runtime } = runtimeOn(outbound, { breaker: { policy: { baseBackoffMs: 0, maxBackoffMs: 0 } } });
    const upstream = runtime.upstream(PROFILE);
    const outcomes = [];
    for (let index = 0; index < statuses.length; index++) outcomes.push(await upstream.call(adapter(), { q: 'x' }, {}));
    assert.deepEqual(outcomes[0], { kind: 'ok', value: 'value' });
    assert.deepEqual(
      outcomes.slice(1).map((outcome) => [outcome.kind, outcome.status]),
      [
        ['blocked', 403],
        ['not_found', 404],
        ['empty', 204],
        ['changed', 500],
      ],
    );
  });

  test('a parser that throws read an answer it cannot: changed, with the status, and no retry', async () => {
    const { outbound, sent } = fakeOutbound(() => ({ status: 200, body: '{not json' }));
    const { runtime, calls } = runtimeOn(outbound);
    const parse = (response: { body: string }) => ({ kind: 'ok' as const, value: JSON.parse(response.body) as string });
    const outcome = await runtime.upstream({ ...PROFILE, retry: FAST_RETRY }).call(adapter({ parse }), { q: 'x' }, {});
    assert.equal(outcome.kind, 'changed');
    assert.equal(outcome.status, 200);
    assert.match(outcome.kind === 'changed' ? outcome.reason : '', /^unreadable answer: /);
    assert.equal(sent.length, 1);
    assert.deepEqual(calls().map((event) => [event.verdict, event.status, event.attempts]), [['changed', 200, 1]]);
  });

  test('the request is built with the base URL of the call, else the adapter\'s, and the runtime\'s clock', async () => {
    const { outbound, sent } = fakeOutbound(() => ({}));
    const now = new Date('2024-03-31T12:00:00Z');
    const seen: Date[] = [];
    const { runtime } = runtimeOn(outbound, { now: () => now });
    const dated = adapter({
      buildRequest: (params, context) => {
        seen.push(context.now);
        return { url: `${context.baseUrl}/x`, method: 'GET', headers: {} };
      },
    });
    await runtime.upstream(PROFILE).call(dated, { q: 'x' }, {});
    await runtime.upstream(PROFILE).call(dated, { q: 'x' }, {}, { baseUrl: 'http://elsewhere.test' });
    assert.deepEqual(sent.map((entry) => entry.url), ['http://fake.test/x', 'http://elsewhere.test/x']);
    assert.deepEqual(seen, [now, now]);
  });
});

// ---- the deadline -----------------------------------------------------------------------------

describe('upstream runtime: one deadline per call', () => {
  test('a call with timeoutMs T ends by ~T even when its retry is still waiting for an answer', async () => {
    const T = 400;
    // The first exchange fails on the network at once; the retry never answers.
    const { outbound, sent } = fakeOutbound((index, _url, request) => (index === 0 ? new OutboundError('network', 'reset', '') : hang(request)));
    const { runtime, calls } = runtimeOn(outbound);
    const started = performance.now();
    const outcome = await runtime.upstream({ timeoutMs: T, retry: { attempts: 5, baseDelayMs: 5 } }).call(adapter(), { q: 'x' }, {});
    const elapsed = performance.now() - started;
    assert.equal(outcome.kind, 'timeout');
    assert.ok(elapsed >= T - 20 && elapsed < T + 150, `ended after ${elapsed.toFixed(0)} ms`);
    assert.equal(sent.length, 2);
    // Each exchange gets what remains of the one deadline, not a fresh one.
    assert.ok(sent[0].request.timeoutMs! <= T);
    assert.ok(sent[1].request.timeoutMs! < sent[0].request.timeoutMs!, `${sent[1].request.timeoutMs} < ${sent[0].request.timeoutMs}`);
    assert.deepEqual(calls().map((event) => [event.verdict, event.attempts]), [['timeout', 2]]);
  });

  test('a transport that ignores the signal is cut at the deadline all the same', async () => {
    const { outbound } = fakeOutbound(() => new Promise<Answer>(() => {}));
    const { runtime } = runtimeOn(outbound);
    const started = performance.now();
    const outcome = await runtime.upstream({ timeoutMs: 150 }).call(adapter(), { q: 'x' }, {});
    assert.equal(outcome.kind, 'timeout');
    assert.ok(performance.now() - started < 400);
  });

  test('retries stop while the deadline still leaves room: slow network failures never run past T', async () => {
    const T = 600;
    const { outbound, sent } = fakeOutbound(async () => {
      await delay(150);
      return new OutboundError('network', 'reset', '');
    });
    const { runtime } = runtimeOn(outbound);
    const started = performance.now();
    const outcome = await runtime.upstream({ timeoutMs: T, retry: { attempts: 10, baseDelayMs: 1 } }).call(adapter(), { q: 'x' }, {});
    const elapsed = performance.now() - started;
    assert.equal(outcome.kind, 'unreachable');
    assert.ok(elapsed < T + 50, `ended after ${elapsed.toFixed(0)} ms`);
    assert.ok(sent.length >= 2 && sent.length < 10, `${sent.length} exchanges`);
  });

  test('an OutboundError timeout from the transport is a timeout, not retried', async () => {
    const { outbound, sent } = fakeOutbound(() => new OutboundError('timeout', 'headers did not come', ''));
    const { runtime } = runtimeOn(outbound);
    const outcome = await runtime.upstream({ ...PROFILE, retry: FAST_RETRY }).call(adapter(), { q: 'x' }, {});
    assert.equal(outcome.kind, 'timeout');
    assert.equal(sent.length, 1);
  });
});

// ---- the caller goes away ---------------------------------------------------------------------

describe('upstream runtime: abort', () => {
  test('an abort during the exchange rejects with the caller\'s reason and emits an aborted event, logging nothing', async () => {
    const caller = new AbortController();
    const reason = new Error('client closed');
    const { outbound, sent } = fakeOutbound((_index, _url, request) => {
      setTimeout(() => caller.abort(reason), 20);
      return hang(request);
    });
    const { runtime, calls, serviceLines } = runtimeOn(outbound);
    const request = collector();
    await assert.rejects(runtime.upstream(PROFILE).call(adapter(), { q: 'x' }, { signal: caller.signal, log: request.logger }), (error) => error === reason);
    assert.equal(sent.length, 1);
    assert.equal(sent[0].request.signal?.aborted, true, 'the transport saw the abort');
    assert.deepEqual(calls().map((event) => [event.verdict, event.attempts]), [['aborted', 1]]);
    assert.equal(request.lines.length, 0);
    assert.equal(serviceLines.length, 0);
    assert.equal((await runtime.breaker.states()).size, 0, 'an abort says nothing about the upstream');
  });

  test('an abort while waiting to retry rejects with the caller\'s reason, and no retry goes', async () => {
    const caller = new AbortController();
    const reason = new Error('went away');
    const { outbound, sent } = fakeOutbound(() => {
      setTimeout(() => caller.abort(reason), 10);
      return new OutboundError('network', 'reset', '');
    });
    const { runtime, calls } = runtimeOn(outbound);
    await assert.rejects(
      runtime.upstream({ ...PROFILE, retry: { attempts: 2, baseDelayMs: 300 } }).call(adapter(), { q: 'x' }, { signal: caller.signal }),
      (error) => error === reason,
    );
    await delay(500);
    assert.equal(sent.length, 1);
    assert.deepEqual(calls().map((event) => event.verdict), ['aborted']);
  });

  test('a signal aborted before the call rejects at once, nothing sent', async () => {
    const { outbound, sent } = fakeOutbound(() => ({}));
    const { runtime } = runtimeOn(outbound);
    const reason = new Error('already gone');
    await assert.rejects(runtime.upstream(PROFILE).call(adapter(), { q: 'x' }, { signal: AbortSignal.abort(reason) }), (error) => error === reason);
    assert.equal(sent.length, 0);
  });

  test('an aborted probe lets the next call probe', async () => {
    const caller = new AbortController();
    let mode: 'blocked' | 'hang' | 'ok' = 'blocked';
    const { outbound } = fakeOutbound((_index, _url, request) => {
      if (mode === 'blocked') return { status: 403 };
      if (mode === 'hang') {
        setTimeout(() => caller.abort(new Error('gone')), 10);
        return hang(request);
      }
      return {};
    });
    const { runtime } = runtimeOn(outbound, { breaker: { policy: { baseBackoffMs: 30 } } });
    const upstream = runtime.upstream(PROFILE);
    assert.equal((await upstream.call(adapter(), { q: 'x' }, {})).kind, 'blocked');
    await delay(40);
    mode = 'hang';
    await assert.rejects(upstream.call(adapter(), { q: 'x' }, { signal: caller.signal }), /gone/);
    mode = 'ok';
    assert.equal((await upstream.call(adapter(), { q: 'x' }, {})).kind, 'ok');
  });
});

// ---- retry ------------------------------------------------------------------------------------

describe('upstream runtime: retry', () => {
  const attemptsFor = async (answer: () => Reply, options: { method?: 'GET' | 'POST'; idempotent?: boolean; retry?: UpstreamProfile['retry'] } = {}) => {
    const { outbound, sent } = fakeOutbound(answer);
    const { runtime, calls } = runtimeOn(outbound);
    const method = options.method ?? 'GET';
    const subject = adapter({
      buildRequest: (_params, { baseUrl }) => ({ url: `${baseUrl}/x`, method, headers: {}, body: method === 'POST' ? 'a=1' : undefined }),
      ...(options.idempotent === undefined ? {} : { idempotent: options.idempotent }),
    });
    const outcome = await runtime.upstream({ ...PROFILE, retry: 'retry' in options ? options.retry : FAST_RETRY }).call(subject, { q: 'x' }, {});
    assert.equal(calls()[0].attempts, sent.length);
    return { kind: outcome.kind, attempts: sent.length };
  };

  test('a GET that failed on the network is sent once more, and the answer of the retry counts', async () => {
    let first = true;
    const answer = () => {
      if (!first) return { body: 'second' };
      first = false;
      return new OutboundError('network', 'reset', '');
    };
    assert.deepEqual(await attemptsFor(answer), { kind: 'ok', attempts: 2 });
  });

  test('the default policy is two attempts in all', async () => {
    assert.deepEqual(DEFAULT_RETRY, { attempts: 2, baseDelayMs: 200 });
    assert.deepEqual(await attemptsFor(() => new OutboundError('network', 'refused', ''), { retry: undefined }), { kind: 'unreachable', attempts: 2 });
  });

  test('a POST is not retried unless its adapter declares it idempotent', async () => {
    const network = () => new OutboundError('network', 'reset', '');
    assert.deepEqual(await attemptsFor(network, { method: 'POST' }), { kind: 'unreachable', attempts: 1 });
    assert.deepEqual(await attemptsFor(network, { method: 'POST', idempotent: true }), { kind: 'unreachable', attempts: 2 });
    assert.deepEqual(await attemptsFor(network, { method: 'GET', idempotent: false }), { kind: 'unreachable', attempts: 1 });
  });

  test('only network failures are retried: not timeouts, refusals of our own rules, blocks or answers', async () => {
    for (const code of ['timeout', 'blocked_address', 'blocked_host', 'invalid_url', 'too_large', 'too_many_redirects'] as const) {
      const outcome = await attemptsFor(() => new OutboundError(code, code, ''));
      assert.equal(outcome.attempts, 1, code);
    }
    assert.deepEqual(await attemptsFor(() => ({ status: 403 })), { kind: 'blocked', attempts: 1 });
    assert.deepEqual(await attemptsFor(() => ({ status: 204 })), { kind: 'empty', attempts: 1 });
    assert.deepEqual(await attemptsFor(() => ({ status: 500 })), { kind: 'changed', attempts: 1 });
  });

  test('retry: false never retries', async () => {
    assert.deepEqual(await attemptsFor(() => new OutboundError('network', 'reset', ''), { retry: false }), { kind: 'unreachable', attempts: 1 });
  });

  test('attempts are spaced by the jittered delay', async () => {
    const { outbound, sent } = fakeOutbound(() => new OutboundError('network', 'reset', ''));
    const { runtime } = runtimeOn(outbound);
    await runtime.upstream({ ...PROFILE, retry: { attempts: 2, baseDelayMs: 100 } }).call(adapter(), { q: 'x' }, {});
    const gap = sent[1].at - sent[0].at;
    // ±50 %: between 50 and 150 ms (and a little scheduling slack).
    assert.ok(gap >= 45 && gap < 200, `gap ${gap.toFixed(0)} ms`);
  });
});

// ---- interceptors -----------------------------------------------------------------------------

describe('upstream runtime: interceptors', () => {
  test('run in order, outermost first (retry, the profile\'s, the call\'s), and unwind in reverse', async () => {
    const order: string[] = [];
    const named =
      (name: string): Interceptor =>
      async (exchange, next) => {
        order.push(`${name} in`);
        const attempt = await next(exchange);
        order.push(`${name} out`);
        return attempt;
      };
    let first = true;
    const { outbound } = fakeOutbound(() => {
      order.push('wire');
      if (!first) return {};
      first = false;
      return new OutboundError('network', 'reset', '');
    });
    const { runtime } = runtimeOn(outbound);
    const upstream = runtime.upstream({ ...PROFILE, retry: FAST_RETRY, interceptors: [named('a'), named('b')] });
    assert.equal((await upstream.call(adapter(), { q: 'x' }, {}, { interceptors: [named('c')] })).kind, 'ok');
    // The retry is outside them all: each attempt goes through a, b and c again.
    assert.deepEqual(order, ['a in', 'b in', 'c in', 'wire', 'c out', 'b out', 'a out', 'a in', 'b in', 'c in', 'wire', 'c out', 'b out', 'a out']);
  });

  test('can resend a changed request (a token refreshed after a refusal), and the call counts both exchanges', async () => {
    const { outbound, sent } = fakeOutbound((_index, _url, request) => (request.headers?.authorization === 'Bearer fresh' ? { body: 'secret data' } : { status: 401 }));
    const { runtime, calls } = runtimeOn(outbound);
    const auth: Interceptor = async (exchange, next) => {
      const attempt = await next({ ...exchange, request: { ...exchange.request, headers: { ...exchange.request.headers, authorization: 'Bearer stale' } } });
      if (attempt.response?.status !== 401) return attempt;
      exchange.notes.tokenRefreshed = true;
      return next({ ...exchange, request: { ...exchange.request, headers: { ...exchange.request.headers, authorization: 'Bearer fresh' } } });
    };
    const outcome = await runtime.upstream({ ...PROFILE, interceptors: [auth] }).call(adapter(), { q: 'x' }, {});
    assert.deepEqual(outcome, { kind: 'ok', value: 'secret data' });
    assert.deepEqual(sent.map((entry) => entry.request.headers?.authorization), ['Bearer stale', 'Bearer fresh']);
    assert.deepEqual(calls().map((event) => [event.verdict, event.attempts]), [['ok', 2]]);
  });

  test('can answer by itself without sending anything', async () => {
    const { outbound, sent } = fakeOutbound(() => ({}));
    const { runtime } = runtimeOn(outbound);
    const budget: Interceptor = async () => ({ outcome: { kind: 'blocked', reason: 'rate budget spent' } });
    const outcome = await runtime.upstream({ ...PROFILE, interceptors: [budget] }).call(adapter(), { q: 'x' }, {});
    assert.equal(outcome.kind, 'blocked');
    assert.equal(sent.length, 0);
  });

  test('a refusal an interceptor made without sending tells the breaker nothing: the upstream is not suspended', async () => {
    const { outbound, sent } = fakeOutbound(() => ({}));
    const { runtime } = runtimeOn(outbound);
    let spent = true;
    const budget: Interceptor = async (exchange, next) => (spent ? { outcome: { kind: 'blocked', reason: 'rate budget spent' } } : next(exchange));
    const upstream = runtime.upstream({ ...PROFILE, interceptors: [budget] });
    assert.equal((await upstream.call(adapter(), { q: 'x' }, {})).kind, 'blocked');
    await delay(10);
    assert.equal((await runtime.breaker.states()).size, 0, 'no circuit state');
    spent = false;
    assert.equal((await upstream.call(adapter(), { q: 'x' }, {})).kind, 'ok');
    assert.equal(sent.length, 1, 'the next call went to the upstream, not suspended');
  });

  test('notes an interceptor adds go on the failure\'s log line', async () => {
    const { outbound } = fakeOutbound(() => ({ status: 403 }));
    const { runtime } = runtimeOn(outbound);
    const session: Interceptor = async (exchange, next) => {
      exchange.notes.session = 'pool-3';
      return next(exchange);
    };
    const request = collector();
    await runtime.upstream({ ...PROFILE, interceptors: [session] }).call(adapter(), { q: 'x' }, { log: request.logger });
    assert.equal(request.lines.length, 1);
    assert.equal(request.lines[0].details.session, 'pool-3');
  });

  test('an interceptor that throws fails the call as unreachable, the request goes on', async () => {
    const { outbound } = fakeOutbound(() => ({}));
    const { runtime } = runtimeOn(outbound);
    const broken: Interceptor = async () => {
      throw new Error('token store down');
    };
    const outcome = await runtime.upstream({ ...PROFILE, interceptors: [broken] }).call(adapter(), { q: 'x' }, {});
    assert.equal(outcome.kind, 'unreachable');
    assert.match(outcome.kind === 'unreachable' ? outcome.reason : '', /token store down/);
  });
});

// ---- the breaker's rules ----------------------------------------------------------------------

describe('circuit breaker: transition()', () => {
  const policy: BreakerPolicy = { failureThreshold: 3, baseBackoffMs: 1000, maxBackoffMs: 5000, probeTimeoutMs: 10_000 };
  const verdict = (state: CircuitState | null, v: Verdict, now: number, probe = false) =>
    transition(state, { kind: 'verdict', verdict: v, probe }, now, policy);
  const admit = (state: CircuitState | null, now: number) => transition(state, { kind: 'admit' }, now, policy);

  test('the default policy: 3 failures, 30 s doubling up to 15 minutes, a probe lost after a minute', () => {
    assert.deepEqual(DEFAULT_BREAKER_POLICY, { failureThreshold: 3, baseBackoffMs: 30_000, maxBackoffMs: 900_000, probeTimeoutMs: 60_000 });
  });

  test('closed and clean: calls go, and nothing is kept', () => {
    assert.deepEqual(admit(null, 0), { state: null, admitted: { allowed: true, probe: false } });
    assert.deepEqual(verdict(null, 'ok', 0), { state: null });
  });

  test('a block opens the circuit at once', () => {
    const result = verdict(null, 'blocked', 10_000);
    assert.deepEqual(result.state, { failures: 0, trips: 1, openUntil: 11_000, probingUntil: 0 });
    assert.deepEqual(result.change, { state: 'open', openUntil: 11_000, trips: 1 });
  });

  test('three unreachable or timed-out calls in a row open it; a healthy one in between starts the count again', () => {
    let state = verdict(null, 'unreachable', 0).state;
    assert.deepEqual(state, { failures: 1, trips: 0, openUntil: 0, probingUntil: 0 });
    state = verdict(state, 'timeout', 1).state;
    assert.equal(state?.failures, 2);
    const third = verdict(state, 'unreachable', 2);
    assert.deepEqual(third.change, { state: 'open', openUntil: 1002, trips: 1 });

    const healed = verdict(verdict(verdict(null, 'unreachable', 0).state, 'unreachable', 1).state, 'empty', 2);
    assert.equal(healed.state, null);
    assert.equal(healed.change, undefined, 'it never opened, so there is nothing to announce');
    assert.equal(verdict(verdict(healed.state, 'unreachable', 3).state, 'unreachable', 4).change, undefined);
  });

  test('ok, empty, not_found and changed are healthy (a parser that cannot read is our problem); suspended changes nothing', () => {
    const failing = verdict(null, 'unreachable', 0).state;
    for (const healthy of ['ok', 'empty', 'not_found', 'changed'] as const) assert.equal(verdict(failing, healthy, 1).state, null, healthy);
    assert.deepEqual(verdict(failing, 'suspended', 1).state, failing);
  });

  test('while open: calls are refused until the back-off ends; then one probe goes, and only one', () => {
    const open = verdict(null, 'blocked', 0).state;
    assert.deepEqual(admit(open, 999).admitted, { allowed: false, until: 1000 });
    const probing = admit(open, 1000);
    assert.deepEqual(probing.admitted, { allowed: true, probe: true });
    assert.deepEqual(probing.change, { state: 'half_open', trips: 1 });
    assert.equal(probing.state?.probingUntil, 11_000);
    // A second call while the probe runs is refused until the probe could have reported.
    assert.deepEqual(admit(probing.state, 1001).admitted, { allowed: false, until: 11_000 });
    // A probe that never reported (its process died) lets another one go.
    assert.deepEqual(admit(probing.state, 11_000).admitted, { allowed: true, probe: true });
    // A released probe (its caller went away) lets the next call probe at once.
    const released = transition(probing.state, { kind: 'release' }, 1002, policy).state;
    assert.equal(released?.probingUntil, 0);
    assert.deepEqual(admit(released, 1002).admitted, { allowed: true, probe: true });
  });

  test('a failed probe doubles the back-off, up to the maximum', () => {
    let state = verdict(null, 'blocked', 0).state;
    const backoffs: number[] = [];
    let now = 0;
    for (let round = 0; round < 5; round++) {
      now = state!.openUntil;
      state = admit(state, now).state;
      const failed = verdict(state, round % 2 ? 'blocked' : 'unreachable', now, true);
      state = failed.state;
      backoffs.push(state!.openUntil - now);
      assert.equal(failed.change?.state, 'open');
    }
    assert.deepEqual(backoffs, [2000, 4000, 5000, 5000, 5000]);
    assert.equal(state?.trips, 6);
  });

  test('a healthy probe closes the circuit and forgets the trips', () => {
    const open = verdict(verdict(null, 'blocked', 0).state, 'blocked', 1000, true).state;
    const probing = admit(open, open!.openUntil).state;
    const closed = verdict(probing, 'ok', open!.openUntil + 1, true);
    assert.equal(closed.state, null);
    assert.deepEqual(closed.change, { state: 'closed', trips: 0 });
    // Opened again later, it starts from the base back-off.
    assert.equal(verdict(closed.state, 'blocked', 50_000).state?.openUntil, 51_000);
  });

  test('failures of calls that were already running when it opened say nothing new', () => {
    const open = verdict(null, 'blocked', 0).state;
    assert.deepEqual(verdict(open, 'blocked', 10).state, open);
    assert.deepEqual(verdict(open, 'unreachable', 10).state, open);
  });

  test('nor do clean answers of calls already running: only the probe closes an open circuit', () => {
    // A fan-out: page 2 answered a block page, page 3 answers cleanly a moment later.
    const open = verdict(null, 'blocked', 0).state;
    for (const healthy of ['ok', 'empty', 'not_found', 'changed'] as const) {
      const after = verdict(open, healthy, 50);
      assert.deepEqual(after.state, open, healthy);
      assert.equal(after.change, undefined, healthy);
    }
  });

  test('a block page with a server error (500, 502, 504) counts as a failure; 503, 403, 429 open at once', () => {
    const withStatus = (state: CircuitState | null, status: number, now: number) => transition(state, { kind: 'verdict', verdict: 'blocked', probe: false, status }, now, policy);
    for (const status of [500, 502, 504]) {
      const first = withStatus(null, status, 0);
      assert.deepEqual(first.state, { failures: 1, trips: 0, openUntil: 0, probingUntil: 0 }, String(status));
      assert.equal(withStatus(withStatus(first.state, status, 1).state, status, 2).change?.state, 'open', `${status}: the third in a row opens it`);
    }
    for (const status of [503, 403, 429]) assert.equal(withStatus(null, status, 0).change?.state, 'open', String(status));
  });
});

// ---- the breaker in the runtime -----------------------------------------------------------------

describe('upstream runtime: the breaker and the events', () => {
  test('a block opens the circuit: the next call is suspended without a request; after the back-off one probe goes and a clean answer closes it', async () => {
    let status = 403;
    const { outbound, sent } = fakeOutbound(() => ({ status }));
    const { runtime, calls, circuits } = runtimeOn(outbound, { breaker: { policy: { baseBackoffMs: 50 } } });
    const upstream = runtime.upstream(PROFILE);

    assert.equal((await upstream.call(adapter(), { q: 'x' }, {})).kind, 'blocked');
    const suspended = await upstream.call(adapter(), { q: 'x' }, {});
    assert.equal(suspended.kind, 'suspended');
    assert.equal(suspended.status, undefined);
    assert.match(suspended.kind === 'suspended' ? suspended.reason : '', /^circuit open until \d{4}-/);
    assert.equal(sent.length, 1);

    status = 200;
    await delay(70);
    // Two calls at once after the back-off: one probes, the other is still suspended.
    const [a, b] = await Promise.all([upstream.call(adapter(), { q: 'x' }, {}), upstream.call(adapter(), { q: 'y' }, {})]);
    assert.deepEqual([a.kind, b.kind].sort(), ['ok', 'suspended']);
    assert.equal(sent.length, 2);
    assert.equal((await upstream.call(adapter(), { q: 'x' }, {})).kind, 'ok');

    assert.deepEqual(
      calls().map((event) => [event.upstream, event.operation, event.verdict, event.status, event.attempts]),
      [
        ['fake', 'lookup', 'blocked', 403, 1],
        ['fake', 'lookup', 'suspended', undefined, 0],
        // The call refused while the probe runs ends first.
        ['fake', 'lookup', 'suspended', undefined, 0],
        ['fake', 'lookup', 'ok', undefined, 1],
        ['fake', 'lookup', 'ok', undefined, 1],
      ],
    );
    assert.ok(calls().every((event) => typeof event.durationMs === 'number' && event.durationMs >= 0 && event.at > 0));
    assert.deepEqual(
      circuits().map((event) => [event.upstream, event.state, event.trips]),
      [
        ['fake', 'open', 1],
        ['fake', 'half_open', 1],
        ['fake', 'closed', 0],
      ],
    );
    assert.ok(circuits()[0].openUntil! > circuits()[0].at);
  });

  test('three unreachable calls in a row open the circuit', async () => {
    const { outbound, sent } = fakeOutbound(() => new OutboundError('network', 'refused', ''));
    const { runtime, calls, circuits } = runtimeOn(outbound);
    const upstream = runtime.upstream({ ...PROFILE, retry: false });
    for (let index = 0; index < 4; index++) await upstream.call(adapter(), { q: 'x' }, {});
    assert.deepEqual(calls().map((event) => event.verdict), ['unreachable', 'unreachable', 'unreachable', 'suspended']);
    assert.equal(sent.length, 3);
    assert.deepEqual(circuits().map((event) => event.state), ['open']);
  });

  test('circuits are per upstream, and a profile with breaker: false is never suspended', async () => {
    const { outbound, sent } = fakeOutbound(() => ({ status: 403 }));
    const { runtime } = runtimeOn(outbound);
    const upstream = runtime.upstream(PROFILE);
    await upstream.call(adapter(), { q: 'x' }, {});
    assert.equal((await upstream.call(adapter(), { q: 'x' }, {})).kind, 'suspended');
    assert.equal((await upstream.call(adapter({ upstream: 'other' }), { q: 'x' }, {})).kind, 'blocked');
    const sites = runtime.upstream({ ...PROFILE, breaker: false });
    for (let index = 0; index < 3; index++) assert.equal((await sites.call(adapter({ upstream: 'site' }), { q: 'x' }, {})).kind, 'blocked');
    assert.equal(sent.length, 5);
    assert.deepEqual([...(await runtime.breaker.states()).keys()].sort(), ['fake', 'other']);
  });

  test('a breaker store that fails lets calls through and says so once', async () => {
    const failing: BreakerStore = {
      update: async () => {
        throw new Error('connection refused');
      },
      all: async () => new Map(),
    };
    const { outbound, sent } = fakeOutbound(() => ({ status: 403 }));
    const { runtime, serviceLines } = runtimeOn(outbound, { breaker: { store: failing } });
    const upstream = runtime.upstream(PROFILE);
    for (let index = 0; index < 3; index++) assert.equal((await upstream.call(adapter(), { q: 'x' }, {})).kind, 'blocked');
    assert.equal(sent.length, 3);
    const storeLines = serviceLines.filter((line) => /circuit breaker state unreachable/.test(line.message));
    assert.equal(storeLines.length, 1);
  });

  test('a watcher that throws does not fail the call', async () => {
    const { outbound } = fakeOutbound(() => ({}));
    const { runtime } = runtimeOn(outbound);
    runtime.observe(() => {
      throw new Error('metrics broke');
    });
    assert.equal((await runtime.upstream(PROFILE).call(adapter(), { q: 'x' }, {})).kind, 'ok');
  });

  test('observe returns how to stop watching', async () => {
    const { outbound } = fakeOutbound(() => ({}));
    const runtime = createUpstreamRuntime({ outbound });
    const seen: RuntimeEvent[] = [];
    const stop = runtime.observe((event) => seen.push(event));
    await runtime.upstream(PROFILE).call(adapter(), { q: 'x' }, {});
    stop();
    await runtime.upstream(PROFILE).call(adapter(), { q: 'x' }, {});
    assert.equal(seen.length, 1);
  });
});

// ---- the log line -----------------------------------------------------------------------------

describe('upstream runtime: the log line of a failed call', () => {
  const SECRET = 'my private query';

  test('one warn line on the request\'s logger with requestId, upstream, operation, verdict, status and duration', async () => {
    const { outbound } = fakeOutbound(() => ({ status: 403 }));
    const { runtime, serviceLines } = runtimeOn(outbound);
    const request = collector();
    await runtime.upstream(PROFILE).call(adapter(), { q: SECRET }, { log: request.logger, requestId: 'req-42' });
    assert.equal(request.lines.length, 1);
    const [line] = request.lines;
    assert.equal(line.details.requestId, 'req-42');
    assert.equal(line.details.upstream, 'fake');
    assert.equal(line.details.operation, 'lookup');
    assert.equal(line.details.verdict, 'blocked');
    assert.equal(line.details.status, 403);
    assert.equal(typeof line.details.durationMs, 'number');
    assert.equal(line.details.attempts, 1);
    assert.equal(line.message, 'upstream fake lookup: blocked');
    assert.ok(!JSON.stringify(line).includes('private'), JSON.stringify(line));
    // The circuit opening is the service's news, on its own logger, not the request's (told once
    // the breaker's store has answered, after the call).
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(serviceLines.filter((entry) => /suspended/.test(entry.message)).length, 1);
  });

  test('a retried failure is still one line, and a URL in the reason is cut to its origin', async () => {
    const { outbound } = fakeOutbound((_index, url) => new OutboundError('network', `connect ECONNREFUSED while fetching ${url}`, url));
    const { runtime } = runtimeOn(outbound);
    const request = collector();
    await runtime.upstream({ ...PROFILE, retry: FAST_RETRY }).call(adapter(), { q: SECRET }, { log: request.logger, requestId: 'req-7' });
    assert.equal(request.lines.length, 1);
    const [line] = request.lines;
    assert.equal(line.details.verdict, 'unreachable');
    assert.equal(line.details.status, undefined);
    assert.equal(line.details.attempts, 2);
    assert.equal(line.details.retried, 1);
    assert.match(String(line.details.reason), /http:\/\/fake\.test\/…/);
    const text = JSON.stringify(line);
    assert.ok(!text.includes('private') && !text.includes('search?q'), text);
  });

  test('timeouts, changed answers and suspended calls are logged too; ok, empty and not_found are not', async () => {
    const statuses = [200, 204, 404, 500];
    const { outbound } = fakeOutbound((index) => ({ status: statuses[index] }));
    const { runtime } = runtimeOn(outbound);
    const request = collector();
    const upstream = runtime.upstream(PROFILE);
    for (let index = 0; index < statuses.length; index++) await upstream.call(adapter(), { q: SECRET }, { log: request.logger });
    assert.deepEqual(request.lines.map((line) => line.details.verdict), ['changed']);

    const slow = fakeOutbound(() => new Promise<Answer>(() => {}));
    const slowRuntime = runtimeOn(slow.outbound);
    await slowRuntime.runtime.upstream({ timeoutMs: 50 }).call(adapter(), { q: SECRET }, { log: request.logger });
    assert.deepEqual(request.lines.map((line) => line.details.verdict), ['changed', 'timeout']);

    const blocked = runtimeOn(fakeOutbound(() => ({ status: 403 })).outbound);
    await blocked.runtime.upstream(PROFILE).call(adapter(), { q: SECRET }, { log: request.logger });
    await blocked.runtime.upstream(PROFILE).call(adapter(), { q: SECRET }, { log: request.logger });
    assert.deepEqual(request.lines.map((line) => line.details.verdict), ['changed', 'timeout', 'blocked', 'suspended']);
    assert.ok(!JSON.stringify(request.lines).includes('private'));
  });

  test('without a request logger, the runtime\'s own logger gets the line', async () => {
    const { outbound } = fakeOutbound(() => ({ status: 403 }));
    const { runtime, serviceLines } = runtimeOn(outbound);
    await runtime.upstream(PROFILE).call(adapter(), { q: SECRET }, {});
    assert.deepEqual(serviceLines.filter((line) => line.details.verdict !== undefined).map((line) => line.details.verdict), ['blocked']);
  });
});
