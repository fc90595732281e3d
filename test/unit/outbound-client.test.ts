import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable, pipeline } from 'node:stream';
import { brotliCompressSync, createGzip, deflateRawSync, gzipSync } from 'node:zlib';
import { createOutboundClient, type ClosableOutboundClient } from '../../src/outbound/client.ts';
import { OutboundError, type OutboundErrorCode, type OutboundRequest } from '../../src/outbound/types.ts';
import type { LookupFunction } from '../../src/outbound/resolve.ts';

// ---------------------------------------------------------------------------------------------
// Test DNS: names map to chosen addresses; nothing here touches the real resolver.

const PUBLIC_ADDRESS = '93.184.215.14';
let rebindLookups = 0;

const DNS: Record<string, () => string[] | null> = {
  'loopback.test': () => ['127.0.0.1'],
  'private.test': () => ['10.0.0.5'],
  'mixed.test': () => [PUBLIC_ADDRESS, '127.0.0.1'],
  'mapped.test': () => ['::ffff:127.0.0.1'],
  'metadata.test': () => ['169.254.169.254'],
  'ula.test': () => ['fd00::1'],
  'public.test': () => [PUBLIC_ADDRESS],
  'allowed.test': () => ['127.0.0.1'],
  localhost: () => ['127.0.0.1', '::1'],
  'localhost.': () => ['127.0.0.1', '::1'],
  // Answers a public address once, then the loopback address: a DNS-rebinding attacker.
  'rebind.test': () => (rebindLookups++ === 0 ? [PUBLIC_ADDRESS] : ['127.0.0.1']),
  // Never answers: the connect timeout must still fire.
  'hang.test': () => null,
  // Answers only when the test releases it (with ENOTFOUND).
  'stall.test': () => null,
};
const stalledLookups: Array<() => void> = [];

const testLookup: LookupFunction = (hostname, options, callback) => {
  const answer = DNS[hostname];
  if (answer === undefined) {
    callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
    return;
  }
  const addresses = answer();
  if (addresses === null) {
    if (hostname === 'stall.test') {
      stalledLookups.push(() => callback(Object.assign(new Error('getaddrinfo ENOTFOUND stall.test'), { code: 'ENOTFOUND' }), ''));
    }
    return;
  }
  const entries = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  if (options.all) callback(null, entries);
  else callback(null, entries[0].address, entries[0].family);
};

// ---------------------------------------------------------------------------------------------
// Loopback servers. The canary listens dual-stack on every loopback form and must never be hit
// by a refused request; the app server is the "allowed" server, exempted as 127.0.0.1.

const ONE_MB = 1024 * 1024;
const HELLO = 'Hello from the allowed server. '.repeat(50);
let canaryHits = 0;
let canary: http.Server;
let app: http.Server;
let P = 0; // canary port
let A = 0; // app port
const appTimers = new Set<NodeJS.Timeout>();

function appHandler(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = url.pathname;

  if (path === '/ok') {
    res.end(HELLO);
  } else if (path === '/gzip') {
    res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'text/plain' }).end(gzipSync(HELLO));
  } else if (path === '/br') {
    res.writeHead(200, { 'content-encoding': 'br' }).end(brotliCompressSync(HELLO));
  } else if (path === '/deflate-raw') {
    res.writeHead(200, { 'content-encoding': 'deflate' }).end(deflateRawSync(HELLO));
  } else if (path === '/redirect') {
    res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '/ok' }).end();
  } else if (path.startsWith('/chain/')) {
    const left = Number(path.slice('/chain/'.length));
    if (left === 0) res.end('end of chain');
    else res.writeHead(302, { location: `/chain/${left - 1}` }).end();
  } else if (path === '/echo') {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ method: req.method, headers: req.headers, body: Buffer.concat(chunks).toString() }));
    });
  } else if (path === '/exact') {
    res.end(Buffer.alloc(Number(url.searchParams.get('n')), 'a'));
  } else if (path === '/big-cl') {
    res.writeHead(200, { 'content-length': String(2 * ONE_MB) });
    res.end(Buffer.alloc(2 * ONE_MB, 'a'));
  } else if (path === '/endless') {
    // Chunked, never ends: only the size cap can stop it.
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const pump = () => {
      while (!res.destroyed && res.write(chunk));
    };
    res.on('drain', pump);
    pump();
  } else if (path === '/bomb') {
    // An endless gzip stream of zeros: a few KB on the wire per MB once decoded.
    res.writeHead(200, { 'content-encoding': 'gzip' });
    const zeros = new Readable({ read() { this.push(Buffer.alloc(64 * 1024)); } });
    pipeline(zeros, createGzip(), res, () => {});
  } else if (path === '/slow-headers') {
    // Never answers; the connection is torn down when the client gives up.
  } else if (path === '/trickle') {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.flushHeaders();
    const timer = setInterval(() => res.write('x'), 50);
    appTimers.add(timer);
    res.on('close', () => {
      clearInterval(timer);
      appTimers.delete(timer);
    });
  } else {
    res.writeHead(404).end('not found');
  }
}

