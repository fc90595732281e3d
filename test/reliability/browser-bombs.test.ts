/**
 * Issue 19, defect 1: browser mode let one request exhaust the host's memory, for free.
 *
 * - A gzip bomb (1 MB on the wire, 1 GB inflated) rendered with `bypass_captcha` took a Chromium
 *   renderer to 7 GB: the guard's transfer cap counts compressed bytes.
 * - A 150-byte page whose script writes 50 M characters into the DOM took a renderer to 3.5 GB.
 * - Concurrent bombs and clients that hung up: a failure was charged.
 *
 * Each test measures the Chromium process tree's resident memory from /proc (not the service's
 * own figures): it may grow by at most 1 GB over its baseline under one request, the request
 * fails and is not charged, and the next request renders normally. The money checks are the
 * ledger's: balances, outstanding holds, every history row, and the audit. Linux only (/proc);
 * skipped without Chromium.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startTestService, type TestService } from '../support/service.ts';
import { auditMismatches, outstandingHolds } from '../support/reliability-harness.ts';
import { chromiumTreeRss, startBombSite, watchChromiumPeak, type BombSite } from '../support/browser-bomb.ts';
import { isBrowserAvailable } from '../../src/browser/index.ts';
import { fileWatchdog } from '../support/health-watchdog.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const skip =
  process.platform !== 'linux'
    ? 'the browser tree is measured from /proc (Linux only)'
    : (await isBrowserAvailable(CHROMIUM))
      ? false
      : `Chromium is not available at ${CHROMIUM} (install the chromium package or set CHROMIUM_PATH)`;

/** The price of a browser page (`web_browser`). */
const BROWSER_PAGE_CREDITS = 5;
/** Most the Chromium tree may grow over its baseline under one request (the goal). */
const MAX_GROWTH_MB = 1024;
const START_BALANCE = 1000;
const METRICS_TOKEN = 'browser-bombs-metrics-token';

