/**
 * The undici connectors, one per way out. Neither lets a connection end on an address the rules
 * refuse: a non-public one (unless the host is exempted on that port) or a listener of this process.
 *
 * Direct: names are checked inside the socket's own DNS lookup; IP literals never reach a lookup,
 * so they are checked here before connecting; and the connected peer and port are verified once
 * more before a byte is sent (TLS is started on the socket only after that check).
 *
 * Through the proxy: the name is resolved and checked here, and the proxy is asked for a tunnel
 * to the checked address (`CONNECT ip:port`), so it never resolves the name itself and cannot be
 * rebound to another address. The name stays the TLS server name and the `Host` header.
 */
import { isIP, type Socket } from 'node:net';
import { buildConnector, Client } from 'undici';
import { isPublicAddress } from './address-policy.ts';
import { BlockedAddressError } from './errors.ts';
import { checkedAddresses, createGuardedLookup, type DestinationRules, type LookupFunction } from './resolve.ts';
import { bareHostname } from './url-policy.ts';

export interface GuardedConnectorOptions {
  lookup: LookupFunction;
  rules: DestinationRules;
  connectTimeoutMs: number;
}

type ConnectTarget = buildConnector.Options;

const portOfTarget = (target: ConnectTarget): number => Number(target.port) || (target.protocol === 'https:' ? 443 : 80);

export function createGuardedConnector(options: GuardedConnectorOptions): buildConnector.connector {
  const { exemptions, ownListeners } = options.rules;
  const connect = buildConnector({
    timeout: options.connectTimeoutMs,
    // The look-up has no port: it lets a name exempted on some port resolve privately, and the
    // peer check below refuses it on the ports it is not exempted on.
    lookup: createGuardedLookup(options.lookup, (hostname) => exemptions.coversSomePort(hostname)),
  });

  return (target, callback) => {
    const host = bareHostname(target.hostname);
    const port = portOfTarget(target);
    const exempt = exemptions.covers(host, port);
    const refusal = (address: string) =>
      ownListeners.includes(address, port) ? BlockedAddressError.ownListener(host, address, port) : !exempt && !isPublicAddress(address) ? new BlockedAddressError(host, address) : undefined;
    if (isIP(host) !== 0) {
      const refused = refusal(host);
      if (refused !== undefined) {
        callback(refused, null);
        return;
      }
    }
    // TCP first, TLS on top once the peer is known to be allowed.
    connect({ ...target, protocol: 'http:', port: String(port), servername: undefined, httpSocket: undefined }, (error, socket) => {
      if (error !== null) {
        callback(error, null);
        return;
      }
      const peer = socket.remoteAddress;
      const refused = peer === undefined ? new BlockedAddressError(host, '(unknown peer)') : refusal(peer);
      if (refused !== undefined) {
        socket.destroy();
        callback(refused, null);
        return;
      }
      if (target.protocol !== 'https:') callback(null, socket);
      else connect({ ...target, httpSocket: socket as Socket }, callback);
    });
  };
}

export interface ProxyTunnelOptions {
  proxyUrl: URL;
  lookup: LookupFunction;
  rules: DestinationRules;
  connectTimeoutMs: number;
}

/** A connector that reaches every target through a `CONNECT` tunnel to its checked address. */
export function createProxyTunnelConnector(options: ProxyTunnelOptions): buildConnector.connector & { close(): Promise<void> } {
  const { proxyUrl } = options;
  const proxy = new Client(proxyUrl.origin, {
    connect: buildConnector({ timeout: options.connectTimeoutMs, allowH2: false }),
    // A proxy that never answers the CONNECT fails like a connect that never completes.
    headersTimeout: options.connectTimeoutMs,
  });
  const authorization =
    proxyUrl.username !== '' ? `Basic ${Buffer.from(`${decodeURIComponent(proxyUrl.username)}:${decodeURIComponent(proxyUrl.password)}`).toString('base64')}` : undefined;
  const connectTls = buildConnector({ timeout: options.connectTimeoutMs });

  const connector = (target: ConnectTarget, callback: buildConnector.Callback) => {
    const host = bareHostname(target.hostname);
    const port = portOfTarget(target);
    checkedAddresses(host, port, options.lookup, options.rules)
      .then(async (addresses) => {
        const address = addresses[0].address;
        const authority = isIP(address) === 6 ? `[${address}]:${port}` : `${address}:${port}`;
        const { socket, statusCode } = await proxy.connect({
          path: authority,
          headers: { host: authority, ...(authorization !== undefined ? { 'proxy-authorization': authorization } : {}) },
        });
        if (statusCode !== 200) {
          socket.on('error', () => {}).destroy();
          throw new Error(`The proxy answered ${statusCode} to CONNECT ${authority}`);
        }
        return socket as Socket;
      })
      .then(
        (socket) => {
          if (target.protocol !== 'https:') callback(null, socket);
          else connectTls({ ...target, httpSocket: socket }, callback);
        },
        (error: Error) => callback(error, null),
      );
  };
  return Object.assign(connector, { close: () => proxy.close() });
}
