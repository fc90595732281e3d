import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { mkdtemp, readdir, readlink, rm } from 'node:fs/promises';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { isBrowserAvailable } from '../../src/browser/availability.ts';
import { DEFAULT_CHROMIUM_PATH } from '../../src/browser/launch.ts';
import { createBrowserPool } from '../../src/browser/pool.ts';
import type { BrowserPool } from '../../src/browser/types.ts';
import type { LookupFunction } from '../../src/outbound/resolve.ts';
import { gzipBomb } from '../support/browser-bomb.ts';
import { OutboundError, type OutboundErrorCode } from '../../src/outbound/types.ts';
import { TEST_BROWSER_SANDBOX } from '../support/service.ts';

// The pool against a real Chromium. Pages are served from 127.0.0.1, which the pool exempts by
// name (as an operator would with OUTBOUND_ALLOW_HOSTS); a canary on 127.0.0.2 (TCP and UDP)
// stands for the internal network and must never see a packet. Test DNS: internal.test maps to
// 127.0.0.1 itself, which is refused because exemptions are by name, not by address.

const CHROMIUM = process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM_PATH;
const available = await isBrowserAvailable(CHROMIUM);
const skip = available ? false : `Chromium is not available at ${CHROMIUM} (install the chromium package or set CHROMIUM_PATH)`;

const DNS: Record<string, string[]> = {
  'internal.test': ['127.0.0.1'],
  'private.test': ['10.0.0.1'],
};
const testLookup: LookupFunction = (hostname, options, callback) => {
  const addresses = DNS[hostname];
  if (addresses === undefined) {
    callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
    return;
  }
  const entries = addresses.map((address) => ({ address, family: 4 }));
  if (options.all) callback(null, entries);
  else callback(null, entries[0].address, entries[0].family);
};

let app: http.Server;
let APP = 0;
/** `host path` of every request the app served. */
const appLog: string[] = [];
const held: Array<() => void> = [];
let maxHeld = 0;
let releaseHeld = false;
let onHeld: () => void = () => undefined;

let canary: net.Server;
let CANARY = 0;
let canaryConnections = 0;
let udpCanary: dgram.Socket;
let UDP_CANARY = 0;
let udpPackets = 0;

const JS_ONLY_PAGE = `<!doctype html><html><head><title>js page</title></head><body>
<div id="out"></div><div id="ua"></div><img src="/pixel.png" alt="">
<script>
document.getElementById('out').textContent = ['rendered', 'by', 'script'].join(' ');
document.getElementById('ua').textContent = navigator.userAgent;
</script>
</body></html>`;
/** User-Agent header of each request the app served, by path. */
const userAgents = new Map<string, string>();

/** Tries every way out of the page towards the canary and records what the page saw. */
function attackPage(): string {
  return `<!doctype html><html><head>
<link rel="stylesheet" href="http://internal.test:${APP}/style.css">
<script src="http://127.0.0.2:${CANARY}/script.js"></script>
</head><body><div id="results"></div>
<iframe src="http://private.test/frame"></iframe>
<script>
const seen = [];
const note = (what) => { seen.push(what); document.getElementById('results').textContent = seen.sort().join(' '); };
const attempts = [
  fetch('http://127.0.0.2:${CANARY}/fetch').then(() => note('fetch:loaded'), () => note('fetch:failed')),
  fetch('http://internal.test:${APP}/fetch').then(() => note('dns-fetch:loaded'), () => note('dns-fetch:failed')),
  new Promise((resolve) => {
    const ws = new WebSocket('ws://127.0.0.2:${CANARY}/socket');
    ws.onopen = () => { note('ws:open'); resolve(); };
    ws.onerror = () => { note('ws:failed'); resolve(); };
  }),
  new Promise((resolve) => {
    const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.2:${UDP_CANARY}' }] });
    pc.createDataChannel('probe');
    const done = () => { note('rtc:' + pc.iceGatheringState); pc.close(); resolve(); };
    pc.onicegatheringstatechange = () => { if (pc.iceGatheringState === 'complete') done(); };
    pc.createOffer().then((offer) => pc.setLocalDescription(offer));
    setTimeout(done, 5000);
  }),
];
Promise.all(attempts).then(() => document.body.setAttribute('data-done', '1'));
</script></body></html>`;
}

