/**
 * URL-level rules: which schemes may be fetched, and which hosts the operator exempted from the
 * public-address rule (OUTBOUND_ALLOW_HOSTS, e.g. a local test server or an internal mirror).
 */
import { isIPv6 } from 'node:net';
import { OutboundError } from './types.ts';

const FETCHABLE_PROTOCOLS = new Set(['http:', 'https:']);

/**
 * Parses with the WHATWG URL parser, which also canonicalises numeric hosts (`http://2130706433/`,
 * `http://0x7f.1/` and `http://0177.0.0.1/` all become `127.0.0.1`) before any address check.
 */
export function parseHttpUrl(input: string | URL, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(input, base);
  } catch (error) {
    throw new OutboundError('invalid_url', 'The URL cannot be parsed', String(input), { cause: error });
  }
  if (!FETCHABLE_PROTOCOLS.has(url.protocol)) {
    throw new OutboundError('invalid_url', `The ${url.protocol} scheme is not allowed, only http and https`, url.href);
  }
  if (url.hostname === '') {
    throw new OutboundError('invalid_url', 'The URL has no host', url.href);
  }
  return url;
}

/**
 * Runs a caller's per-hop check (`checkUrl`: the first URL and every redirect, in the plain client
 * and the browser alike). Whatever it throws becomes `blocked_host`, unless it is already an
 * OutboundError.
 */
export function runUrlCheck(checkUrl: ((url: URL) => void) | undefined, url: URL): void {
  if (checkUrl === undefined) return;
  try {
    checkUrl(new URL(url.href));
  } catch (error) {
    if (error instanceof OutboundError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new OutboundError('blocked_host', reason || 'The URL was refused', url.href, { cause: error });
  }
}

/** A URL hostname as the connection layer sees it: IPv6 literals lose their brackets. */
export function bareHostname(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/**
 * Returns a predicate telling whether a hostname is exempted. Entries are canonicalised like URL
 * hosts, so `::1`, `[::1]` and `[0:0:0:0:0:0:0:1]` are one entry and `LocalHost` matches
 * `localhost`. The exemption is by name only: a DNS name resolving to an exempted IP is not exempt.
 */
export function createHostExemptions(allowHosts: readonly string[]): (hostname: string) => boolean {
  const exempt = new Set(allowHosts.map((entry) => entry.trim()).filter((entry) => entry !== '').map(canonicalHost));
  return (hostname) => exempt.has(bareHostname(hostname.toLowerCase()));
}

function canonicalHost(entry: string): string {
  const bare = bareHostname(entry);
  let url: URL | undefined;
  try {
    url = new URL(`http://${isIPv6(bare) ? `[${bare}]` : bare}/`);
  } catch {
    url = undefined;
  }
  if (url === undefined || url.host !== url.hostname || url.pathname !== '/' || url.username !== '') {
    throw new TypeError(`Invalid entry in the outbound allow list: "${entry}" (expected a hostname or an IP address)`);
  }
  return bareHostname(url.hostname);
}
