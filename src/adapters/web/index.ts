/**
 * Public entry of the generic page adapter behind POST /v1/web, and the reading of its settings:
 * WEB_BLOCKED_DOMAINS, WEB_TIMEOUT_MS, WEB_BROWSER_TIMEOUT_MS, the WEB_FORMAT_* variables and
 * the CAPTCHA_SOLVER_* variables. Starting it starts the conversion processes (Markdown, text,
 * links); closing it stops them.
 */
import type { Capability } from '../../core/capability.ts';
import { ConfigError } from '../../core/env.ts';
import type { BrowserSource, UpstreamRuntime } from '../kit/runtime.ts';
import type { TenantLeases } from '../../core/fair-limiter.ts';
import { createDomainBlocklist } from './blocked-domains.ts';
import { createWebScraper, type WebScraper, type WebScraperSettings } from './scraper.ts';
import { createPageConverter, MIN_CONVERTER_HEAP_MB, PAGE_CONVERTER_DEFAULTS, type PageConverter } from './converter.ts';
import { createCaptchaSolver, SOLVER_FLAVORS, type CaptchaSolverSettings, type SolverFlavor } from './solver.ts';

export { createDomainBlocklist, canonicalHostname, DEFAULT_BLOCKED_DOMAINS, type DomainBlocklist } from './blocked-domains.ts';
export { createWebScraper, isChargeableStatus, MAX_PAGE_BYTES, MAX_REDIRECTS, parseFetchedPage, plainRequestParts, webPageAdapter, webRenderAdapter } from './scraper.ts';
export type { FetchedPage, WebOutcome, WebPage, WebRequest, WebScraper, WebScraperSettings } from './scraper.ts';
export { OUTPUT_FORMATS, convertPage, extractLinks, renderContent, type ConvertedPage, type OutputFormat } from './formats.ts';
export { createPageConverter, inlineConverter, PAGE_CONVERTER_DEFAULTS } from './converter.ts';
export type { ConvertOutcome, ConvertTask, PageConverter, PageConverterOptions } from './converter.ts';
export { decodePage } from './charset.ts';
export { isWebContent } from './content-type.ts';
export { isHeaderObject, forwardableRequestHeaders } from './headers.ts';
export { captchaTask, createCaptchaSolver, CaptchaSolverError, parseSolverAnswer, solverAdapter, SOLVER_BALANCE, type CaptchaSolver, type CaptchaSolverSettings } from './solver.ts';

export const WEB_DEFAULTS = {
  timeoutMs: 30_000,
  browserTimeoutMs: 90_000,
  solverPollIntervalMs: 3_000,
  solverTimeoutMs: 60_000,
  solverFlavor: 'anticaptcha' as SolverFlavor,
  formatProcesses: PAGE_CONVERTER_DEFAULTS.processes,
  formatTimeoutMs: PAGE_CONVERTER_DEFAULTS.timeoutMs,
  formatMaxHeapMb: PAGE_CONVERTER_DEFAULTS.maxHeapMb,
} as const;

export interface WebSettings extends WebScraperSettings {
  /** WEB_BLOCKED_DOMAINS: added to the contract's list. */
  blockedDomains: string[];
  solver?: CaptchaSolverSettings;
  /**
   * The conversion processes: WEB_FORMAT_PROCESSES, WEB_FORMAT_TIMEOUT_MS for one page,
   * WEB_FORMAT_MAX_HEAP_MB per process, WEB_FORMAT_MAX_QUEUE pages waiting, POOL_USER_CONCURRENCY
   * processes one user may keep busy.
   */
  conversion: { processes: number; timeoutMs: number; maxHeapMb: number; maxQueue?: number; userConcurrency?: number };
}

/** The started capability: the scraper the endpoint uses, and the conversion processes it owns. */
export interface WebService {
  scraper: WebScraper;
  converter: PageConverter;
}

export interface WebDeps {
  runtime: UpstreamRuntime;
  browser: BrowserSource;
  /** Shared per-user leases of the conversion processes (scaled mode). */
  leases?: TenantLeases;
}

