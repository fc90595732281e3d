/**
 * Browser pool settings from the environment, with the documented defaults (docs/browser.md).
 */
import { outboundOptionsFromEnv } from '../outbound/config.ts';
import { DEFAULT_CHROMIUM_PATH } from './launch.ts';
import { POOL_DEFAULTS } from './pool.ts';
import type { BrowserPoolOptions } from './types.ts';

export const BROWSER_DEFAULTS = {
  executablePath: DEFAULT_CHROMIUM_PATH,
  navigationTimeoutMs: 20_000,
  ...POOL_DEFAULTS,
} as const;

/**
 * Reads CHROMIUM_PATH, BROWSER_MAX_BROWSERS, BROWSER_MAX_PAGES, BROWSER_TIMEOUT_MS and the settings
 * shared with the outbound client (OUTBOUND_ALLOW_HOSTS, PROXY_URL, PROXY_COUNTRY_USERNAME).
 * Throws on a malformed number so a typo fails at start-up.
 */
export function browserPoolOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): BrowserPoolOptions {
  const outbound = outboundOptionsFromEnv(env);
  return {
    executablePath: env.CHROMIUM_PATH?.trim() || BROWSER_DEFAULTS.executablePath,
    maxBrowsers: positiveInteger(env, 'BROWSER_MAX_BROWSERS', BROWSER_DEFAULTS.maxBrowsers),
    maxPagesPerBrowser: positiveInteger(env, 'BROWSER_MAX_PAGES', BROWSER_DEFAULTS.maxPagesPerBrowser),
    navigationTimeoutMs: positiveInteger(env, 'BROWSER_TIMEOUT_MS', BROWSER_DEFAULTS.navigationTimeoutMs),
    allowHosts: outbound.allowHosts,
    ...(outbound.proxyUrl !== undefined ? { proxyUrl: outbound.proxyUrl } : {}),
    proxyCountryUsername: outbound.proxyCountryUsername,
  };
}

function positiveInteger(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new TypeError(`${name} must be a positive whole number, got "${raw}"`);
  }
  return value;
}
