/**
 * Outbound client settings from the environment, with the documented defaults (docs/outbound.md).
 */
import type { OutboundClientOptions } from './client.ts';
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
  const proxyUrl = nonEmpty(env.PROXY_URL);
  return {
    allowHosts: (env.OUTBOUND_ALLOW_HOSTS ?? '')
      .split(',')
      .map((host) => host.trim())
      .filter((host) => host !== ''),
    ...(proxyUrl !== undefined ? { proxyUrl } : {}),
    proxyCountryUsername: nonEmpty(env.PROXY_COUNTRY_USERNAME) ?? OUTBOUND_DEFAULTS.proxyCountryUsername,
    timeoutMs: milliseconds(env, 'OUTBOUND_TIMEOUT_MS', OUTBOUND_DEFAULTS.timeoutMs),
    connectTimeoutMs: milliseconds(env, 'OUTBOUND_CONNECT_TIMEOUT_MS', OUTBOUND_DEFAULTS.connectTimeoutMs),
    headersTimeoutMs: milliseconds(env, 'OUTBOUND_HEADERS_TIMEOUT_MS', OUTBOUND_DEFAULTS.headersTimeoutMs),
    userAgent: nonEmpty(env.OUTBOUND_USER_AGENT) ?? OUTBOUND_DEFAULTS.userAgent,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

function milliseconds(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new TypeError(`${name} must be a positive whole number of milliseconds, got "${raw}"`);
  }
  return value;
}