function listen(server: http.Server, host: string): Promise<number> {
  return new Promise((resolve) => server.listen(0, host, () => resolve((server.address() as AddressInfo).port)));
}

function shut(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

// ---------------------------------------------------------------------------------------------
// Clients: `strict` exempts nothing; `allowing` exempts the app server; `impatient` has tiny timeouts.

const baseOptions = { timeoutMs: 3000, connectTimeoutMs: 1000, headersTimeoutMs: 2000, lookup: testLookup };
let strict: ClosableOutboundClient;
let allowing: ClosableOutboundClient;
let impatient: ClosableOutboundClient;

before(async () => {
  canary = http.createServer((_req, res) => {
    canaryHits++;
    res.end('canary');
  });
  P = await listen(canary, '::');
  app = http.createServer(appHandler);
  A = await listen(app, '127.0.0.1');

  strict = createOutboundClient({ ...baseOptions, allowHosts: [] });
  allowing = createOutboundClient({ ...baseOptions, allowHosts: ['127.0.0.1', 'allowed.test'], userAgent: 'gleaner-test' });
  impatient = createOutboundClient({
    allowHosts: ['127.0.0.1'],
    lookup: testLookup,
    timeoutMs: 400,
    connectTimeoutMs: 200,
    headersTimeoutMs: 200,
  });
});

after(async () => {
  for (const timer of appTimers) clearInterval(timer);
  await Promise.all([strict.close(), allowing.close(), impatient.close()]);
  await Promise.all([shut(canary), shut(app)]);
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

const get = (client: ClosableOutboundClient, url: string, request: Partial<OutboundRequest> = {}) =>
  client.fetch(url, { maxBytes: ONE_MB, ...request });

// ---------------------------------------------------------------------------------------------

describe('hostile targets are refused before any connection', () => {
  const cases: Array<[url: () => string, code: OutboundErrorCode]> = [
    // IPv4 loopback and its numeric spellings (normalised by the WHATWG URL parser)
    [() => `http://127.0.0.1:${P}/`, 'blocked_address'],
    [() => `http://127.0.0.2:${P}/`, 'blocked_address'],
    [() => `http://127.1:${P}/`, 'blocked_address'],
    [() => `http://2130706433:${P}/`, 'blocked_address'],
    [() => `http://0x7f000001:${P}/`, 'blocked_address'],
    [() => `http://017700000001:${P}/`, 'blocked_address'],
    [() => `http://0x7f.1:${P}/`, 'blocked_address'],
    [() => `http://0177.0.0.1:${P}/`, 'blocked_address'],
    [() => `http://0X7F.0.0.1:${P}/`, 'blocked_address'],
    [() => `http://127.255.255.254:${P}/`, 'blocked_address'],
    // unspecified
    [() => `http://0.0.0.0:${P}/`, 'blocked_address'],
    [() => `http://0:${P}/`, 'blocked_address'],
    [() => `http://[::]:${P}/`, 'blocked_address'],
    // private
    [() => 'http://10.0.0.1/', 'blocked_address'],
    [() => 'http://172.16.0.1/', 'blocked_address'],
    [() => 'http://172.31.255.255/', 'blocked_address'],
    [() => 'http://192.168.1.1/', 'blocked_address'],
    [() => 'http://3232235777/', 'blocked_address'],
    // link-local and the cloud metadata endpoint, in several spellings
    [() => 'http://169.254.169.254/latest/meta-data/', 'blocked_address'],
    [() => 'http://2852039166/latest/meta-data/', 'blocked_address'],
    [() => 'http://0xa9fea9fe/', 'blocked_address'],
    [() => 'http://0251.0376.0251.0376/', 'blocked_address'],
    [() => 'http://[::ffff:169.254.169.254]/', 'blocked_address'],
    [() => `http://[fe80::1]:${P}/`, 'blocked_address'],
    // carrier-grade NAT, multicast, reserved and documentation ranges
    [() => 'http://100.64.0.1/', 'blocked_address'],
    [() => 'http://100.127.255.254/', 'blocked_address'],
    [() => 'http://224.0.0.1/', 'blocked_address'],
    [() => 'http://239.255.255.250/', 'blocked_address'],
    [() => 'http://[ff02::1]/', 'blocked_address'],
    [() => 'http://240.0.0.1/', 'blocked_address'],
    [() => 'http://255.255.255.255/', 'blocked_address'],
    [() => 'http://192.0.0.8/', 'blocked_address'],
    [() => 'http://192.0.2.1/', 'blocked_address'],
    [() => 'http://198.18.0.1/', 'blocked_address'],
    [() => 'http://198.51.100.1/', 'blocked_address'],
    [() => 'http://203.0.113.1/', 'blocked_address'],
    // IPv6 loopback, IPv4-mapped / compatible / translated forms
    [() => `http://[::1]:${P}/`, 'blocked_address'],
    [() => `http://[0:0:0:0:0:0:0:1]:${P}/`, 'blocked_address'],
    [() => `http://[::ffff:127.0.0.1]:${P}/`, 'blocked_address'],
    [() => `http://[0:0:0:0:0:ffff:7f00:1]:${P}/`, 'blocked_address'],
    [() => `http://[::ffff:7f00:1]:${P}/`, 'blocked_address'],
    [() => `http://[::127.0.0.1]:${P}/`, 'blocked_address'],
    [() => 'http://[::ffff:10.0.0.1]/', 'blocked_address'],
    [() => 'http://[::ffff:192.168.0.1]/', 'blocked_address'],
    [() => `http://[64:ff9b::127.0.0.1]:${P}/`, 'blocked_address'],
    [() => `http://[2002:7f00:1::1]:${P}/`, 'blocked_address'],
    [() => 'http://[2002:a9fe:a9fe::1]/', 'blocked_address'],
    [() => 'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'blocked_address'],
    // IPv6 unique-local, site-local, documentation
    [() => 'http://[fd00::1]/', 'blocked_address'],
    [() => 'http://[fc00::1]/', 'blocked_address'],
    [() => 'http://[fec0::1]/', 'blocked_address'],
    [() => 'http://[2001:db8::1]/', 'blocked_address'],
    // https goes through the same guard
    [() => `https://127.0.0.1:${P}/`, 'blocked_address'],
    [() => `https://[::1]:${P}/`, 'blocked_address'],
    // names that resolve (through the test resolver) to non-public addresses
    [() => `http://loopback.test:${P}/`, 'blocked_address'],
    [() => `https://loopback.test:${P}/`, 'blocked_address'],
    [() => 'http://private.test/', 'blocked_address'],
    [() => `http://mixed.test:${P}/`, 'blocked_address'],
    [() => `http://mapped.test:${P}/`, 'blocked_address'],
    [() => 'http://metadata.test/', 'blocked_address'],
    [() => 'http://ula.test/', 'blocked_address'],
    [() => `http://localhost:${P}/`, 'blocked_address'],
    [() => `http://LOCALHOST.:${P}/`, 'blocked_address'],
    // schemes other than http(s), and unparseable input
    [() => 'file:///etc/passwd', 'invalid_url'],
    [() => 'ftp://example.com/file', 'invalid_url'],
    [() => `gopher://127.0.0.1:${P}/_GET`, 'invalid_url'],
    [() => 'data:text/plain,hello', 'invalid_url'],
    [() => 'javascript:alert(1)', 'invalid_url'],
    [() => 'ws://example.com/', 'invalid_url'],
    [() => `dict://127.0.0.1:${P}/info`, 'invalid_url'],
    [() => 'not a url', 'invalid_url'],
    [() => 'http://', 'invalid_url'],
  ];

  for (const [url, code] of cases) {
    test(`${url().replace(/:\d+\//, ':PORT/')} → ${code}`, async () => {
      const error = await refusal(get(strict, url()));
      assert.equal(error.code, code, error.message);
    });
  }

  test('the canary server listening on loopback was never reached', () => {
    assert.equal(canaryHits, 0);
  });
});

describe('connect-time checks defeat DNS rebinding', () => {
  test('a name that resolved public when validated but private at connect is refused', async () => {
    rebindLookups = 0;
    const url = `http://rebind.test:${P}/`;
    assert.equal(await strict.isPublicUrl(url), true, 'the first answer is public');
    const error = await refusal(get(strict, url));
    assert.equal(error.code, 'blocked_address');
    assert.equal(rebindLookups, 2, 'the connection resolved the name again');
    assert.equal(canaryHits, 0);
  });

  test('exempting 127.0.0.1 does not exempt a name that resolves to it', async () => {
    const error = await refusal(get(allowing, `http://loopback.test:${A}/ok`));
    assert.equal(error.code, 'blocked_address');
  });
});

describe('isPublicUrl', () => {
  const expectations: Array<[string, boolean]> = [
    ['http://8.8.8.8/', true],
    ['https://[2606:4700:4700::1111]/', true],
    ['http://public.test/path', true],
    ['http://127.0.0.1/', false],
    ['http://2130706433/', false],
    ['http://[::ffff:127.0.0.1]/', false],
    ['http://loopback.test/', false],
    ['http://mixed.test/', false],
    ['http://unknown.test/', true], // not known to be private: the download fails later, guarded at connect
    ['ftp://public.test/', false],
    ['javascript:alert(1)', false],
    ['not a url', false],
  ];
  for (const [url, expected] of expectations) {
    test(`${url} → ${expected}`, async () => {
      assert.equal(await strict.isPublicUrl(url), expected);
    });
  }

  test('honours allowHosts by name and by IP literal', async () => {
    assert.equal(await allowing.isPublicUrl(`http://127.0.0.1:${A}/`), true);
    assert.equal(await allowing.isPublicUrl('http://allowed.test/'), true);
    assert.equal(await allowing.isPublicUrl('http://127.0.0.2/'), false);
    assert.equal(await allowing.isPublicUrl('http://loopback.test/'), false);
  });
});

describe('allowed server: ordinary responses', () => {
  test('returns status, headers, body and the hop list', async () => {
    const response = await get(allowing, `http://127.0.0.1:${A}/ok`);
    assert.equal(response.status, 200);
    assert.equal(response.body.toString(), HELLO);
    assert.equal(response.url, `http://127.0.0.1:${A}/ok`);
    assert.deepEqual(response.hops, [`http://127.0.0.1:${A}/ok`]);
  });

  test('an exempted name connects even though it resolves to loopback', async () => {
    const response = await get(allowing, `http://allowed.test:${A}/ok`);
    assert.equal(response.body.toString(), HELLO);
  });

  test('sends the configured User-Agent and asks for compressed bodies', async () => {
    const response = await get(allowing, `http://127.0.0.1:${A}/echo`);
    const echo = JSON.parse(response.body.toString());
    assert.equal(echo.headers['user-agent'], 'gleaner-test');
    assert.match(echo.headers['accept-encoding'], /gzip/);
  });

  for (const path of ['/gzip', '/br', '/deflate-raw']) {
    test(`decodes ${path.slice(1)} and stops announcing the coding`, async () => {
      const response = await get(allowing, `http://127.0.0.1:${A}${path}`);
      assert.equal(response.body.toString(), HELLO);
      assert.equal(response.headers['content-encoding'], undefined);
    });
  }

  test('HEAD keeps the announced length and is not held to the body cap', async () => {
    const response = await get(allowing, `http://127.0.0.1:${A}/big-cl`, { method: 'HEAD' });
    assert.equal(response.status, 200);
    assert.equal(response.headers['content-length'], String(2 * ONE_MB));
    assert.equal(response.body.length, 0);
  });

  test('a body of exactly maxBytes is accepted', async () => {
    const response = await get(allowing, `http://127.0.0.1:${A}/exact?n=1000`, { maxBytes: 1000 });
    assert.equal(response.body.length, 1000);
  });
});

describe('redirects', () => {
  test('follows a relative Location within the allowed server', async () => {
    const response = await get(allowing, `http://127.0.0.1:${A}/redirect?to=ok`);
    assert.equal(response.status, 200);
    assert.equal(response.body.toString(), HELLO);
    assert.deepEqual(response.hops, [`http://127.0.0.1:${A}/redirect?to=ok`, `http://127.0.0.1:${A}/ok`]);
  });

  test('follows exactly 10 redirects', async () => {
    const response = await get(allowing, `http://127.0.0.1:${A}/chain/10`);
    assert.equal(response.body.toString(), 'end of chain');
    assert.equal(response.hops.length, 11);
  });

  test('refuses an 11th redirect', async () => {
    const error = await refusal(get(allowing, `http://127.0.0.1:${A}/chain/11`));
    assert.equal(error.code, 'too_many_redirects');
  });

  test('maxRedirects lowers the limit', async () => {
    const error = await refusal(get(allowing, `http://127.0.0.1:${A}/chain/3`, { maxRedirects: 2 }));
    assert.equal(error.code, 'too_many_redirects');
  });

  test('maxRedirects 0 returns the redirect itself', async () => {
    const response = await get(allowing, `http://127.0.0.1:${A}/chain/1`, { maxRedirects: 0 });
    assert.equal(response.status, 302);
    assert.equal(response.headers.location, '/chain/0');
  });

  const intoPrivate: Array<[string, () => string, OutboundErrorCode]> = [
    ['127.0.0.2', () => `http://127.0.0.2:${P}/`, 'blocked_address'],
    ['[::1]', () => `http://[::1]:${P}/`, 'blocked_address'],
    ['[::ffff:7f00:2]', () => `http://[::ffff:7f00:2]:${P}/`, 'blocked_address'],
    ['0x7f.2 (hex)', () => `http://0x7f.2:${P}/`, 'blocked_address'],
    ['the metadata endpoint', () => 'http://169.254.169.254/latest/meta-data/', 'blocked_address'],
    ['a name resolving to loopback', () => `http://loopback.test:${P}/`, 'blocked_address'],
    ['10.0.0.1 with 307', () => 'http://10.0.0.1/', 'blocked_address'],
    ['file:', () => 'file:///etc/passwd', 'invalid_url'],
    ['gopher:', () => `gopher://127.0.0.1:${P}/`, 'invalid_url'],
  ];
  for (const [label, target, code] of intoPrivate) {
    test(`a redirect from the allowed server to ${label} is refused with ${code}`, async () => {
      const status = label.includes('307') ? 307 : 302;
      const start = `http://127.0.0.1:${A}/redirect?status=${status}&to=${encodeURIComponent(target())}`;
      const error = await refusal(get(allowing, start));
      assert.equal(error.code, code, error.message);
      assert.equal(new URL(error.url).href, new URL(target()).href, 'the error names the refused hop');
    });
  }

  test('a redirect chain never reached the canary', () => {
    assert.equal(canaryHits, 0);
  });

  test('303 turns a POST into a GET without body or body headers', async () => {
    const response = await get(allowing, `http://127.0.0.1:${A}/redirect?status=303&to=/echo`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: 'payload',
    });
    const echo = JSON.parse(response.body.toString());
    assert.equal(echo.method, 'GET');
    assert.equal(echo.body, '');
    assert.equal(echo.headers['content-type'], undefined);
  });

  test('302 on POST switches to GET, 307 keeps method and body', async () => {
    const switched = await get(allowing, `http://127.0.0.1:${A}/redirect?status=302&to=/echo`, { method: 'POST', body: 'x' });
    assert.equal(JSON.parse(switched.body.toString()).method, 'GET');
    const kept = await get(allowing, `http://127.0.0.1:${A}/redirect?status=307&to=/echo`, { method: 'POST', body: 'x' });
    const echo = JSON.parse(kept.body.toString());
    assert.equal(echo.method, 'POST');
    assert.equal(echo.body, 'x');
  });

  test('credentials survive a same-origin hop and are dropped on a cross-origin hop', async () => {
    const headers = { Authorization: 'Bearer secret', Cookie: 'session=1', 'X-Api-Key': 'k', Accept: 'text/html' };
    const same = await get(allowing, `http://127.0.0.1:${A}/redirect?to=/echo`, { headers });
    const sameEcho = JSON.parse(same.body.toString());
    assert.equal(sameEcho.headers.authorization, 'Bearer secret');
    assert.equal(sameEcho.headers.cookie, 'session=1');

    const cross = await get(allowing, `http://127.0.0.1:${A}/redirect?to=${encodeURIComponent(`http://allowed.test:${A}/echo`)}`, { headers });
    const crossEcho = JSON.parse(cross.body.toString());
    assert.equal(crossEcho.headers.authorization, undefined);
    assert.equal(crossEcho.headers.cookie, undefined);
    assert.equal(crossEcho.headers['x-api-key'], undefined);
    assert.equal(crossEcho.headers.accept, 'text/html');
  });

  test('checkUrl sees every hop and can refuse one with blocked_host', async () => {
    const seen: string[] = [];
    const target = `http://allowed.test:${A}/ok`;
    const error = await refusal(
      get(allowing, `http://127.0.0.1:${A}/redirect?to=${encodeURIComponent(target)}`, {
        checkUrl: (url) => {
          seen.push(url.href);
          if (url.hostname === 'allowed.test') throw new Error('This domain is blocked.');
        },
      }),
    );
    assert.equal(error.code, 'blocked_host');
    assert.equal(error.url, target);
    assert.deepEqual(seen, [`http://127.0.0.1:${A}/redirect?to=${encodeURIComponent(target)}`, target]);
  });

  test('checkUrl can refuse the first URL', async () => {
    const error = await refusal(get(allowing, `http://127.0.0.1:${A}/ok`, { checkUrl: () => { throw new Error('no'); } }));
    assert.equal(error.code, 'blocked_host');
  });
});

describe('size caps count decoded bytes', () => {
  test('an announced Content-Length above the cap is refused', async () => {
    const error = await refusal(get(allowing, `http://127.0.0.1:${A}/big-cl`));
    assert.equal(error.code, 'too_large');
  });

  test('an endless chunked body is cut at the cap', async () => {
    const error = await refusal(get(allowing, `http://127.0.0.1:${A}/endless`));
    assert.equal(error.code, 'too_large');
  });

  test('a gzip bomb is cut once the decoded bytes pass the cap', async () => {
    const error = await refusal(get(allowing, `http://127.0.0.1:${A}/bomb`));
    assert.equal(error.code, 'too_large');
  });

  test('the cap applies to the decoded size, not the wire size', async () => {
    const error = await refusal(get(allowing, `http://127.0.0.1:${A}/gzip`, { maxBytes: 100 }));
    assert.equal(error.code, 'too_large');
  });
});

describe('time caps', () => {
  test('a server that never sends headers times out', async () => {
    const error = await refusal(get(impatient, `http://127.0.0.1:${A}/slow-headers`));
    assert.equal(error.code, 'timeout');
  });

  test('a body trickling forever hits the whole-request deadline', async () => {
    const error = await refusal(get(impatient, `http://127.0.0.1:${A}/trickle`));
    assert.equal(error.code, 'timeout');
  });

  test('a per-request timeoutMs overrides the default', async () => {
    const error = await refusal(get(allowing, `http://127.0.0.1:${A}/trickle`, { timeoutMs: 300 }));
    assert.equal(error.code, 'timeout');
  });

  test('a name that never resolves hits the connect timeout', async () => {
    const error = await refusal(get(impatient, 'http://hang.test/'));
    assert.equal(error.code, 'timeout');
  });

  test('the whole-request deadline also covers a lookup that is still pending', async () => {
    const error = await refusal(get(allowing, 'http://stall.test/', { timeoutMs: 200 }));
    assert.equal(error.code, 'timeout');
    for (const release of stalledLookups.splice(0)) release();
  });

  test('isPublicUrl does not refuse a name whose resolver does not answer in time (the connect check still guards)', async () => {
    assert.equal(await impatient.isPublicUrl('http://hang.test/'), true);
  });

  test("the caller's AbortSignal stops the request", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const error = await refusal(get(allowing, `http://127.0.0.1:${A}/trickle`, { signal: controller.signal }));
    assert.equal(error.code, 'timeout');
    assert.match(error.message, /aborted by the caller/);
  });

  test('a name that does not resolve is a network error', async () => {
    const error = await refusal(get(allowing, 'http://unknown.test/'));
    assert.equal(error.code, 'network');
  });
});