/** `{ [name]: value }`, or nothing when the value is unset (the default then applies). */
function optional<K extends string>(name: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [name]: value } as Record<K, number>);
}

export const webCapability: Capability<WebSettings, WebService, WebDeps> = {
  name: 'web',
  settings(env) {
    const blockedDomains = env.list('WEB_BLOCKED_DOMAINS');
    try {
      createDomainBlocklist(blockedDomains);
    } catch (error) {
      throw new ConfigError(`WEB_BLOCKED_DOMAINS: ${(error as Error).message}`, 'WEB_BLOCKED_DOMAINS');
    }
    const solverUrl = env.url('CAPTCHA_SOLVER_URL');
    const solverKey = env.text('CAPTCHA_SOLVER_KEY');
    if ((solverUrl === undefined) !== (solverKey === undefined)) {
      const missing = solverUrl === undefined ? 'CAPTCHA_SOLVER_URL' : 'CAPTCHA_SOLVER_KEY';
      throw new ConfigError(`${missing} must be set too: the captcha solver needs both CAPTCHA_SOLVER_URL and CAPTCHA_SOLVER_KEY.`, missing);
    }
    const flavor = (env.text('CAPTCHA_SOLVER_FLAVOR') ?? WEB_DEFAULTS.solverFlavor).toLowerCase();
    if (!(SOLVER_FLAVORS as readonly string[]).includes(flavor)) {
      throw new ConfigError(`CAPTCHA_SOLVER_FLAVOR must be one of ${SOLVER_FLAVORS.join(', ')} (got "${flavor}").`, 'CAPTCHA_SOLVER_FLAVOR');
    }
    const browserTimeoutMs = env.positiveInteger('WEB_BROWSER_TIMEOUT_MS') ?? WEB_DEFAULTS.browserTimeoutMs;
    return {
      blockedDomains,
      timeoutMs: env.positiveInteger('WEB_TIMEOUT_MS') ?? WEB_DEFAULTS.timeoutMs,
      browserTimeoutMs,
      proxyConfigured: env.text('PROXY_URL') !== undefined,
      conversion: {
        processes: env.positiveInteger('WEB_FORMAT_PROCESSES') ?? WEB_DEFAULTS.formatProcesses,
        timeoutMs: env.positiveInteger('WEB_FORMAT_TIMEOUT_MS') ?? WEB_DEFAULTS.formatTimeoutMs,
        // Below the floor a process cannot load its modules.
        maxHeapMb: env.integer('WEB_FORMAT_MAX_HEAP_MB', { min: MIN_CONVERTER_HEAP_MB }) ?? WEB_DEFAULTS.formatMaxHeapMb,
        maxQueue: env.positiveInteger('WEB_FORMAT_MAX_QUEUE'),
        // Unset: half the processes, at least one.
        ...optional('userConcurrency', env.positiveInteger('POOL_USER_CONCURRENCY')),
      },
      ...(solverUrl !== undefined && solverKey !== undefined
        ? {
            solver: {
              url: solverUrl,
              key: solverKey,
              flavor: flavor as SolverFlavor,
              pollIntervalMs: env.positiveInteger('CAPTCHA_SOLVER_POLL_MS') ?? WEB_DEFAULTS.solverPollIntervalMs,
              timeoutMs: env.positiveInteger('CAPTCHA_SOLVER_TIMEOUT_MS') ?? WEB_DEFAULTS.solverTimeoutMs,
            },
          }
        : {}),
    };
  },
  start(settings, deps) {
    const converter = createPageConverter({ ...settings.conversion, leases: deps.leases });
    const scraper = createWebScraper(settings, {
      runtime: deps.runtime,
      browser: deps.browser,
      blocklist: createDomainBlocklist(settings.blockedDomains),
      solver: settings.solver ? createCaptchaSolver(settings.solver, deps.runtime) : undefined,
      converter,
    });
    return { scraper, converter };
  },
  close: (service) => service.converter.close(),
};
