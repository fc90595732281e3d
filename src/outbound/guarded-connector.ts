/**
 * The undici connector for direct (proxy-less) connections. Names are checked inside the socket's
 * own DNS lookup; IP literals never reach a lookup, so they are checked here before connecting;
 * and the connected peer address is verified once more, so no path can end on a private address.
 */
import { isIP } from 'node:net';
import { buildConnector } from 'undici';
import { isPublicAddress } from './address-policy.ts';
import { BlockedAddressError } from './errors.ts';
import { createGuardedLookup, type LookupFunction } from './resolve.ts';

export interface GuardedConnectorOptions {
  lookup: LookupFunction;
  isExempt: (hostname: string) => boolean;
  connectTimeoutMs: number;
}

export function createGuardedConnector(options: GuardedConnectorOptions): buildConnector.connector {
  const { isExempt } = options;
  const connect = buildConnector({
    timeout: options.connectTimeoutMs,
    lookup: createGuardedLookup(options.lookup, isExempt),
  });

  return (target, callback) => {
    const host = target.hostname;
    if (isExempt(host)) {
      connect(target, callback);
      return;
    }
    if (isIP(host) !== 0 && !isPublicAddress(host)) {
      callback(new BlockedAddressError(host, host), null);
      return;
    }
    connect(target, (error, socket) => {
      if (error !== null) {
        callback(error, null);
        return;
      }
      const peer = socket.remoteAddress;
      if (peer === undefined || !isPublicAddress(peer)) {
        socket.destroy();
        callback(new BlockedAddressError(host, peer ?? '(unknown peer)'), null);
        return;
      }
      callback(null, socket);
    });
  };
}
