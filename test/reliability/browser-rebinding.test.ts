/**
 * DNS rebinding through PROXY_URL, in browser mode (the outbound client's own case is in
 * smaller-findings.test.ts). The browser's guard checked a name and then asked the operator's
 * proxy for the name, which the proxy resolved again: a rebinding name answered public to the
 * guard and loopback to the proxy, and the page reached a canary on loopback. Now the guard asks
 * the proxy for the checked address (`CONNECT ip:port`), as the outbound client does.
 *
 * A fake DNS on loopback answers the public address first and 127.0.0.1 after; a `proxy-chain`
 * proxy resolves names through the same DNS. The proxy never dials the public address: it
 * refuses every tunnel to it after recording it, so nothing leaves the machine.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { Resolver } from 'node:dns';
import net, { type AddressInfo } from 'node:net';
import dnsPacket from 'dns-packet';
import { RequestError, Server as ForwardProxy } from 'proxy-chain';
import { createBrowserPool, isBrowserAvailable } from '../../src/browser/index.ts';
import type { LookupFunction } from '../../src/outbound/resolve.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const skip = (await isBrowserAvailable(CHROMIUM)) ? false : `Chromium is not available at ${CHROMIUM} (install the chromium package or set CHROMIUM_PATH)`;

/** Public by the address rule; never dialled (the proxy refuses tunnels to it). */
const PUBLIC = '93.184.216.34';
const NAME = 'rebind.attacker.test';

/** A loopback listener that counts connections: nothing may ever reach it. */
async function startCanary(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, connections: () => connections, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A DNS server on loopback: `NAME` is PUBLIC the first time, 127.0.0.1 every time after. */
async function startRebindingDns(): Promise<{ lookup: LookupFunction; queries: () => number; close(): void }> {
  let queries = 0;
  const socket = dgram.createSocket('udp4');
  socket.on('message', (message, remote) => {
    const query = dnsPacket.decode(message);
    const question = query.questions?.[0];
    if (!question) return;
    const answers: dnsPacket.Answer[] = [];
    if (question.type === 'A' && question.name.toLowerCase() === NAME) {
      answers.push({ type: 'A', name: question.name, ttl: 0, data: queries++ === 0 ? PUBLIC : '127.0.0.1' });
    }
    socket.send(dnsPacket.encode({ id: query.id, type: 'response', flags: dnsPacket.RECURSION_AVAILABLE, questions: query.questions, answers }), remote.port, remote.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([`127.0.0.1:${(socket.address() as AddressInfo).port}`]);
  // `dns.lookup`'s shape over the fake server, for the guard and for the proxy alike.
  const lookup = ((hostname: string, options: { all?: boolean } | number | ((...args: unknown[]) => void), callback?: (...args: unknown[]) => void) => {
    const done = (typeof options === 'function' ? options : callback)!;
    const all = typeof options === 'object' && options.all === true;
    const family = net.isIP(hostname);
    if (family !== 0) return done(null, all ? [{ address: hostname, family }] : hostname, family);
    resolver.resolve4(hostname, (error, addresses) => {
      if (error || addresses.length === 0) done(error ?? Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
      else done(null, all ? addresses.map((address) => ({ address, family: 4 })) : addresses[0], 4);
    });
  }) as unknown as LookupFunction;
  return { lookup, queries: () => queries, close: () => socket.close() };
}

describe('DNS rebinding through PROXY_URL, in the browser', { skip }, () => {
  for (const scheme of ['http', 'https'] as const) {
    test(`${scheme}: the page's proxy is asked for the checked address, never the name, and the canary sees nothing`, async () => {
      const canary = await startCanary();
      const dns = await startRebindingDns();
      const asked: string[] = [];
      const proxy = new ForwardProxy({
        port: 0,
        host: '127.0.0.1',
        prepareRequestFunction: ({ hostname, port }) => {
          asked.push(`${hostname}:${port}`);
          if (hostname === PUBLIC) throw new RequestError('This test proxy dials no public address', 502);
          return { dnsLookup: dns.lookup as never };
        },
      });
      await proxy.listen();
      const pool = createBrowserPool({
        executablePath: CHROMIUM,
        navigationTimeoutMs: 15_000,
        allowHosts: [],
        lookup: dns.lookup,
        proxyUrl: `http://127.0.0.1:${proxy.port}`,
        idleTimeoutMs: 0,
      });
      try {
        const outcome = await pool.fetchPage({ url: `${scheme}://${NAME}:${canary.port}/` }).then(
          (page) => `answered ${page.status}`,
          (error: Error & { code?: string }) => error.code,
        );
        assert.notEqual(outcome, 'answered 200');
        assert.equal(canary.connections(), 0, 'the canary was reached through the proxy');
        assert.ok(asked.length >= 1, 'the proxy was asked');
        assert.deepEqual([...new Set(asked)], [`${PUBLIC}:${canary.port}`]);
        assert.ok(dns.queries() >= 1, 'the name was resolved here');
      } finally {
        await pool.close();
        await proxy.close(true);
        dns.close();
        await canary.close();
      }
    });
  }
});
