/**
 * Per-user fairness in the shared pools (page conversion processes, browser pages).
 *
 * - Conversion: user A's four large pages, each converting until the time limit, took both
 *   processes in turn (a global FIFO) while user B's small page waited behind all of them.
 * - Browser: A's never-loading pages held every page slot until their deadline; B's render
 *   waited behind them, and ran out of its own deadline.
 *
 * With a per-user bound and the waiting users served in turn, B's request is admitted while A
 * still has work waiting. The assertions are structural, not timed: B succeeds; none (or, for a
 * conversion on a slow machine, at most one) of A's requests has finished when B's is answered,
 * where a FIFO pool finishes at least three (four for the browser) first; A never holds more
 * than its bound (the browser's, as the target site counts A's loads in flight). B's latency
 * alone and under A's flood is printed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { startTestService, type TestService } from '../support/service.ts';
import { articlePage, largeArticlePage } from '../support/web-fixtures.ts';
import { isBrowserAvailable } from '../../src/browser/index.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const noBrowser = (await isBrowserAvailable(CHROMIUM)) ? false : `Chromium is not available at ${CHROMIUM} (install the chromium package or set CHROMIUM_PATH)`;

/** Conversions A sends at once: twice the processes. */
const A_CONVERSIONS = 4;
/** Browser loads A sends at once: more than the page slots (BROWSER_MAX_PAGES below). */
const A_RENDERS = 6;
const BROWSER_PAGES = 4;

/** The target: a large page, a small one, and a page that never answers (its loads in flight counted). */
interface FairnessSite {
  url: string;
  hanging(): number;
  peakHanging(): number;
  close(): Promise<void>;
}