describe('browser bombs', { skip }, () => {
  const watchdog = fileWatchdog('browser bombs');
  let service: TestService;
  let site: BombSite;
  let user: { id: number; token: string };

  const render = async (path: string, signal?: AbortSignal) => {
    const response = await fetch(`${service.url}/v1/web`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ url: `${site.url}${path}`, bypass_captcha: true }),
      signal,
    });
    return { status: response.status, requestId: response.headers.get('x-request-id') ?? '', body: (await response.json()) as Record<string, any> };
  };
  const balance = async () => (await service.services.ledger.balance(user.id, 'scraping')) ?? 0;
  const historyOf = async () =>
    (await service.services.db.query<{ status: number; credits: number; request_id: string }>('SELECT status, credits, request_id FROM request_history WHERE user_id = $1', [user.id])).map((row) => ({
      status: Number(row.status),
      credits: Number(row.credits),
      requestId: row.request_id,
    }));
  /** Every request has settled: no hold is left (a render still running keeps its hold). */
  const settled = async (limitMs = 60_000) => {
    const until = Date.now() + limitMs;
    while ((await outstandingHolds(service)) > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 250));
    return outstandingHolds(service);
  };
  /** The next request renders normally, and is charged the page price. */
  const assertRendersNormally = async () => {
    const before = await balance();
    const answer = await render('/plain');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.match(String(answer.body.response?.content), /Rendered normally/);
    assert.equal(await balance(), before - BROWSER_PAGE_CREDITS);
  };
  /** The tree once the previous request's renderer is gone: two readings a moment apart within 20 MB. */
  const quietTree = async () => {
    let previous = chromiumTreeRss();
    for (let i = 0; i < 20; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const current = chromiumTreeRss();
      if (Math.abs(current.mb - previous.mb) <= 20) return current;
      previous = current;
    }
    return previous;
  };
  /** Renders `path` once; answers the request's status and the tree's growth in MB over its baseline. */
  const bomb = async (path: string) => {
    const baseline = await quietTree();
    const watch = watchChromiumPeak();
    const before = await balance();
    let peak = 0;
    const answer = await render(path).finally(() => (peak = watch.stop()));
    assert.equal(await settled(), 0, 'a hold is left behind');
    assert.equal(await balance(), before, `the failed render was charged (${answer.status})`);
    return { answer, growthMb: peak - baseline.mb, baselineMb: baseline.mb, peakMb: peak };
  };

  before(async () => {
    site = await startBombSite({ gzipMb: 1024 });
    service = await startTestService({ OUTBOUND_ALLOW_HOSTS: '127.0.0.1', WEB_BROWSER_TIMEOUT_MS: '20000', BROWSER_MAX_PAGES: '4', METRICS_TOKEN: METRICS_TOKEN });
    user = await service.user({ scraping: START_BALANCE });
    // The browser is launched and warm: the baseline is a running browser.
    await assertRendersNormally();
    watchdog.start(service.url);
  });

  after(async () => {
    await service?.close();
    await site?.close();
  });

  test("/metrics counts the browser's whole process tree", async () => {
    await quietTree();
    const response = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    assert.equal(response.status, 200);
    const text = await response.text();
    const gauge = Number(/^gleaner_pool_memory_bytes\{pool="browser"\} (\d+)/m.exec(text)?.[1]);
    const measured = chromiumTreeRss().mb;
    assert.ok(gauge > 0, 'no browser memory gauge');
    // The same processes, read a moment apart.
    assert.ok(Math.abs(gauge / 1024 / 1024 - measured) < Math.max(100, measured * 0.25), `gauge ${Math.round(gauge / 1024 / 1024)} MB, /proc ${measured} MB`);
    assert.match(text, /^gleaner_pool_memory_kills_total\{pool="browser"\} 0$/m);
  });

  test('a gzip bomb (1 MB on the wire, 1 GB inflated) fails uncharged; the tree grows by ≤ 1 GB', async (t) => {
    const { answer, growthMb, baselineMb, peakMb } = await bomb('/gzip-bomb');
    t.diagnostic(`gzip bomb: ${answer.status} ${JSON.stringify(answer.body)}; tree ${baselineMb} MB → peak ${peakMb} MB (+${growthMb} MB)`);
    assert.ok(answer.status >= 400, `answered ${answer.status}`);
    assert.ok(growthMb <= MAX_GROWTH_MB, `the Chromium tree grew by ${growthMb} MB`);
    await assertRendersNormally();
  });

  test('a script that writes 50 M characters into the DOM fails uncharged; the tree grows by ≤ 1 GB', async (t) => {
    const { answer, growthMb, baselineMb, peakMb } = await bomb('/script-bomb');
    t.diagnostic(`script bomb: ${answer.status} ${JSON.stringify(answer.body)}; tree ${baselineMb} MB → peak ${peakMb} MB (+${growthMb} MB)`);
    assert.ok(answer.status >= 400, `answered ${answer.status}`);
    assert.ok(growthMb <= MAX_GROWTH_MB, `the Chromium tree grew by ${growthMb} MB`);
    await assertRendersNormally();
  });

  test('a client that hangs up while its request is being authenticated is not charged (was: rendered and charged)', async () => {
    const before = await balance();
    const historyBefore = new Set((await historyOf()).map((row) => row.requestId));
    // Authentication that takes a while (a busy database): the client hangs up meanwhile, before
    // the pipeline listens for it. Its stream closed then, and 'close' is never emitted again.
    const accounts = service.services.accounts;
    const authenticate = accounts.authenticate.bind(accounts);
    let authenticating!: () => void;
    const reached = new Promise<void>((resolve) => (authenticating = resolve));
    let hungUp!: () => void;
    const gone = new Promise<void>((resolve) => (hungUp = resolve));
    accounts.authenticate = async (bearer: string) => {
      const found = await authenticate(bearer);
      authenticating();
      await gone;
      await new Promise((resolve) => setTimeout(resolve, 200));
      return found;
    };
    try {
      const body = JSON.stringify({ url: `${site.url}/plain`, bypass_captcha: true });
      const socket = net.connect(Number(new URL(service.url).port), '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(
        `POST /v1/web HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${user.token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      await reached;
      socket.destroy();
      hungUp();
      // The request is over when its history row is written.
      const until = Date.now() + 60_000;
      while ((await historyOf()).length === historyBefore.size && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(await settled(), 0, 'a hold is left behind');
    } finally {
      accounts.authenticate = authenticate;
    }
    const rows = (await historyOf()).filter((row) => !historyBefore.has(row.requestId));
    assert.deepEqual(rows.map(({ status, credits }) => ({ status, credits })), [{ status: 499, credits: 0 }]);
    assert.equal(await balance(), before);
    await assertRendersNormally();
  });

  test('concurrent bombs and clients that hang up: nothing but a delivered success is charged, and the audit is clean', async (t) => {
    const before = await balance();
    const historyBefore = new Set((await historyOf()).map((row) => row.requestId));
    const hangUp = (path: string, afterMs: number) => render(path, AbortSignal.timeout(afterMs)).then(
      (answer) => ({ kind: 'answered' as const, ...answer }),
      () => ({ kind: 'hung up' as const }),
    );
    const answered = (path: string) => render(path).then((answer) => ({ kind: 'answered' as const, ...answer }));
    const outcomes = await Promise.all([
      answered('/gzip-bomb'),
      answered('/gzip-bomb'),
      answered('/script-bomb'),
      hangUp('/gzip-bomb', 1500),
      hangUp('/script-bomb', 1500),
      hangUp('/plain', 300),
      answered('/plain'),
    ]);
    t.diagnostic(outcomes.map((o) => (o.kind === 'answered' ? `${o.status}` : o.kind)).join(', '));
    assert.equal(await settled(), 0, 'a hold is left behind');
    for (const outcome of outcomes.slice(0, 3)) assert.ok(outcome.kind === 'answered' && outcome.status >= 400, `a bomb answered ${JSON.stringify(outcome).slice(0, 200)}`);
    const answeredIds = outcomes.flatMap((o) => (o.kind === 'answered' ? [o.requestId] : []));
    const rows = (await historyOf()).filter((row) => !historyBefore.has(row.requestId));
    const byId = new Map(rows.map((row) => [row.requestId, row]));
    // A request that hung up before it reached the server has no row; every answered one has its own.
    for (const id of answeredIds) assert.ok(byId.has(id), `no history row for ${id}`);
    for (const outcome of outcomes) {
      if (outcome.kind === 'answered') assert.equal(byId.get(outcome.requestId)?.status, outcome.status, 'history records the status that was answered');
    }
    for (const row of rows) {
      const success = row.status >= 200 && row.status < 300;
      assert.equal(row.credits, success ? BROWSER_PAGE_CREDITS : 0, `a ${row.status} was charged ${row.credits}`);
    }
    assert.ok(rows.some((row) => row.status === 200), 'the plain page rendered');
    // What left the balance is exactly what the history says was charged: successes only.
    const charged = rows.reduce((sum, row) => sum + row.credits, 0);
    assert.equal(await balance(), before - charged);
    assert.deepEqual(await auditMismatches(service), []);
    await assertRendersNormally();
  });

  test('no browser bomb stalled the event loop: /health answered within 1 s throughout (issue 33)', async () => {
    await watchdog.assertClean();
  });
});
