/**
 * Name resolution through a replaceable `dns.lookup`-compatible function, plus the guarded lookup
 * handed to every direct connection: it refuses a name unless all its addresses are public, so
 * the address that is checked is the address that is connected (no DNS-rebinding window).
 */
import { lookup as systemLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { isPublicAddress } from './address-policy.ts';
import { BlockedAddressError } from './errors.ts';
import type { OwnListeners } from './own-listeners.ts';
import type { HostExemptions } from './url-policy.ts';
import { trimTrailing } from '../core/text.ts';

export type { LookupFunction };

export const defaultLookup: LookupFunction = systemLookup as LookupFunction;

/**
 * Every address of `hostname`, through `lookup` asked for all families at once. An aborted
 * `signal` settles the promise at once (a pending system lookup cannot be cancelled).
 */
export function resolveAll(lookup: LookupFunction, hostname: string, signal?: AbortSignal): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => reject(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    lookup(hostname, { all: true }, (error, addresses, family) => {
      signal?.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else if (isEmpty(addresses)) reject(noAddressError(hostname));
      else resolve(toAddressList(addresses, family));
    });
  });
}

function toAddressList(addresses: string | LookupAddress[], family?: number): LookupAddress[] {
  if (Array.isArray(addresses)) return addresses;
  return [{ address: addresses, family: family ?? isIP(addresses) }];
}

function isEmpty(addresses: string | LookupAddress[]): boolean {
  return addresses.length === 0;
}

function noAddressError(hostname: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname });
}

/** The first non-public address among `addresses`, if any. */
export function firstNonPublic(addresses: readonly LookupAddress[]): string | undefined {
  return addresses.find((entry) => !isPublicAddress(entry.address))?.address;
}

/**
 * Names that are private by definition, whatever a resolver answers for them: `localhost` and
 * its subdomains (RFC 6761), mDNS `.local`, `.home.arpa` (RFC 8375), `.internal` (reserved for
 * private use by ICANN in 2024: cloud metadata names live there), and the suffixes private
 * networks commonly use. They are refused before any look-up, so a name like
 * `metadata.google.internal` gets the same answer (not public) on every network, rather than a
 * 422 where it resolves and a failed download where it does not.
 */
const PRIVATE_USE_SUFFIXES = ['localhost', 'local', 'internal', 'home.arpa', 'localdomain', 'lan', 'intranet', 'corp', 'home', 'private'];

export function isPrivateUseName(hostname: string): boolean {
  const name = trimTrailing(hostname.toLowerCase(), '.');
  return PRIVATE_USE_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`));
}

/** What decides where the service may connect: the operator's exemptions and the process's own listeners. */
export interface DestinationRules {
  exemptions: HostExemptions;
  ownListeners: OwnListeners;
}

/**
 * The addresses `hostname` may be connected to on `port`: every one public (unless the host is
 * exempted on that port), none of them a listener of this process. Throws `BlockedAddressError`
 * otherwise. For where the check cannot run inside the connection's own look-up: validation, and
 * connections through the proxy, which are then opened to one of these addresses.
 */
export async function checkedAddresses(
  hostname: string,
  port: number,
  lookup: LookupFunction,
  rules: DestinationRules,
  signal?: AbortSignal,
): Promise<LookupAddress[]> {
  const exempt = rules.exemptions.covers(hostname, port);
  if (!exempt && isPrivateUseName(hostname)) throw new BlockedAddressError(hostname, 'a private-use name');
  const family = isIP(hostname);
  const addresses = family !== 0 ? [{ address: hostname, family }] : await resolveAll(lookup, hostname, signal);
  const blocked = exempt ? undefined : firstNonPublic(addresses);
  if (blocked !== undefined) throw new BlockedAddressError(hostname, blocked);
  const own = addresses.find((entry) => rules.ownListeners.includes(entry.address, port));
  if (own !== undefined) throw BlockedAddressError.ownListener(hostname, own.address, port);
  return addresses;
}

/**
 * A `lookup` for `net.connect` that resolves through `lookup` and fails the connection before
 * any packet is sent when a non-exempt name has a non-public address among its answers.
 */
export function createGuardedLookup(lookup: LookupFunction, isExempt: (hostname: string) => boolean): LookupFunction {
  return (hostname, options, callback) => {
    if (!isExempt(hostname) && isPrivateUseName(hostname)) {
      callback(new BlockedAddressError(hostname, 'a private-use name'), '');
      return;
    }
    lookup(hostname, { ...options, all: true }, (error, answer, family) => {
      if (error || isEmpty(answer)) {
        callback(error ?? noAddressError(hostname), '');
        return;
      }
      const addresses = toAddressList(answer, family);
      const blocked = isExempt(hostname) ? undefined : firstNonPublic(addresses);
      if (blocked !== undefined) {
        callback(new BlockedAddressError(hostname, blocked), '');
      } else if (options.all) {
        callback(null, addresses);
      } else {
        callback(null, addresses[0].address, addresses[0].family);
      }
    });
  };
}
