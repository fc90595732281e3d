/**
 * Outbound client settings from the environment, with the documented defaults (docs/outbound.md).
 */
import type { Capability } from '../core/capability.ts';
import { envReader } from '../core/env.ts';
import { createOutboundClient, type ClosableOutboundClient, type OutboundClientOptions } from './client.ts';
import { DEFAULT_PROXY_COUNTRY_USERNAME } from './proxy.ts';

export const OUTBOUND_DEFAULTS = {
  timeoutMs: 30_000,
  connectTimeoutMs: 10_000,
  headersTimeoutMs: 15_000,
  proxyCountryUsername: DEFAULT_PROXY_COUNTRY_USERNAME,
  userAgent: 'Mozilla/5.0 (compatible; gleaner/0.1)',
} as const;

/**
 * Reads OUTBOUND_ALLOW_HOSTS, PROXY_URL, PROXY_COUNTRY_USERNAME, OUTBOUND_TIMEOUT_MS,
 * OUTBOUND_CONNECT_TIMEOUT_MS, OUTBOUND_HEADERS_TIMEOUT_MS and OUTBOUND_USER_AGENT.
 * Throws on a malformed number so a typo fails at start-up, not on the first request.
 */
export function outboundOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): OutboundClientOptions {
  return outboundCapability.settings(envReader(env));
}

/** The one outbound client, as a capability: its settings, its start and its close. */
export const outboundCapability: Capability<OutboundClientOptions, ClosableOutboundClient> = {
  name: 'outbound',
  settings(env) {
    const proxyUrl = env.text('PROXY_URL');
    return {
      allowHosts: env.list('OUTBOUND_ALLOW_HOSTS'),
      ...(proxyUrl !== undefined ? { proxyUrl } : {}),
      proxyCountryUsername: env.text('PROXY_COUNTRY_USERNAME') ?? OUTBOUND_DEFAULTS.proxyCountryUsername,
      timeoutMs: env.positiveInteger('OUTBOUND_TIMEOUT_MS') ?? OUTBOUND_DEFAULTS.timeoutMs,
      connectTimeoutMs: env.positiveInteger('OUTBOUND_CONNECT_TIMEOUT_MS') ?? OUTBOUND_DEFAULTS.connectTimeoutMs,
      headersTimeoutMs: env.positiveInteger('OUTBOUND_HEADERS_TIMEOUT_MS') ?? OUTBOUND_DEFAULTS.headersTimeoutMs,
      userAgent: env.text('OUTBOUND_USER_AGENT') ?? OUTBOUND_DEFAULTS.userAgent,
    };
  },
  start: (settings) => createOutboundClient(settings),
  close: (client) => client.close(),
};
