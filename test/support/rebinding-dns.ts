/**
 * DNS rebinding fixtures for the PROXY_URL tests (the outbound client's and the browser's): a
 * fake DNS on loopback whose answer for one name is public the first time and loopback after,
 * with `dns.lookup`'s shape over it, and a loopback canary that nothing may reach.
 */
import dgram from 'node:dgram';
import { Resolver } from 'node:dns';
import net, { type AddressInfo } from 'node:net';
import dnsPacket from 'dns-packet';
import type { LookupFunction } from '../../src/outbound/resolve.ts';

/** The name the rebinding DNS answers for. */
export const REBIND_NAME = 'rebind.attacker.test';

export interface Canary {
  port: number;
  connections(): number;
  close(): Promise<void>;
}

/** A loopback listener that counts connections: nothing may ever reach it. */
export async function startCanary(): Promise<Canary> {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, connections: () => connections, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

export interface RebindingDns {
  /** `dns.lookup`'s shape over the fake server, for the checking side and for the proxy alike. */
  lookup: LookupFunction;
  queries(): number;
  close(): void;
}

/**
 * A DNS server on loopback: REBIND_NAME is `publicAddress` the first time, 127.0.0.1 every time
 * after. The side that checks gets the first answer; a proxy that resolves the name again would
 * get the second.
 */
export async function startRebindingDns(publicAddress: string): Promise<RebindingDns> {
  let queries = 0;
  const socket = dgram.createSocket('udp4');
  socket.on('message', (message, remote) => {
    const query = dnsPacket.decode(message);
    const question = query.questions?.[0];
    if (!question) return;
    const answers: dnsPacket.Answer[] = [];
    if (question.type === 'A' && question.name.toLowerCase() === REBIND_NAME) {
      answers.push({ type: 'A', name: question.name, ttl: 0, data: queries++ === 0 ? publicAddress : '127.0.0.1' });
    }
    socket.send(dnsPacket.encode({ id: query.id, type: 'response', flags: dnsPacket.RECURSION_AVAILABLE, questions: query.questions, answers }), remote.port, remote.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([`127.0.0.1:${(socket.address() as AddressInfo).port}`]);
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
