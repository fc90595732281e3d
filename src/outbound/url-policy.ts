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

/** The port a URL connects to: its own, else its scheme's default. */
export function portOf(url: URL): number {
  return Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
}

/**
 * The hosts OUTBOUND_ALLOW_HOSTS exempts from the public-address rule. An entry is a host (every
 * port) or `host:port` (`[::1]:8080` for IPv6): that port only. Entries are canonicalised like URL
 * hosts, so `::1`, `[::1]` and `[0:0:0:0:0:0:0:1]` are one host and `LocalHost` matches
 * `localhost`. The exemption is by name only: a DNS name resolving to an exempted IP is not exempt.
 */
export class HostExemptions {
  readonly #everyPort = new Set<string>();
  readonly #onPort = new Set<string>();

  constructor(allowHosts: readonly string[]) {
    for (const entry of allowHosts.map((item) => item.trim()).filter((item) => item !== '')) {
      const { host, port } = parseAllowEntry(entry);
      if (port === undefined) this.#everyPort.add(host);
      else this.#onPort.add(`${host} ${port}`);
    }
  }

  /** Whether `hostname` is exempted on `port`. */
  covers(hostname: string, port: number): boolean {
    const host = bareHostname(hostname.toLowerCase());
    return this.#everyPort.has(host) || this.#onPort.has(`${host} ${port}`);
  }

  /** Whether `hostname` is exempted on every port (where the port is not known, e.g. a name look-up). */
  coversEveryPort(hostname: string): boolean {
    return this.#everyPort.has(bareHostname(hostname.toLowerCase()));
  }

  /** Whether `hostname` is exempted on some port: its look-up may then answer private addresses. */
  coversSomePort(hostname: string): boolean {
    const host = bareHostname(hostname.toLowerCase());
    return this.#everyPort.has(host) || [...this.#onPort].some((key) => key.startsWith(`${host} `));
  }
}

/**
 * A predicate telling whether a hostname is exempted on every port. Where the port is known, use
 * `HostExemptions.covers`, which also honours `host:port` entries.
 */
export function createHostExemptions(allowHosts: readonly string[]): (hostname: string) => boolean {
  const exemptions = new HostExemptions(allowHosts);
  return (hostname) => exemptions.coversEveryPort(hostname);
}

function parseAllowEntry(entry: string): { host: string; port?: number } {
  const invalid = () => new TypeError(`Invalid entry in the outbound allow list: "${entry}" (expected a hostname or an IP address, with an optional :port)`);
  // A bare IPv6 address has colons of its own; a port after one needs the brackets.
  if (isIPv6(bareHostname(entry))) return { host: canonicalHost(entry, invalid) };
  const withPort = /^(.+):(\d{1,5})$/.exec(entry);
  if (withPort === null) return { host: canonicalHost(entry, invalid) };
  const port = Number(withPort[2]);
  if (port < 1 || port > 65_535) throw invalid();
  return { host: canonicalHost(withPort[1], invalid), port };
}

function canonicalHost(entry: string, invalid: () => TypeError): string {
  const bare = bareHostname(entry);
  let url: URL | undefined;
  try {
    url = new URL(`http://${isIPv6(bare) ? `[${bare}]` : bare}/`);
  } catch {
    url = undefined;
  }
  if (url === undefined || url.host !== url.hostname || url.pathname !== '/' || url.username !== '') throw invalid();
  return bareHostname(url.hostname);
}
