import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { createOutboundClient, type ClosableOutboundClient } from '../../src/outbound/client.ts';
import type { LookupFunction } from '../../src/outbound/resolve.ts';
import { OutboundError } from '../../src/outbound/types.ts';

// A tiny forward (plain http) and CONNECT (https) proxy on loopback that records, for every
// request it receives, the target and the username of its Proxy-Authorization.

interface ProxyRecord {
  kind: 'forward' | 'connect';
  target: string;
  username: string;
}

const proxyLog: ProxyRecord[] = [];

function usernameOf(header: string | undefined): string {
  if (header === undefined || !header.startsWith('Basic ')) return '(none)';
  const decoded = Buffer.from(header.slice('Basic '.length), 'base64').toString();
  return decoded.slice(0, decoded.indexOf(':'));
}

function createTestProxy(): http.Server {
  const proxy = http.createServer((req, res) => {
    proxyLog.push({ kind: 'forward', target: req.url ?? '', username: usernameOf(req.headers['proxy-authorization']) });
    const target = new URL(req.url ?? '');
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: req.method, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  proxy.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    proxyLog.push({ kind: 'connect', target: req.url ?? '', username: usernameOf(req.headers['proxy-authorization']) });
    const [host, port] = (req.url ?? '').split(':');
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  return proxy;
}

const testLookup: LookupFunction = (hostname, options, callback) => {
  const table: Record<string, string> = { 'loopback.test': '127.0.0.1', 'named.test': '127.0.0.1', 'private.test': '10.1.2.3' };
  const address = table[hostname];
  if (address === undefined) {
    callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
  } else if (options.all) {
    callback(null, [{ address, family: 4 }]);
  } else {
    callback(null, address, 4);
  }
};

let app: http.Server;
let proxy: http.Server;
let A = 0;
let proxyPort = 0;
let client: ClosableOutboundClient;
let customTemplate: ClosableOutboundClient;

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

before(async () => {
  app = http.createServer((req, res) => {
    if (req.url === '/host') {
      res.end(`host ${req.headers.host}`);
    } else if (req.url === '/to-private') {
      res.writeHead(302, { location: `http://127.0.0.2:${A}/` }).end();
    } else {
      res.end(`app saw ${req.url}`);
    }
  });
  A = await listen(app);
  proxy = createTestProxy();
  proxyPort = await listen(proxy);

  const options = {
    allowHosts: ['127.0.0.1', 'named.test'],
    proxyUrl: `http://user:secret@127.0.0.1:${proxyPort}`,
    lookup: testLookup,
    timeoutMs: 3000,
    connectTimeoutMs: 1000,
    headersTimeoutMs: 2000,
  };
  client = createOutboundClient(options);
  customTemplate = createOutboundClient({ ...options, proxyCountryUsername: 'customer-{username}-cc-{country}' });
});

after(async () => {
  await Promise.all([client.close(), customTemplate.close()]);
  for (const server of [app, proxy]) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function refusal(promise: Promise<unknown>): Promise<OutboundError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof OutboundError, `expected an OutboundError, got ${String(error)}`);
    return error;
  }
  assert.fail('the request was expected to be refused');
}

describe('requests through PROXY_URL', () => {
  test('a plain request goes through the proxy, tunnelled, with the configured username', async () => {
    proxyLog.length = 0;
    const response = await client.fetch(`http://127.0.0.1:${A}/page`, { maxBytes: 1000 });
    assert.equal(response.body.toString(), 'app saw /page');
    assert.deepEqual(proxyLog, [{ kind: 'connect', target: `127.0.0.1:${A}`, username: 'user' }]);
  });

  test('a name is resolved here: the proxy is asked for the checked address, the target still sees the name', async () => {
    proxyLog.length = 0;
    const response = await client.fetch(`http://named.test:${A}/host`, { maxBytes: 1000 });
    assert.equal(response.body.toString(), `host named.test:${A}`);
    assert.deepEqual(proxyLog, [{ kind: 'connect', target: `127.0.0.1:${A}`, username: 'user' }]);
  });

  test('proxyCountry rewrites the username with the default template', async () => {
    proxyLog.length = 0;
    await client.fetch(`http://127.0.0.1:${A}/de`, { maxBytes: 1000, proxyCountry: 'de' });
    assert.equal(proxyLog.length, 1);
    assert.equal(proxyLog[0].username, 'user-country-de');
  });

  test('PROXY_COUNTRY_USERNAME changes the template', async () => {
    proxyLog.length = 0;
    await customTemplate.fetch(`http://127.0.0.1:${A}/us`, { maxBytes: 1000, proxyCountry: 'us' });
    assert.equal(proxyLog[0].username, 'customer-user-cc-us');
  });

  test('https targets are tunnelled with CONNECT under the country username', async () => {
    proxyLog.length = 0;
    // The tunnel ends on a plain-http server, so the TLS handshake itself fails afterwards.
    const error = await refusal(client.fetch(`https://127.0.0.1:${A}/`, { maxBytes: 1000, proxyCountry: 'fr' }));
    assert.equal(error.code, 'network');
    assert.deepEqual(proxyLog[0], { kind: 'connect', target: `127.0.0.1:${A}`, username: 'user-country-fr' });
  });

  const refusedBeforeTheProxy = [
    'http://10.0.0.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://2130706434/', // 127.0.0.2 (127.0.0.1 is exempted here)
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'https://127.0.0.2/',
    'http://loopback.test/',
    'http://private.test/',
  ];
  for (const url of refusedBeforeTheProxy) {
    test(`${url} is refused before the proxy sees anything`, async () => {
      proxyLog.length = 0;
      const error = await refusal(client.fetch(url, { maxBytes: 1000, proxyCountry: 'de' }));
      assert.equal(error.code, 'blocked_address');
      assert.deepEqual(proxyLog, []);
    });
  }

  test('each redirect hop is checked before it is sent to the proxy', async () => {
    proxyLog.length = 0;
    const error = await refusal(client.fetch(`http://127.0.0.1:${A}/to-private`, { maxBytes: 1000 }));
    assert.equal(error.code, 'blocked_address');
    assert.equal(error.url, `http://127.0.0.2:${A}/`);
    // The first hop may reuse an open tunnel; the second never reaches the proxy.
    assert.deepEqual(proxyLog.filter((record) => record.target !== `127.0.0.1:${A}`), []);
  });

  test('a country that could forge proxy credentials is a caller error', async () => {
    await assert.rejects(client.fetch(`http://127.0.0.1:${A}/`, { maxBytes: 1000, proxyCountry: 'de:pass@x' }), TypeError);
  });

  test('isPublicUrl applies the same rules in proxy mode', async () => {
    assert.equal(await client.isPublicUrl('http://private.test/'), false);
    assert.equal(await client.isPublicUrl(`http://127.0.0.1:${A}/`), true);
  });
});
