/**
 * Issue 19 item 5, the red team's smaller findings, each kept as a regression test:
 *
 * 1. An unknown method (`QUERY`) with `Content-Length: 0` answered 500 on every path, no token
 *    needed: the error handler turned Fastify's own 4xx into 500s. Now 404/405 as for any method.
 * 2. Header values outside Latin-1 passed validation and failed in the outbound client: a
 *    misleading 502. Now a free 422 on `headers`.
 * 3. An allowed host was allowed on every port: `POST /v1/web` fetched the service's own API and
 *    metrics listener. Now the client never connects to them; `host:port` entries narrow the list.
 * 4. `/v1/mb/search` without X_ACCOUNTS answered 403 (no credits) to a zero balance. Now 503.
 * 5. DNS rebinding through PROXY_URL: a name checked public was resolved again by the proxy, to a
 *    canary. Now the proxy is asked for the checked address (`CONNECT ip:port`).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { Server as ForwardProxy } from 'proxy-chain';
import { startTestService, type TestService } from '../support/service.ts';
import { historyRow, houseRuleViolation, readAnswer } from '../support/reliability-harness.ts';
import { REBIND_NAME, startCanary, startRebindingDns } from '../support/rebinding-dns.ts';
import { createOutboundClient } from '../../src/outbound/client.ts';
import { fileWatchdog } from '../support/health-watchdog.ts';

/** One raw HTTP/1.1 request, so any method and framing can be sent; answers the status and body. */
function rawRequest(url: string, method: string, path: string, extraHeaders: string): Promise<{ status: number; body: string; requestId: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(`${method} ${path} HTTP/1.1\r\nHost: ${hostname}\r\n${extraHeaders}Connection: close\r\n\r\n`));
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), body, requestId: /\r\nx-request-id: /i.test(head) });
    });
  });
}

describe('the service as the red team met it', () => {
  const watchdog = fileWatchdog('the red team\'s smaller findings');
  let service: TestService;
  let page: http.Server;
  let pageUrl: string;
  let metricsPort: number;

  before(async () => {
    page = http.createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<p>a loopback page</p>'));
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    metricsPort = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    // The integration tests' setting: loopback exempted on every port, so loopback fakes are reached.
    service = await startTestService({ OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost', METRICS_PORT: String(metricsPort) });
    watchdog.start(service.url);
  });

  after(async () => {
    await service?.close();
    await new Promise((resolve) => page?.close(resolve));
  });

  const METHODS = ['QUERY', 'PROPFIND', 'SEARCH', 'OPTIONS', 'PURGE', 'LOCK', 'TRACE'];
  const FRAMINGS = { 'Content-Length: 0': 'Content-Length: 0\r\n', 'no body': '', 'a JSON type, no body': 'Content-Type: application/json\r\nContent-Length: 0\r\n' };
  for (const method of METHODS) {
    test(`${method} with every framing, on every kind of path, without a token: 404 or 405, never a 5xx`, async () => {
      for (const [framing, headers] of Object.entries(FRAMINGS)) {
        for (const [path, expected] of [['/health', 405], ['/v1/web', 405], ['/admin/users', 405], ['/no/such/path', 404]] as const) {
          const answer = await rawRequest(service.url, method, path, headers);
          assert.equal(answer.status, expected, `${method} ${path} (${framing}): ${answer.status} ${answer.body}`);
          assert.ok(answer.requestId, `${method} ${path} (${framing}) has an X-Request-Id`);
          assert.equal(typeof JSON.parse(answer.body).message, 'string');
        }
      }
    });
  }

  test('QUERY /health answers in the contract\'s words, with Allow', async () => {
    const response = await fetch(`${service.url}/health`, { method: 'QUERY', headers: { 'content-length': '0' } });
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'GET, HEAD');
    assert.deepEqual(await response.json(), { message: 'The QUERY method is not supported for this route. Supported methods: GET, HEAD.' });
    const unknown = await fetch(`${service.url}/nothing-here`, { method: 'QUERY' });
    assert.equal(unknown.status, 404);
    assert.deepEqual(await unknown.json(), { message: 'Not Found.' });
  });

  for (const [what, value] of [['ā (U+0101)', 'ā'], ['an emoji', '😀'], ['U+2028', 'a\u2028b'], ['a C1 control', 'a\u0085b'], ['DEL', 'a\u007fb']]) {
    test(`a header value with ${what} is a free 422 on headers, not a 502`, async () => {
      const user = await service.user({ scraping: 100 });
      const response = await service.call('POST', '/v1/web', { token: user.token, body: { url: pageUrl, headers: { 'X-Note': value } } });
      assert.equal(response.status, 422, response.text);
      assert.deepEqual(Object.keys(response.body.errors), ['headers']);
      assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 100);
    });
  }

  test('Latin-1 header values are still sent', async () => {
    const user = await service.user({ scraping: 100 });
    const response = await service.call('POST', '/v1/web', { token: user.token, body: { url: pageUrl, headers: { 'X-Note': 'café ÿ\tend' } } });
    assert.equal(response.status, 200, response.text);
  });

  test("the service's own API and metrics listener are never fetched, even when their host is allowed", async () => {
    const user = await service.user({ scraping: 100 });
    const api = new URL(service.url);
    const targets = [
      `http://127.0.0.1:${api.port}/health`,
      `http://localhost:${api.port}/openapi.json`,
      `http://127.0.0.1:${metricsPort}/metrics`,
      `http://localhost:${metricsPort}/metrics`,
      `http://[::ffff:127.0.0.1]:${metricsPort}/metrics`,
    ];
    // Every target is tried before asserting, so a failure names each listener that was reached.
    const reached: string[] = [];
    for (const url of targets) {
      const response = await service.call('POST', '/v1/web', { token: user.token, body: { url } });
      if (response.status !== 422 && response.status !== 502) {
        reached.push(`${url}: ${response.status} ${response.text.slice(0, 120)}`);
        continue;
      }
      assert.equal(houseRuleViolation(await readAnswer(new Response(response.text, { status: response.status, headers: response.headers }))), null);
      assert.equal(await historyRow(service, response.headers.get('x-request-id')!).then((row) => row?.credits), 0, `${url} is free`);
    }
    assert.deepEqual(reached, []);
    // Loopback fakes on other ports are still reached: the exemption itself still holds.
    assert.equal((await service.call('POST', '/v1/web', { token: user.token, body: { url: pageUrl } })).status, 200);
  });

  test('/v1/mb/search without X_ACCOUNTS: 503 "This endpoint is not configured." whatever the balance, free', async () => {
    for (const balance of [0, 100]) {
      const user = await service.user({ scraping: balance });
      for (const path of ['/v1/mb/search', '/v1/mb/user', '/v1/mb/user-tweets']) {
        const body = path === '/v1/mb/search' ? { query: 'gleaner' } : { username: 'XDevelopers' };
        const response = await service.call('POST', path, { token: user.token, body });
        assert.equal(response.status, 503, `${path} with balance ${balance}: ${response.text}`);
        assert.deepEqual(response.body, { message: 'This endpoint is not configured.' });
        assert.deepEqual(await historyRow(service, response.headers.get('x-request-id')!), { status: 503, credits: 0 });
      }
      assert.equal(await service.services.ledger.balance(user.id, 'scraping'), balance);
    }
  });

  test('no request of these findings stalled the event loop: /health answered within 1 s throughout (issue 33)', async () => {
    await watchdog.assertClean();
  });
});

