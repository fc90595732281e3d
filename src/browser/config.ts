/**
 * Browser pool settings from the environment, with the documented defaults (docs/browser.md).
 */
import type { Capability } from '../core/capability.ts';
import { ConfigError, envReader, type EnvReader } from '../core/env.ts';
import { outboundCapability } from '../outbound/config.ts';
import { DEFAULT_CHROMIUM_PATH } from './launch.ts';
import { createBrowserPool, POOL_DEFAULTS } from './pool.ts';
import { BROWSER_SANDBOX_MODES, type BrowserSandboxMode } from './sandbox.ts';
import type { BrowserPool, BrowserPoolOptions } from './types.ts';

export const BROWSER_DEFAULTS = {
  executablePath: DEFAULT_CHROMIUM_PATH,
  navigationTimeoutMs: 20_000,
  ...POOL_DEFAULTS,
} as const;

/** The smallest BROWSER_PAGE_MEMORY_MB accepted. */
export const MIN_PAGE_MEMORY_MB = 256;

/** BROWSER_SANDBOX: `auto` (default), `on` or `off`, any case (sandbox.ts). */
function sandboxMode(env: EnvReader): BrowserSandboxMode {
  const raw = env.text('BROWSER_SANDBOX');
  if (raw === undefined) return BROWSER_DEFAULTS.sandbox;
  const mode = BROWSER_SANDBOX_MODES.find((candidate) => candidate === raw.toLowerCase());
  if (mode === undefined) throw new ConfigError(`BROWSER_SANDBOX must be one of ${BROWSER_SANDBOX_MODES.join(', ')} (got "${raw}").`, 'BROWSER_SANDBOX');
  return mode;
}

/**
 * Reads CHROMIUM_PATH, BROWSER_MAX_BROWSERS, BROWSER_MAX_PAGES, BROWSER_TIMEOUT_MS,
 * BROWSER_PAGE_MEMORY_MB, BROWSER_SANDBOX and the settings
 * shared with the outbound client (OUTBOUND_ALLOW_HOSTS, PROXY_URL, PROXY_COUNTRY_USERNAME).
 * Throws on a malformed number so a typo fails at start-up.
 */
export function browserPoolOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): BrowserPoolOptions {
  return browserCapability.settings(envReader(env));
}

/**
 * The headless browser pool, as a capability. The registry starts it only when `browserStatus`
 * says it may run here (Chromium installed; not as root unless BROWSER_SANDBOX=off).
 */
export const browserCapability: Capability<BrowserPoolOptions, BrowserPool> = {
  name: 'browser',
  settings(env) {
    const outbound = outboundCapability.settings(env);
    const userConcurrency = env.positiveInteger('BROWSER_USER_CONCURRENCY');
    return {
      executablePath: env.text('CHROMIUM_PATH') ?? BROWSER_DEFAULTS.executablePath,
      maxBrowsers: env.positiveInteger('BROWSER_MAX_BROWSERS') ?? BROWSER_DEFAULTS.maxBrowsers,
      maxPagesPerBrowser: env.positiveInteger('BROWSER_MAX_PAGES') ?? BROWSER_DEFAULTS.maxPagesPerBrowser,
      navigationTimeoutMs: env.positiveInteger('BROWSER_TIMEOUT_MS') ?? BROWSER_DEFAULTS.navigationTimeoutMs,
      // Below this a renderer cannot even start a page.
      pageMemoryMb: env.integer('BROWSER_PAGE_MEMORY_MB', { min: MIN_PAGE_MEMORY_MB }) ?? BROWSER_DEFAULTS.pageMemoryMb,
      // Unset: half the page slots (the pool's default).
      ...(userConcurrency === undefined ? {} : { userConcurrency }),
      allowHosts: outbound.allowHosts,
      ...(outbound.proxyUrl !== undefined ? { proxyUrl: outbound.proxyUrl } : {}),
      proxyCountryUsername: outbound.proxyCountryUsername,
      sandbox: sandboxMode(env),
    };
  },
  start: (options) => createBrowserPool(options),
  close: (pool) => pool.close(),
};
