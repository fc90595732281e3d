import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { GUARD_REFUSAL_HEADER, startGuardProxy, type GuardProxy, type GuardProxyOptions } from '../../src/browser/guard-proxy.ts';
import { OwnListeners } from '../../src/outbound/own-listeners.ts';
import type { LookupFunction } from '../../src/outbound/resolve.ts';

// The guard on its own, no browser: raw CONNECT and absolute-URI requests against loopback
// servers. Names resolve through a test DNS; nothing touches the real resolver.

const PUBLIC_ADDRESS = '93.184.215.14';
const lookups: string[] = [];
const DNS: Record<string, string[]> = {
  'internal.test': ['127.0.0.1'],
  'private.test': ['10.0.0.1'],
  'mixed.test': [PUBLIC_ADDRESS, '127.0.0.1'],
  'allowed.test': ['127.0.0.1'],
  'public.test': [PUBLIC_ADDRESS],
};
const testLookup: LookupFunction = (hostname, options, callback) => {
  lookups.push(hostname);
  const addresses = DNS[hostname];
  if (addresses === undefined) {
    callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '');
    return;
  }
  const entries = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  if (options.all) callback(null, entries);
  else callback(null, entries[0].address, entries[0].family);
};

let echo: net.Server; // TCP echo: proves a tunnel really reaches its target
let echoConnections = 0;
let web: http.Server; // plain HTTP origin
let webRequests = 0;
let ECHO = 0;
let WEB = 0;
// Stands for the operator's PROXY_URL: records what it is asked, then serves every target from
// the local echo/web servers (the public address in the test DNS is never dialled): port 80 and
// the web server's port reach the web server, any other port the echo server.
let upstream: http.Server;
let UPSTREAM = 0;
const upstreamSeen: string[] = [];
const guards: GuardProxy[] = [];

async function guardWith(options: GuardProxyOptions): Promise<GuardProxy> {
  const guard = await startGuardProxy({ lookup: testLookup, ...options });
  guards.push(guard);
  return guard;
}

/** Sends `CONNECT authority` and returns the status line plus the open socket. */
function connect(guard: GuardProxy, authority: string): Promise<{ status: number; head: string; socket: net.Socket }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(guard.port, '127.0.0.1');
    let buffered = '';
    socket.on('error', reject);
    socket.on('data', function onData(chunk: Buffer) {
      buffered += chunk.toString('latin1');
      const end = buffered.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onData);
      const head = buffered.slice(0, end);
      resolve({ status: Number(head.split(' ')[1]), head: head.toLowerCase(), socket });
    });
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  });
}

function roundTrip(socket: net.Socket, text: string): Promise<string> {
  return new Promise((resolve) => {
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString()));
    socket.write(text);
  });
}

