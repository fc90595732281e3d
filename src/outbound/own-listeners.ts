/**
 * The addresses and ports this process listens on: the API server and the metrics listener. The
 * HTTP layer adds each listener once it listens and removes it when it closes; the outbound client
 * refuses to connect to any of them, whatever OUTBOUND_ALLOW_HOSTS exempts, so no caller can make
 * the service fetch its own API or its metrics.
 */
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

export interface ListeningAddress {
  address: string;
  port: number;
}

const WILDCARDS = new Set(['0.0.0.0', '::']);

/** An address as the registry compares it: no brackets, lower case, IPv4-mapped IPv6 as IPv4. */
function canonicalAddress(address: string): string {
  const bare = (address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address).toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  return mapped ? mapped[1] : bare;
}

/** Whether a connection to `address` stays on this machine: loopback, unspecified, or an interface's own address. */
function isThisMachine(address: string): boolean {
  if (WILDCARDS.has(address) || address === '::1' || (isIP(address) === 4 && address.startsWith('127.'))) return true;
  return Object.values(networkInterfaces()).some((entries) => entries?.some((entry) => canonicalAddress(entry.address) === address));
}

export class OwnListeners {
  readonly #listeners = new Set<ListeningAddress>();

  /** Records `addresses` (a Unix socket path is skipped: no URL reaches it); the answer removes them again. */
  add(addresses: ReadonlyArray<ListeningAddress | string>): () => void {
    const added = addresses.filter((entry) => typeof entry !== 'string').map((entry) => ({ address: canonicalAddress(entry.address), port: entry.port }));
    for (const entry of added) this.#listeners.add(entry);
    return () => {
      for (const entry of added) this.#listeners.delete(entry);
    };
  }

  /**
   * Whether a connection to `address`:`port` would reach one of them. A listener on a wildcard
   * address answers on every address of the machine, and connecting to 0.0.0.0 or :: reaches a
   * local listener of any address.
   */
  includes(address: string, port: number): boolean {
    const target = canonicalAddress(address);
    for (const listener of this.#listeners) {
      if (listener.port !== port) continue;
      if (listener.address === target || WILDCARDS.has(target)) return true;
      if (WILDCARDS.has(listener.address) && isThisMachine(target)) return true;
    }
    return false;
  }
}

/** The process's listeners: one registry, as the process has one set of ports. */
export const ownListeners = new OwnListeners();