describe('OUTBOUND_ALLOW_HOSTS with host:port entries', () => {
  let service: TestService;
  let allowed: http.Server;
  let canary: Awaited<ReturnType<typeof startCanary>>;

  before(async () => {
    allowed = http.createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<p>allowed</p>'));
    await new Promise<void>((resolve) => allowed.listen(0, '127.0.0.1', resolve));
    canary = await startCanary();
    service = await startTestService({ OUTBOUND_ALLOW_HOSTS: `127.0.0.1:${(allowed.address() as AddressInfo).port}` });
  });

  after(async () => {
    await service?.close();
    await new Promise((resolve) => allowed?.close(resolve));
    await canary?.close();
  });

  test('exempt that port only', async () => {
    const user = await service.user({ scraping: 100 });
    const ok = await service.call('POST', '/v1/web', { token: user.token, body: { url: `http://127.0.0.1:${(allowed.address() as AddressInfo).port}/` } });
    assert.equal(ok.status, 200, ok.text);
    const refused = await service.call('POST', '/v1/web', { token: user.token, body: { url: `http://127.0.0.1:${canary.port}/` } });
    assert.equal(refused.status, 422, refused.text);
    assert.equal(canary.connections(), 0);
  });
});

describe('DNS rebinding through PROXY_URL', () => {
  // Public, and unreachable from here: the tunnel to it fails, which is the point.
  const PUBLIC = '93.184.216.34';

  for (const scheme of ['http', 'https'] as const) {
    test(`${scheme}: the proxy is asked for the checked address, never the name, and the canary sees nothing`, async () => {
      const canary = await startCanary();
      const dns = await startRebindingDns(PUBLIC);
      const asked: string[] = [];
      const proxy = new ForwardProxy({
        port: 0,
        host: '127.0.0.1',
        prepareRequestFunction: ({ hostname, port }) => {
          asked.push(`${hostname}:${port}`);
          return { dnsLookup: dns.lookup as never };
        },
      });
      await proxy.listen();
      const client = createOutboundClient({ allowHosts: [], proxyUrl: `http://127.0.0.1:${proxy.port}`, lookup: dns.lookup, timeoutMs: 4000, connectTimeoutMs: 1500, headersTimeoutMs: 2000 });
      try {
        const outcome = await client.fetch(`${scheme}://${REBIND_NAME}:${canary.port}/`, { maxBytes: 1000 }).then(
          (response) => `answered ${response.status}`,
          (error: Error & { code?: string }) => error.code,
        );
        assert.notEqual(outcome, 'answered 200');
        assert.equal(canary.connections(), 0, 'the canary was reached through the proxy');
        assert.deepEqual(asked, [`${PUBLIC}:${canary.port}`]);
        assert.ok(dns.queries() >= 1, 'the name was resolved here');
      } finally {
        await client.close();
        await proxy.close(true);
        dns.close();
        await canary.close();
      }
    });
  }
});