/** An absolute-URI request through the guard, as a browser sends plain HTTP to its proxy. */
function proxiedGet(guard: GuardProxy, url: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const host = url.startsWith('http://') ? new URL(url).host : `127.0.0.1:${guard.port}`;
    const request = http.request({ host: '127.0.0.1', port: guard.port, path: url, headers: { host } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

before(async () => {
  echo = net.createServer((socket) => {
    echoConnections += 1;
    socket.pipe(socket);
  });
  web = http.createServer((req, res) => {
    webRequests += 1;
    if (req.url === '/big') {
      res.end('x'.repeat(64 * 1024));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain', 'x-origin': 'web' });
    res.end(`host=${req.headers.host} path=${req.url} proxy-auth=${req.headers['proxy-authorization'] ?? 'none'}`);
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  ECHO = (echo.address() as AddressInfo).port;
  WEB = (web.address() as AddressInfo).port;

  upstream = http.createServer((req, res) => {
    upstreamSeen.push(`${req.method} ${req.url} ${req.headers['proxy-authorization']}`);
    const forwarded = http.request({ host: '127.0.0.1', port: WEB, path: new URL(req.url ?? '').pathname, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(forwarded);
  });
  upstream.on('connect', (req: http.IncomingMessage, socket: net.Socket) => {
    upstreamSeen.push(`CONNECT ${req.url} ${req.headers['proxy-authorization']}`);
    const port = Number(/:(\d+)$/.exec(req.url ?? '')?.[1]);
    const tunnel = net.connect(port === 80 || port === WEB ? WEB : ECHO, '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      tunnel.pipe(socket);
      socket.pipe(tunnel);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  UPSTREAM = (upstream.address() as AddressInfo).port;
});

after(async () => {
  await Promise.all(guards.map((guard) => guard.close()));
  echo.close();
  web.close();
  upstream.close();
});

describe('guard proxy: CONNECT tunnels', () => {
  test('a private address is refused with 403 and never connected', async () => {
    const guard = await guardWith({});
    const before = echoConnections;
    const { status, head, socket } = await connect(guard, `127.0.0.1:${ECHO}`);
    socket.destroy();
    assert.equal(status, 403);
    assert.match(head, new RegExp(`${GUARD_REFUSAL_HEADER}: blocked_address`));
    assert.equal(echoConnections, before);
    assert.equal(guard.refusedCount, 1);
    assert.deepEqual(guard.entryFor('127.0.0.1', ECHO)?.code, 'blocked_address');
  });

  test('10.0.0.1 and other private ranges are refused', async () => {
    const guard = await guardWith({});
    for (const target of ['10.0.0.1:443', '169.254.169.254:80', '[::1]:443', '[::ffff:127.0.0.1]:443', '0x7f.1:443']) {
      const { status, socket } = await connect(guard, target);
      socket.destroy();
      assert.equal(status, 403, target);
    }
    assert.equal(guard.refusedCount, 5);
  });

  test('an allowed host passes and the tunnel carries bytes both ways', async () => {
    const guard = await guardWith({ allowHosts: ['127.0.0.1'] });
    const { status, socket } = await connect(guard, `127.0.0.1:${ECHO}`);
    assert.equal(status, 200);
    assert.equal(await roundTrip(socket, 'ping through the tunnel'), 'ping through the tunnel');
    socket.destroy();
    assert.equal(guard.refusedCount, 0);
  });

  test('a DNS name mapped to 127.0.0.1 is refused even though 127.0.0.1 itself is exempt', async () => {
    const guard = await guardWith({ allowHosts: ['127.0.0.1'] });
    const before = echoConnections;
    const { status, socket } = await connect(guard, `internal.test:${ECHO}`);
    socket.destroy();
    assert.equal(status, 403);
    assert.equal(echoConnections, before);
    assert.match(guard.entryFor('internal.test', ECHO)?.message ?? '', /resolves to the non-public address 127\.0\.0\.1/);
  });

  test('a name is refused when any one of its addresses is private', async () => {
    const guard = await guardWith({});
    const { status, socket } = await connect(guard, 'mixed.test:443');
    socket.destroy();
    assert.equal(status, 403);
    assert.equal(guard.entryFor('mixed.test', 443)?.code, 'blocked_address');
  });

  test('an exempted name is resolved once and connected to the address that was checked', async () => {
    const guard = await guardWith({ allowHosts: ['allowed.test'] });
    lookups.length = 0;
    const { status, socket } = await connect(guard, `allowed.test:${ECHO}`);
    assert.equal(status, 200);
    assert.equal(await roundTrip(socket, 'hello'), 'hello');
    socket.destroy();
    assert.deepEqual(lookups, ['allowed.test']);
  });

  test('an unknown name is a network failure (502), not a refusal', async () => {
    const guard = await guardWith({});
    const { status, socket } = await connect(guard, 'nowhere.test:443');
    socket.destroy();
    assert.equal(status, 502);
    assert.equal(guard.entryFor('nowhere.test', 443)?.code, 'network');
    assert.equal(guard.refusedCount, 0);
  });

  test('a malformed CONNECT target is refused', async () => {
    const guard = await guardWith({ allowHosts: ['127.0.0.1'] });
    for (const target of ['127.0.0.1', 'user@127.0.0.1:443', '127.0.0.1:0', '127.0.0.1:443/path']) {
      const { status, socket } = await connect(guard, target);
      socket.destroy();
      assert.equal(status, 400, target);
    }
  });

  test('a tunnel back into a guard is refused even for an exempted loopback host', async () => {
    const guard = await guardWith({ allowHosts: ['127.0.0.1'] });
    const { status, socket } = await connect(guard, `127.0.0.1:${guard.port}`);
    socket.destroy();
    assert.equal(status, 403);
  });

  test('a host:port exemption admits that port only, as in the outbound client', async () => {
    const guard = await guardWith({ allowHosts: [`127.0.0.1:${ECHO}`] });
    const allowed = await connect(guard, `127.0.0.1:${ECHO}`);
    assert.equal(allowed.status, 200);
    assert.equal(await roundTrip(allowed.socket, 'on its port'), 'on its port');
    allowed.socket.destroy();
    const other = await connect(guard, `127.0.0.1:${WEB}`);
    other.socket.destroy();
    assert.equal(other.status, 403);
    assert.equal(guard.entryFor('127.0.0.1', WEB)?.code, 'blocked_address');
  });

  test("the service's own listeners are refused whatever the exemptions say", async () => {
    const listeners = new OwnListeners();
    const remove = listeners.add([{ address: '0.0.0.0', port: ECHO }]);
    const guard = await guardWith({ allowHosts: ['127.0.0.1', 'allowed.test'], ownListeners: listeners });
    // An address is refused before connecting; a name once its connected peer is known, before
    // a byte is sent (the outbound client's connector, shared).
    for (const target of [`127.0.0.1:${ECHO}`, `allowed.test:${ECHO}`]) {
      const { status, socket } = await connect(guard, target);
      socket.destroy();
      assert.equal(status, 403, target);
    }
    assert.match(guard.entryFor('127.0.0.1', ECHO)?.message ?? '', /own listener/);
    remove();
  });

  test('refuseAll refuses even exempted public targets', async () => {
    const guard = await guardWith({ refuseAll: true, allowHosts: ['127.0.0.1'] });
    const { status, socket } = await connect(guard, `127.0.0.1:${ECHO}`);
    socket.destroy();
    assert.equal(status, 403);
  });
});

describe('guard proxy: plain HTTP forwarding', () => {
  test('an allowed host is forwarded with its Host header and without proxy credentials', async () => {
    const guard = await guardWith({ allowHosts: ['127.0.0.1'] });
    const response = await new Promise<{ status: number; body: string; origin: string | undefined }>((resolve, reject) => {
      const url = `http://127.0.0.1:${WEB}/page?q=1`;
      const request = http.request(
        { host: '127.0.0.1', port: guard.port, path: url, headers: { host: `127.0.0.1:${WEB}`, 'proxy-authorization': 'Basic c2VjcmV0' } },
        (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body, origin: res.headers['x-origin'] as string | undefined }));
        },
      );
      request.on('error', reject);
      request.end();
    });
    assert.equal(response.status, 200);
    assert.equal(response.origin, 'web');
    assert.equal(response.body, `host=127.0.0.1:${WEB} path=/page?q=1 proxy-auth=none`);
  });

  test('a private target gets the guard 403 and the origin sees nothing', async () => {
    const guard = await guardWith({});
    const before = webRequests;
    const response = await proxiedGet(guard, `http://internal.test:${WEB}/secret`);
    assert.equal(response.status, 403);
    assert.equal(response.headers[GUARD_REFUSAL_HEADER], 'blocked_address');
    assert.equal(webRequests, before);
  });

  test('an origin-form request (the proxy used as a web server) is refused', async () => {
    const guard = await guardWith({ allowHosts: ['127.0.0.1'] });
    const response = await proxiedGet(guard, '/');
    assert.equal(response.status, 400);
  });

  // Found by the reliability tier's SSRF sandbox: a page closed while its requests were being
  // admitted crashed the whole service ("socket hang up" with no listener).
  for (const via of ['direct', 'upstream proxy'] as const) {
    test(`a browser hanging up while its request is admitted does not take the process down (${via})`, async () => {
      let clientGone!: () => void;
      const gone = new Promise<void>((resolve) => (clientGone = resolve));
      // The name resolves only once the browser's connection is closed.
      const lateLookup: LookupFunction = (_hostname, options, callback) => {
        void gone.then(() =>
          setTimeout(() => (options.all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4)), 50),
        );
      };
      const guard = await guardWith({
        lookup: lateLookup,
        allowHosts: ['late.test'],
        ...(via === 'upstream proxy' ? { upstreamProxy: new URL(`http://127.0.0.1:${UPSTREAM}`) } : {}),
      });
      const uncaught: unknown[] = [];
      const onUncaught = (error: unknown) => uncaught.push(error);
      process.on('uncaughtException', onUncaught);
      try {
        const socket = net.connect(guard.port, '127.0.0.1');
        socket.on('error', () => undefined);
        socket.write(`GET http://late.test:${WEB}/page HTTP/1.1\r\nHost: late.test:${WEB}\r\n\r\n`, () => socket.destroy());
        socket.once('close', () => clientGone());
        await new Promise((resolve) => setTimeout(resolve, 300));
      } finally {
        process.off('uncaughtException', onUncaught);
      }
      assert.deepEqual(uncaught, []);
      assert.equal((await proxiedGet(guard, `http://late.test:${WEB}/after`)).status, 200, 'the guard still serves');
    });
  }

  test('passing the transfer cap cuts the connection and reports it once', async () => {
    let reported = 0;
    const guard = await guardWith({ allowHosts: ['127.0.0.1'], transferLimitBytes: 10_000, onTransferLimit: () => (reported += 1) });
    await assert.rejects(proxiedGet(guard, `http://127.0.0.1:${WEB}/big`));
    assert.equal(reported, 1);
    assert.ok(guard.bytesIn > 10_000);
  });
});

describe('guard proxy: through an upstream proxy (PROXY_URL)', () => {
  const credentials = `Basic ${Buffer.from('user-country-de:pa ss').toString('base64')}`;
  const upstreamProxy = () => new URL(`http://user-country-de:pa%20ss@127.0.0.1:${UPSTREAM}`);

  test('an admitted tunnel is opened through the upstream proxy with its credentials', async () => {
    const guard = await guardWith({ upstreamProxy: upstreamProxy() });
    upstreamSeen.length = 0;
    const { status, socket } = await connect(guard, 'public.test:443');
    assert.equal(status, 200);
    assert.equal(await roundTrip(socket, 'via upstream'), 'via upstream');
    socket.destroy();
    // The checked address, never the name: the proxy cannot resolve it again to another one.
    assert.deepEqual(upstreamSeen, [`CONNECT ${PUBLIC_ADDRESS}:443 ${credentials}`]);
  });

  test('plain http goes through a tunnel to the checked address, the name kept in Host', async () => {
    const guard = await guardWith({ upstreamProxy: upstreamProxy() });
    upstreamSeen.length = 0;
    const response = await proxiedGet(guard, 'http://public.test/page');
    assert.equal(response.status, 200);
    assert.equal(response.body, 'host=public.test path=/page proxy-auth=none');
    assert.deepEqual(upstreamSeen, [`CONNECT ${PUBLIC_ADDRESS}:80 ${credentials}`]);
  });

  test('a name that rebinds after its check is still asked for at the address that was checked', async () => {
    let answers = 0;
    // Public the first time, loopback every time after: a second look-up would get 127.0.0.1.
    const rebinding: LookupFunction = (_hostname, options, callback) => {
      const address = answers++ === 0 ? PUBLIC_ADDRESS : '127.0.0.1';
      if (options.all) callback(null, [{ address, family: 4 }]);
      else callback(null, address, 4);
    };
    const guard = await guardWith({ upstreamProxy: upstreamProxy(), lookup: rebinding });
    upstreamSeen.length = 0;
    const { status, socket } = await connect(guard, 'rebind.test:443');
    socket.destroy();
    assert.equal(status, 200);
    assert.equal(answers, 1, 'the name was resolved once, here');
    assert.deepEqual(upstreamSeen, [`CONNECT ${PUBLIC_ADDRESS}:443 ${credentials}`]);
  });

  test('a private target is refused before the upstream proxy is asked', async () => {
    const guard = await guardWith({ upstreamProxy: upstreamProxy() });
    upstreamSeen.length = 0;
    const { status, socket } = await connect(guard, 'internal.test:443');
    socket.destroy();
    assert.equal(status, 403);
    assert.equal((await proxiedGet(guard, 'http://private.test/')).status, 403);
    assert.deepEqual(upstreamSeen, []);
  });
});
