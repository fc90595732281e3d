/**
 * /v1/web with proxy_country through a real local forward proxy (proxy-chain): the configured
 * proxy username is rewritten by PROXY_COUNTRY_USERNAME, the proxy is asked for a tunnel to the
 * checked address, the request is forwarded as the caller asked, and the geo price is charged.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Server as ProxyServer } from 'proxy-chain';
import { startTestService, type TestService } from '../support/service.ts';
import { startLoopbackSite, type LoopbackSite } from '../support/web-site.ts';

interface ProxyHit {
  username: string;
  password: string;
  hostname: string;
  port: number;
  proxyAuthorization?: string;
}

let service: TestService;
let site: LoopbackSite;
let proxy: ProxyServer;
const proxyHits: ProxyHit[] = [];

before(async () => {
  site = await startLoopbackSite();
  site.route('/where', (hit) => ({ headers: { 'content-type': 'text/plain' }, body: `seen ${hit.method} ${hit.headers['x-custom'] ?? '-'} ${hit.body}` }));
  proxy = new ProxyServer({
    port: 0,
    host: '127.0.0.1',
    prepareRequestFunction: ({ username, password, hostname, port, request }) => {
      proxyHits.push({ username, password, hostname, port, proxyAuthorization: request.headers['proxy-authorization'] });
      return { requestAuthentication: !username.startsWith('acct') || password !== 'pw' };
    },
  });
  await proxy.listen();
  service = await startTestService({
    OUTBOUND_ALLOW_HOSTS: 'localhost',
    PROXY_URL: `http://acct:pw@127.0.0.1:${proxy.port}`,
    PROXY_COUNTRY_USERNAME: '{username}-cc-{country}-session1',
  });
});

after(async () => {
  await service?.close();
  await proxy?.close(true);
  await site?.close();
});

test('proxy_country rewrites the proxy username, forwards the request as asked, and costs 5', async () => {
  const user = await service.user({ scraping: 10 });
  const r = await service.call('POST', '/v1/web', {
    token: user.token,
    body: { url: `${site.url('localhost')}/where`, proxy_country: 'de', method: 'POST', headers: { 'X-Custom': 'geo', 'Proxy-Authorization': 'Basic Zm9vOmJhcg==' }, body: 'q=1' },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.response.content, 'seen POST geo q=1');
  const hit = proxyHits.at(-1);
  assert.equal(hit?.username, 'acct-cc-de-session1');
  assert.equal(hit?.password, 'pw');
  // The proxy is asked for the address checked here, never the name (no DNS rebinding through
  // it); the name still reaches the site as the Host header.
  assert.ok(hit?.hostname === '127.0.0.1' || hit?.hostname === '::1', `CONNECT to ${hit?.hostname}`);
  assert.equal(hit?.port, Number(new URL(site.url('localhost')).port));
  assert.equal(site.log.at(-1)?.headers.host, new URL(site.url('localhost')).host);
  assert.equal(hit?.proxyAuthorization, `Basic ${Buffer.from('acct-cc-de-session1:pw').toString('base64')}`, "the caller's Proxy-Authorization never replaces ours");
  assert.equal(site.log.at(-1)?.headers['proxy-authorization'], undefined);
  assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 5);
});

test('without proxy_country the configured username is used as is, at the plain price', async () => {
  const user = await service.user({ scraping: 10 });
  const r = await service.call('POST', '/v1/web', { token: user.token, body: { url: `${site.url('localhost')}/where` } });
  assert.equal(r.status, 200, r.text);
  assert.equal(proxyHits.at(-1)?.username, 'acct');
  assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 9);
});

test('a balance below the geo price: 403, nothing sent', async () => {
  const user = await service.user({ scraping: 4 });
  const before = proxyHits.length;
  const r = await service.call('POST', '/v1/web', { token: user.token, body: { url: `${site.url('localhost')}/where`, proxy_country: 'fr' } });
  assert.equal(r.status, 403);
  assert.equal(proxyHits.length, before);
  assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 4);
});
