/**
 * Egress through PROXY_URL. One agent per proxy identity: the plain PROXY_URL, and one per country
 * whose username is rewritten from the template (e.g. `{username}-country-{country}`, the
 * convention of most residential proxy vendors). Each reaches its targets through `CONNECT`
 * tunnels to addresses checked here (./guarded-connector.ts).
 */
import { Agent } from 'undici';
import { createProxyTunnelConnector } from './guarded-connector.ts';
import type { DestinationRules, LookupFunction } from './resolve.ts';

export const DEFAULT_PROXY_COUNTRY_USERNAME = '{username}-country-{country}';

/** Vendor country tags are short codes ("us", "de", "gb"); anything else could forge credentials. */
const COUNTRY_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

export interface ProxyPoolOptions {
  proxyUrl: string;
  usernameTemplate: string;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  lookup: LookupFunction;
  rules: DestinationRules;
}

export function parseProxyUrl(proxyUrl: string): URL {
  let url: URL;
  try {
    url = new URL(proxyUrl);
  } catch (error) {
    throw new TypeError('PROXY_URL is not a valid URL', { cause: error });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`PROXY_URL must be an http:// or https:// proxy, got ${url.protocol}`);
  }
  return url;
}

/** A malformed country is a caller bug (validation should have refused it), hence a TypeError. */
export function assertProxyCountry(country: string): void {
  if (!COUNTRY_PATTERN.test(country)) {
    throw new TypeError(`Invalid proxy country "${country}"`);
  }
}

/** The proxy URL whose username is the template filled with the original username and `country`. */
export function proxyUrlForCountry(proxyUrl: URL, usernameTemplate: string, country: string): URL {
  assertProxyCountry(country);
  const url = new URL(proxyUrl.href);
  const username = usernameTemplate
    .replaceAll('{username}', decodeURIComponent(proxyUrl.username))
    .replaceAll('{country}', country);
  url.username = encodeURIComponent(username);
  return url;
}

export class ProxyPool {
  readonly #options: ProxyPoolOptions;
  readonly #proxyUrl: URL;
  readonly #agents = new Map<string, { agent: Agent; close(): Promise<void> }>();

  constructor(options: ProxyPoolOptions) {
    this.#options = options;
    this.#proxyUrl = parseProxyUrl(options.proxyUrl);
  }

  /** The agent for `country`, or for the plain PROXY_URL when no country is asked for. */
  agentFor(country: string | undefined): Agent {
    const key = country ?? '';
    let entry = this.#agents.get(key);
    if (entry === undefined) {
      const proxyUrl = country === undefined ? this.#proxyUrl : proxyUrlForCountry(this.#proxyUrl, this.#options.usernameTemplate, country);
      const connector = createProxyTunnelConnector({ proxyUrl, lookup: this.#options.lookup, rules: this.#options.rules, connectTimeoutMs: this.#options.connectTimeoutMs });
      const agent = new Agent({ connect: connector, headersTimeout: this.#options.headersTimeoutMs, bodyTimeout: this.#options.bodyTimeoutMs });
      entry = { agent, close: async () => void (await Promise.all([agent.close(), connector.close()])) };
      this.#agents.set(key, entry);
    }
    return entry.agent;
  }

  async close(): Promise<void> {
    const entries = [...this.#agents.values()];
    this.#agents.clear();
    await Promise.all(entries.map((entry) => entry.close()));
  }
}