async function startSite(): Promise<FairnessSite> {
  const large = largeArticlePage(8 * 1024 * 1024);
  const small = articlePage();
  let hanging = 0;
  let peak = 0;
  const server = http.createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://site').pathname;
    if (path === '/hang') {
      hanging++;
      peak = Math.max(peak, hanging);
      // Never answered: the load ends when the browser gives up on it.
      request.socket.once('close', () => hanging--);
      return;
    }
    const body = path === '/large' ? large : path === '/small' ? small : null;
    if (body === null) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hanging: () => hanging,
    peakHanging: () => peak,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function waitFor(what: string, condition: () => boolean, limitMs = 60_000): Promise<void> {
  const until = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('per-user fairness in the shared pools', () => {
  let service: TestService;
  let site: FairnessSite;
  let userA: { token: string };
  let userB: { token: string };

  before(async () => {
    site = await startSite();
    service = await startTestService({
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
      WEB_FORMAT_PROCESSES: '2',
      // Long enough for a small page in a loaded process, far below what the large page needs.
      WEB_FORMAT_TIMEOUT_MS: '3000',
      BROWSER_MAX_PAGES: String(BROWSER_PAGES),
      WEB_BROWSER_TIMEOUT_MS: '15000',
    });
    userA = await service.user({ scraping: 1000 });
    userB = await service.user({ scraping: 1000 });
  });

  after(async () => {
    await service?.close();
    await site?.close();
  });

  /**
   * POST /v1/web on a connection of its own, closed with the request: one that is given up on
   * leaves no pooled connection behind for the server's close to wait out.
   */
  const post = (token: string, body: Record<string, unknown>, signal?: AbortSignal) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const payload = JSON.stringify(body);
      const request = http.request(`${service.url}/v1/web`, {
        method: 'POST',
        agent: false,
        signal,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json', 'content-length': Buffer.byteLength(payload) },
      });
      request.once('error', reject);
      request.once('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('error', reject);
        response.once('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      });
      request.end(payload);
    });
  const pool = (name: string) => service.services.capabilities.poolStats().find((stats) => stats.pool === name);
  /** B's request, timed. */
  const timed = async (body: Record<string, unknown>) => {
    const started = performance.now();
    const answer = await post(userB.token, body);
    return { ...answer, ms: Math.round(performance.now() - started) };
  };

  test('conversion: B is served while A floods the processes, and A keeps at most its bound busy', async (t) => {
    const smallPage = { url: `${site.url}/small`, format: 'markdown' };
    await timed(smallPage); // the processes are warm
    const solo = await timed(smallPage);
    assert.equal(solo.status, 200, solo.text);

    let aDone = 0;
    const floods = Array.from({ length: A_CONVERSIONS }, () =>
      post(userA.token, { url: `${site.url}/large`, format: 'markdown' }).then((answer) => {
        aDone++;
        return answer;
      }),
    );
    // Every page of A is fetched and in the pool (running or waiting) before B asks.
    await waitFor("A's pages in the conversion pool", () => {
      const web = pool('web');
      return web !== undefined && web.busy + web.queued >= A_CONVERSIONS;
    });
    const flooded = await timed(smallPage);
    const aDoneWhenB = aDone;
    const aAnswers = await Promise.all(floods);
    const web = pool('web')!;
    t.diagnostic(`B's page alone: ${solo.ms} ms; under A's flood: ${flooded.ms} ms (${(flooded.ms / solo.ms).toFixed(1)}×); A's answers ${aAnswers.map((a) => a.status).join(', ')}`);
    t.diagnostic(`web pool: per-user bound ${web.userBound}, A's peak ${web.userPeak}, waits at the bound ${web.userWaits}`);

    assert.equal(flooded.status, 200, flooded.text);
    assert.ok(aDoneWhenB <= 1, `${aDoneWhenB} of A's ${A_CONVERSIONS} conversions finished before B's page: B waited behind A's flood`);
    assert.equal(web.userBound, 1, 'half of the two processes');
    assert.ok(web.userPeak !== undefined && web.userPeak <= web.userBound, `one user held ${web.userPeak} processes at once`);
    assert.ok((web.userWaits ?? 0) >= A_CONVERSIONS - 1, "A's pages past its bound waited for A's turn");
  });

  test('browser: B renders while A holds its bound of never-loading pages', { skip: noBrowser }, async (t) => {
    const quickPage = { url: `${site.url}/small`, bypass_captcha: true };
    const warm = await timed(quickPage); // Chromium is launched
    assert.equal(warm.status, 200, warm.text);
    const solo = await timed(quickPage);
    assert.equal(solo.status, 200, solo.text);

    const leave = new AbortController();
    let aDone = 0;
    const floods = Array.from({ length: A_RENDERS }, () =>
      post(userA.token, { url: `${site.url}/hang`, bypass_captcha: true }, leave.signal)
        .catch(() => ({ status: 0, text: 'A went away' }))
        .finally(() => aDone++),
    );
    try {
      // Every load of A is in the pool (rendering or waiting) before B asks.
      await waitFor("A's loads in the browser pool", () => {
        const browser = pool('browser');
        return browser !== undefined && browser.busy + browser.queued >= A_RENDERS;
      });
      await waitFor("A's pages reaching the site", () => site.hanging() > 0);
      const flooded = await timed(quickPage);
      const aDoneWhenB = aDone;
      const browser = pool('browser')!;
      t.diagnostic(`B's render alone: ${solo.ms} ms; under A's flood: ${flooded.ms} ms (${(flooded.ms / solo.ms).toFixed(1)}×)`);
      t.diagnostic(`browser pool: ${BROWSER_PAGES} slots, per-user bound ${browser.userBound}, A's pages loading at once at most ${site.peakHanging()}, waits at the bound ${browser.userWaits}`);

      assert.equal(flooded.status, 200, flooded.text);
      assert.equal(aDoneWhenB, 0, `${aDoneWhenB} of A's ${A_RENDERS} renders had ended before B's page: B waited behind A's flood`);
      assert.equal(browser.userBound, BROWSER_PAGES / 2, 'half of the page slots');
      assert.ok(site.peakHanging() <= browser.userBound!, `A had ${site.peakHanging()} pages loading at once`);
      assert.ok((browser.userPeak ?? Infinity) <= browser.userBound!);
    } finally {
      leave.abort();
      await Promise.all(floods);
    }
    // A's hung loads were stopped with their requests: the pool is free again.
    await waitFor('the browser pool to empty', () => {
      const browser = pool('browser');
      return browser !== undefined && browser.busy + browser.queued === 0;
    });
  });
});
