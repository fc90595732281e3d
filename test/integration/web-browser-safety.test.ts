/**
 * The browser's safety for /v1/web, shown by the loopback site's own access log: a page whose
 * scripts reach for http://127.0.0.1:<port>, http://169.254.169.254 and a blocked domain (by
 * fetch, image, iframe and WebSocket) gets none of them, and main-frame navigations to a blocked
 * domain or to data: are refused.
 *
 * The site is served as `site.test` and `www.facebook.com`, both mapped to 127.0.0.1 by the test
 * resolver and both exempted by name from the public-address rule, so only the blocked-domain
 * rule stands between the page and facebook; 127.0.0.1 itself is not exempted.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startLoopbackSite, type LoopbackSite } from '../support/web-site.ts';
import { createBrowserPool, isBrowserAvailable, type BrowserPool } from '../../src/browser/index.ts';
import { createOutboundClient, type ClosableOutboundClient } from '../../src/outbound/client.ts';
import type { LookupFunction } from '../../src/outbound/resolve.ts';
import { createDomainBlocklist, createWebScraper, type WebScraper } from '../../src/adapters/web/index.ts';
import { createUpstreamRuntime } from '../../src/adapters/kit/runtime.ts';
import { TEST_BROWSER_SANDBOX } from '../support/service.ts';

const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const skip = (await isBrowserAvailable(chromium)) ? false : `Chromium is not available at ${chromium} (install the chromium package or set CHROMIUM_PATH)`;

const DNS: Record<string, string> = { 'site.test': '127.0.0.1', 'www.facebook.com': '127.0.0.1', 'facebook.com': '127.0.0.1' };
const lookup: LookupFunction = (hostname, options, callback) => {
  const address = DNS[hostname];
  if (address === undefined) {
    callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
    return;
  }
  if (options.all) callback(null, [{ address, family: 4 }]);
  else callback(null, address, 4);
};
const allowHosts = ['site.test', 'www.facebook.com', 'facebook.com'];

let site: LoopbackSite;
let pool: BrowserPool;
let outbound: ClosableOutboundClient;
let web: WebScraper;

before(async () => {
  if (skip) return;
  site = await startLoopbackSite();
  const port = site.port;
  site.route('/attack', () => ({
    headers: { 'content-type': 'text/html' },
    body: `<html><body><p id="state">page</p>
<img src="http://127.0.0.1:${port}/img-loopback"><iframe src="http://www.facebook.com:${port}/frame-blocked"></iframe>
<script>
  const targets = ['http://127.0.0.1:${port}/fetch-loopback', 'http://169.254.169.254/latest/meta-data/', 'http://www.facebook.com:${port}/fetch-blocked', 'http://facebook.com:${port}/fetch-blocked-apex'];
  Promise.allSettled(targets.map((t) => fetch(t, { mode: 'no-cors' }))).then(() => { document.getElementById('state').textContent = 'fetches settled'; });
  try { new WebSocket('ws://127.0.0.1:${port}/ws-loopback'); new WebSocket('ws://www.facebook.com:${port}/ws-blocked'); } catch {}
  navigator.sendBeacon && navigator.sendBeacon('http://127.0.0.1:${port}/beacon-loopback', 'x');
</script></body></html>`,
  }));
  site.route('/to-blocked', () => ({ status: 302, headers: { location: `http://www.facebook.com:${port}/landing` } }));
  site.route('/to-data', () => ({ headers: { 'content-type': 'text/html' }, body: '<script>location.href = "data:text/html,%3Cp%3Eescaped%3C/p%3E";</script>' }));
  pool = createBrowserPool({ executablePath: chromium, navigationTimeoutMs: 20_000, maxPagesPerBrowser: 2, allowHosts, lookup, idleTimeoutMs: 0, sandbox: TEST_BROWSER_SANDBOX });
  outbound = createOutboundClient({ allowHosts, lookup, timeoutMs: 10_000, connectTimeoutMs: 5_000, headersTimeoutMs: 5_000 });
  web = createWebScraper(
    { timeoutMs: 10_000, browserTimeoutMs: 20_000, proxyConfigured: false },
    { runtime: createUpstreamRuntime({ outbound, browser: async () => pool }), browser: async () => pool, blocklist: createDomainBlocklist() },
  );
});

after(async () => {
  await pool?.close();
  await outbound?.close();
  await site?.close();
});

const request = (url: string) => ({ url, method: 'GET' as const, browser: true, format: 'raw' as const, links: false });
const context = () => ({ signal: new AbortController().signal });

test('scripts reach neither 127.0.0.1, nor 169.254.169.254, nor a blocked domain', { skip, timeout: 60_000 }, async () => {
  const outcome = await web.scrape(request(`http://site.test:${site.port}/attack`), context());
  assert.equal(outcome.kind, 'ok', JSON.stringify(outcome));
  assert.ok(outcome.kind === 'ok' && outcome.page.content.includes('fetches settled'), 'the page ran its scripts');
  const paths = site.log.map((hit) => `${hit.host} ${hit.path}`);
  // The page and the browser's own favicon request are all that arrived.
  const expected = new Set([`site.test:${site.port} /attack`, `site.test:${site.port} /favicon.ico`]);
  assert.deepEqual(paths.filter((entry) => !expected.has(entry)), [], `the access log: ${paths.join(', ')}`);
  assert.ok(paths.includes(`site.test:${site.port} /attack`));
});

test('a redirect of the main document into a blocked domain is refused before it is requested', { skip, timeout: 60_000 }, async () => {
  const before = site.log.length;
  const outcome = await web.scrape(request(`http://site.test:${site.port}/to-blocked`), context());
  assert.equal(outcome.kind, 'blocked_domain');
  assert.deepEqual(site.log.slice(before).map((hit) => hit.path), ['/to-blocked']);
});

test('a navigation to data: is refused: the page stays where it was', { skip, timeout: 60_000 }, async () => {
  const outcome = await web.scrape(request(`http://site.test:${site.port}/to-data`), context());
  // Chromium refuses top-frame data: navigations itself; the renderer's check would fail the
  // request (`invalid_url`) if one committed. Either way the data: document never comes back.
  if (outcome.kind === 'ok') {
    assert.equal(outcome.page.url, `http://site.test:${site.port}/to-data`);
    assert.ok(!outcome.page.content.includes('<p>escaped</p>'));
  } else {
    assert.equal(outcome.kind, 'unreachable');
  }
});

test('the first URL on a blocked domain never reaches the browser', { skip, timeout: 60_000 }, async () => {
  const before = site.log.length;
  const outcome = await web.scrape(request(`http://www.facebook.com:${site.port}/`), context());
  assert.equal(outcome.kind, 'blocked_domain');
  assert.equal(site.log.length, before);
});