function handleApp(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://app');
  appLog.push(`${req.headers.host} ${url.pathname}`);
  userAgents.set(url.pathname, req.headers['user-agent'] ?? '');
  const html = (body: string) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'x-app': 'yes' }).end(body);
  switch (url.pathname) {
    case '/js':
      html(JS_ONLY_PAGE);
      break;
    case '/attack':
      html(attackPage());
      break;
    case '/redirect':
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/js' }).end();
      break;
    case '/script-navigation':
      html(`<script>location.href = '/blocked-page';</script>`);
      break;
    case '/late-navigation':
      res.writeHead(200, { 'content-type': 'text/html', 'x-app': 'first' });
      res.end(`<p>first document</p><script>setTimeout(() => { location.href = '/js'; }, 50);</script>`);
      break;
    case '/data-navigation':
      html(`<p>origin document</p><script>location.href = 'data:text/html,<p>' + 'from-data-url</p>';</script>`);
      break;
    case '/blocked-page':
      html('<p>should never be requested</p>');
      break;
    case '/big':
      html(`<p>${'x'.repeat(50_000)}</p>`);
      break;
    case '/hold':
      // Held until the test lets go, so it can look at the pool while pages are busy.
      held.push(() => html('<p>released</p>'));
      maxHeld = Math.max(maxHeld, held.length);
      if (releaseHeld) held.splice(0).forEach((release) => release());
      onHeld();
      break;
    case '/hang':
      break; // never answers: the deadline must fire
    case '/gzipped':
      // 2 MB of text in about 2 KB on the wire.
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip' }).end(gzipBomb(2, '<p>', '</p>'));
      break;
    default:
      res.writeHead(404).end();
  }
}

const pathsServed = (pathname: string) => appLog.filter((line) => line.endsWith(` ${pathname}`));

async function rejectsWith(promise: Promise<unknown>, code: OutboundErrorCode): Promise<OutboundError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof OutboundError, `expected an OutboundError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return error;
  }
  assert.fail(`expected a ${code} rejection`);
}

describe('browser availability', () => {
  test('a missing or non-executable path is reported unavailable without launching anything', async () => {
    assert.equal(await isBrowserAvailable('/nonexistent/chromium'), false);
    assert.equal(await isBrowserAvailable('/etc/hostname'), false);
  });

  test('the installed Chromium is reported available when it launches', { skip }, () => {
    assert.equal(available, true);
  });
});

describe('browser pool', { skip }, () => {
  let pool: BrowserPool;
  let userDataRoot: string;

  before(async () => {
    app = http.createServer(handleApp);
    canary = net.createServer((socket) => {
      canaryConnections += 1;
      socket.destroy();
    });
    udpCanary = dgram.createSocket('udp4');
    udpCanary.on('message', () => (udpPackets += 1));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.2', resolve));
    await new Promise<void>((resolve) => udpCanary.bind(0, '127.0.0.2', resolve));
    APP = (app.address() as AddressInfo).port;
    CANARY = (canary.address() as AddressInfo).port;
    UDP_CANARY = udpCanary.address().port;
    userDataRoot = await mkdtemp(path.join(os.tmpdir(), 'browser-pool-test-'));
    pool = createBrowserPool({
      executablePath: CHROMIUM,
      maxPagesPerBrowser: 2,
      navigationTimeoutMs: 20_000,
      allowHosts: ['127.0.0.1'],
      lookup: testLookup,
      userDataRoot,
      sandbox: TEST_BROWSER_SANDBOX,
    });
  });

  after(async () => {
    await pool?.close();
    app?.close();
    canary?.close();
    udpCanary?.close();
    if (userDataRoot) await rm(userDataRoot, { recursive: true, force: true });
  });

  test('renders content that only a JavaScript-capable client sees, without images', async () => {
    const raw = await fetch(`http://127.0.0.1:${APP}/js`).then((response) => response.text());
    assert.doesNotMatch(raw, /rendered by script/);

    const page = await pool.fetchPage({ url: `http://127.0.0.1:${APP}/js`, headers: { 'Accept-Language': 'en-GB' } });
    assert.equal(page.status, 200);
    assert.equal(page.url, `http://127.0.0.1:${APP}/js`);
    assert.equal(page.headers['x-app'], 'yes');
    assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(page.headers['transfer-encoding'], undefined);
    assert.match(page.body, /<div id="out">rendered by script<\/div>/);
    assert.deepEqual(page.refused, []);
    assert.equal(pathsServed('/pixel.png').length, 0, 'images are never requested');
    // An ordinary desktop user agent, in the header and in navigator.userAgent alike.
    assert.match(userAgents.get('/js') ?? '', /^Mozilla\/5\.0 .* Chrome\/\d+\.0\.0\.0 Safari\/537\.36$/);
    assert.match(page.body, /<div id="ua">Mozilla\/5\.0 [^<]* Chrome\/\d+\.0\.0\.0 Safari\/537\.36<\/div>/);
  });

  test('a User-Agent header replaces the browser user agent', async () => {
    const page = await pool.fetchPage({ url: `http://127.0.0.1:${APP}/js`, headers: { 'User-Agent': 'gleaner-test/1.0' } });
    assert.equal(userAgents.get('/js'), 'gleaner-test/1.0');
    assert.match(page.body, /<div id="ua">gleaner-test\/1\.0<\/div>/);
  });

  test('a malformed proxy country is a caller bug (TypeError) before any work', async () => {
    await assert.rejects(pool.fetchPage({ url: `http://127.0.0.1:${APP}/js`, proxyCountry: 'de:secret@' }), TypeError);
  });

  test('every way out of an allowed page towards a private address is refused by the guard', async () => {
    const refusalsBefore = pool.stats().refusals;
    const page = await pool.fetchPage({ url: `http://127.0.0.1:${APP}/attack`, render: { waitFor: 'body[data-done]' } });

    const results = /<div id="results">([^<]*)<\/div>/.exec(page.body)?.[1] ?? '';
    assert.equal(results, 'dns-fetch:failed fetch:failed rtc:complete ws:failed');
    assert.equal(canaryConnections, 0, 'no TCP connection reached the canary');
    assert.equal(udpPackets, 0, 'no UDP (STUN) packet reached the canary');
    assert.equal(pathsServed('/style.css').length + pathsServed('/fetch').length, 0, 'internal.test never reached the app');

    for (const target of [`127.0.0.2:${CANARY}`, `internal.test:${APP}`, 'private.test:80']) {
      assert.ok(page.refused.includes(target), `${target} refused (refused: ${page.refused.join(', ')})`);
    }
    assert.ok(pool.stats().refusals - refusalsBefore >= 4);
  });

  test('a main document on a name that resolves to a private address fails with blocked_address', async () => {
    const plain = await rejectsWith(pool.fetchPage({ url: `http://internal.test:${APP}/js` }), 'blocked_address');
    assert.match(plain.message, /internal\.test resolves to the non-public address 127\.0\.0\.1/);
    await rejectsWith(pool.fetchPage({ url: `https://internal.test:${APP}/js` }), 'blocked_address');
    await rejectsWith(pool.fetchPage({ url: `https://10.0.0.1/` }), 'blocked_address');
    assert.equal(pathsServed('/js').filter((line) => line.startsWith('internal.test')).length, 0);
  });

  test('a redirect to a private address fails with blocked_address', async () => {
    const to = encodeURIComponent(`http://internal.test:${APP}/js`);
    const error = await rejectsWith(pool.fetchPage({ url: `http://127.0.0.1:${APP}/redirect?to=${to}` }), 'blocked_address');
    assert.equal(error.url, `http://internal.test:${APP}/js`);
  });

  test('checkUrl refusing a redirect hop aborts with its error before the hop is requested', async () => {
    const seen: string[] = [];
    const refusal = new OutboundError('blocked_host', 'This domain is blocked', 'http://example.invalid/');
    const checkUrl = (url: URL) => {
      seen.push(url.pathname);
      if (url.pathname === '/blocked-page') throw refusal;
    };
    const before = pathsServed('/blocked-page').length;
    await assert.rejects(pool.fetchPage({ url: `http://127.0.0.1:${APP}/redirect?to=/blocked-page`, checkUrl }), (error) => error === refusal);
    assert.deepEqual(seen, ['/redirect', '/blocked-page']);
    assert.equal(pathsServed('/blocked-page').length, before, 'the refused hop was never requested');
  });

  test('checkUrl also sees script navigations; a plain Error becomes blocked_host', async () => {
    const before = pathsServed('/blocked-page').length;
    const checkUrl = (url: URL) => {
      if (url.pathname === '/blocked-page') throw new Error('domain on the block list');
    };
    const error = await rejectsWith(pool.fetchPage({ url: `http://127.0.0.1:${APP}/script-navigation`, checkUrl }), 'blocked_host');
    assert.equal(error.message, 'domain on the block list');
    assert.equal(pathsServed('/blocked-page').length, before);
  });

  test('a document replaced by a script after load is returned with its own status and headers', async () => {
    const seen: string[] = [];
    const page = await pool.fetchPage({ url: `http://127.0.0.1:${APP}/late-navigation`, checkUrl: (url) => void seen.push(url.pathname) });
    assert.equal(page.url, `http://127.0.0.1:${APP}/js`);
    assert.match(page.body, /rendered by script/);
    assert.equal(page.headers['x-app'], 'yes');
    assert.deepEqual(seen, ['/late-navigation', '/js']);
  });

  test('non-http(s) URLs are refused, directly or through a redirect', async () => {
    await rejectsWith(pool.fetchPage({ url: 'file:///etc/passwd' }), 'invalid_url');
    await rejectsWith(pool.fetchPage({ url: 'chrome://version' }), 'invalid_url');
    const to = encodeURIComponent('file:///etc/passwd');
    await rejectsWith(pool.fetchPage({ url: `http://127.0.0.1:${APP}/redirect?to=${to}` }), 'invalid_url');
    const page = await pool.fetchPage({ url: `http://127.0.0.1:${APP}/data-navigation` });
    assert.equal(page.url, `http://127.0.0.1:${APP}/data-navigation`);
    assert.match(page.body, /<p>origin document<\/p>/);
    assert.doesNotMatch(page.body, /<p>from-data-url<\/p>/);
  });

  test('a page that never answers fails with timeout at the request deadline', async () => {
    await rejectsWith(pool.fetchPage({ url: `http://127.0.0.1:${APP}/hang`, timeoutMs: 1_000 }), 'timeout');
  });

  test('a rendered page larger than maxBytes fails with too_large', async () => {
    await rejectsWith(pool.fetchPage({ url: `http://127.0.0.1:${APP}/big`, maxBytes: 10_000 }), 'too_large');
  });

  test('a page whose responses decode past maxDecodedBytes fails with too_large, whatever the wire carried', async () => {
    const capped = createBrowserPool({ executablePath: CHROMIUM, navigationTimeoutMs: 20_000, allowHosts: ['127.0.0.1'], maxDecodedBytes: 1024 * 1024, userDataRoot, sandbox: TEST_BROWSER_SANDBOX });
    try {
      const error = await rejectsWith(capped.fetchPage({ url: `http://127.0.0.1:${APP}/gzipped` }), 'too_large');
      assert.match(error.message, /decode to more than 1048576 bytes/);
      // The same page within the cap renders.
      const page = await pool.fetchPage({ url: `http://127.0.0.1:${APP}/gzipped`, maxBytes: 4 * 1024 * 1024 });
      assert.equal(page.status, 200);
      assert.ok(page.body.length > 2 * 1024 * 1024);
    } finally {
      await capped.close();
    }
  });

  test('requests beyond the page limit wait their turn', async () => {
    const twoHeld = new Promise<void>((resolve) => {
      onHeld = () => {
        if (held.length === 2) resolve();
      };
    });
    const pages = [1, 2, 3].map((n) => pool.fetchPage({ url: `http://127.0.0.1:${APP}/hold?n=${n}` }));
    await twoHeld;
    const { active, queued } = pool.stats();
    assert.deepEqual({ active, queued }, { active: 2, queued: 1 }, 'the third request waits for a page slot');
    releaseHeld = true;
    held.splice(0).forEach((release) => release());
    assert.deepEqual((await Promise.all(pages)).map((page) => page.status), [200, 200, 200]);
    assert.equal(maxHeld, 2, 'never more than maxPagesPerBrowser pages at once');
  });

  test('a crashed browser is relaunched and profiles are deleted on close', async () => {
    const profiles = await readdir(userDataRoot);
    assert.equal(profiles.length, 1);
    const lock = await readlink(path.join(userDataRoot, profiles[0], 'SingletonLock'));
    const pid = Number(lock.split('-').pop());
    const launches = pool.stats().launches;
    process.kill(pid, 'SIGKILL');

    const page = await pool.fetchPage({ url: `http://127.0.0.1:${APP}/js` });
    assert.match(page.body, /rendered by script/);
    assert.equal(pool.stats().launches, launches + 1);

    await pool.close();
    assert.deepEqual(await readdir(userDataRoot), []);
    await rejectsWith(pool.fetchPage({ url: `http://127.0.0.1:${APP}/js` }), 'network');
  });
});

describe('browser pool idle shutdown', { skip }, () => {
  test('an idle browser is shut down and its profile deleted', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'browser-idle-test-'));
    const server = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>idle test</p>'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const idlePool = createBrowserPool({
      executablePath: CHROMIUM,
      navigationTimeoutMs: 20_000,
      allowHosts: ['127.0.0.1'],
      idleTimeoutMs: 100,
      userDataRoot: root,
      sandbox: TEST_BROWSER_SANDBOX,
    });
    try {
      const page = await idlePool.fetchPage({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` });
      assert.match(page.body, /idle test/);
      for (let waited = 0; (idlePool.stats().running > 0 || (await readdir(root)).length > 0) && waited < 10_000; waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(idlePool.stats().running, 0);
      assert.deepEqual(await readdir(root), []);
    } finally {
      await idlePool.close();
      server.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});
