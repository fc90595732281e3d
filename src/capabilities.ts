/**
 * The capability registry: the heavy parts behind the billed routes (the PDF worker threads, the
 * OCR engines, the search engine chain, the headless browser pool, the web scraper with its page
 * conversion processes, and the upstream runtime every upstream call goes through). Each module says how it reads
 * its settings, starts and closes (its `Capability`); this file reads every module's settings at
 * start-up, so a typo stops the start with the variable's name, and starts each one on first use
 * (or when `serve` warms it), so a process only pays for what it uses.
 */
import type { Redis } from 'ioredis';
import type { Capability } from './core/capability.ts';
import type { EnvReader } from './core/env.ts';
import type { Config } from './config.ts';
import type { PdfExtractor } from './extract/pdf/index.ts';
import { pdfCapability } from './extract/pdf/capability.ts';
import type { ImageOcr } from './extract/image/index.ts';
import { ocrCapability } from './extract/image/capability.ts';
import { MemorySearchCache, RedisSearchCache, searchCapability, searchWantsBrowser, type SearchChain } from './adapters/search/index.ts';
import { createUpstreamRuntime, type BrowserSource, type UpstreamRuntime } from './adapters/kit/runtime.ts';
import { DEFAULT_BREAKER_POLICY, MemoryBreakerStore, RedisBreakerStore, type BreakerPolicy } from './adapters/kit/breaker.ts';
import type { CallContext, CallOutcome, RuntimeEvent, UpstreamLogger } from './adapters/kit/types.ts';
import { createDocumentFetcher, type DocumentFetcher } from './adapters/document/index.ts';
import { SOLVER_BALANCE } from './adapters/web/index.ts';
import { BROWSER_DEFAULTS, browserCapability, browserStatus, type BrowserPool, type BrowserStatus } from './browser/index.ts';
import { webCapability, type WebScraper } from './adapters/web/index.ts';
import type { OutboundClient } from './outbound/types.ts';
import { forumCapability, type ForumClient } from './adapters/reddit/index.ts';
import { ConfigError, envReader } from './core/env.ts';
import { xCapability, type Microblog } from './adapters/x/index.ts';
import { chainCapability, type ChainClient, type ChainRegistry } from './adapters/chain/index.ts';
import { videoCapability, type VideoService } from './adapters/video/index.ts';
import { freelanceCapability, type Freelance } from './adapters/freelance/index.ts';
import type { Queryable } from './storage/db.ts';
import { RedisPoolLeases } from './throttle/pool-leases.ts';
import { ENGINE_NAMES, ENGINES, isEngineName } from './adapters/search/engines/index.ts';

export interface Capabilities {
  pdf(): PdfExtractor;
  ocr(): ImageOcr;
  search(): SearchChain;
  /**
   * The shared headless browser pool, or null when it cannot run here: no Chromium installed, the
   * service running as root without BROWSER_SANDBOX=off, or BROWSER_SANDBOX=on where Chromium's
   * sandbox cannot start (the start log says which, src/browser/sandbox.ts).
   */
  browser(): Promise<BrowserPool | null>;
  /** Generic pages (POST /v1/web): plain HTTP, or the browser with captcha solving; starts the conversion processes. */
  web(): WebScraper;
  /** Documents of /v1/pdf and /v1/image, downloaded through the runtime. */
  documents(): DocumentFetcher;
  /** The one runtime every upstream call goes through (breaker, retry, logs, metrics). */
  runtime: UpstreamRuntime;
  /** The forum (Reddit) client behind /v1/forum*: its token and rate-limit budget live here. */
  forum(): ForumClient;
  /** The microblog (X) client and its page tokens. */
  microblog(): Microblog;
  /** A blockchain's client (`ethereum`, `bitcoin`…), or undefined when that chain is not configured. */
  chain(name: string): ChainClient | undefined;
  /** Every chain's settings and client (the chains configured, their finality). */
  chains(): ChainRegistry;
  /** The video (YouTube InnerTube) client and its page tokens. */
  video(): VideoService;
  /** The freelance-marketplace (Freelancer.com) client, its skill catalogue and its page tokens. */
  freelance(): Freelance;
  /**
   * Starts what the first request should not wait for: the PDF threads, the OCR engines and (when
   * Chromium is installed) the browser pool, telling `progress` what it is doing.
   */
  warm(progress?: (message: string) => void): Promise<void>;
  /** Whether `warm` was asked for and has finished: what readiness waits for (true when never asked). */
  started(): boolean;
  /** Queue depth and busy workers of the pools started so far (none is started by asking). */
  poolStats(): PoolStats[];
  /** Watches every upstream call's verdict and every circuit change (metrics, the drift report); returns how to stop watching. */
  observeUpstreams(listener: (event: RuntimeEvent) => void): () => void;
  /** One fixed, harmless call per configured upstream (`gleaner upstreams probe`). */
  probes(): UpstreamProbe[];
  close(): Promise<void>;
}

export interface UpstreamProbe {
  upstream: string;
  operation: string;
  run(context: CallContext): Promise<CallOutcome<unknown>>;
}

export interface PoolStats {
  pool: 'pdf' | 'ocr' | 'browser' | 'web';
  workers: number;
  busy: number;
  queued: number;
  /** Workers replaced so far to give their memory back, for the pools that do. */
  recycled?: number;
  /** Resident memory of the pool's processes (the browser's whole process tree), where measured. */
  memoryBytes?: number;
  /** Work ended for passing its memory limit (browser renderers killed), where counted. */
  memoryKills?: number;
  /** Whether the pool's processes run in their sandbox (the browser: Chromium's sandbox, docs/browser.md). */
  sandboxed?: boolean;
  /** Workers one user may keep busy at once, where bounded (docs/reliability.md). */
  userBound?: number;
  /** Tasks that waited at their user's bound while a worker was free, since the start. */
  userWaits?: number;
  /** The most workers one user has kept busy at once, since the start. */
  userPeak?: number;
}

/** A capability started on first use, closed only if it was. */
class Lazy<S, I, D> {
  #instance: I | undefined;
  readonly #capability: Capability<S, I, D>;
  readonly #settings: S;
  readonly #deps: () => D;

  constructor(capability: Capability<S, I, D>, env: EnvReader, deps: () => D) {
    this.#capability = capability;
    this.#settings = env.read((reader) => capability.settings(reader));
    this.#deps = deps;
  }

  get(): I {
    return (this.#instance ??= this.#capability.start(this.#settings, this.#deps()));
  }

  /** The instance if started, without starting it. */
  peek(): I | undefined {
    return this.#instance;
  }

  get settings(): S {
    return this.#settings;
  }

  async close(): Promise<void> {
    if (this.#instance !== undefined) await this.#capability.close(this.#instance);
  }
}

/**
 * UPSTREAM_SUSPEND_MS: how long an upstream that blocked us (or failed UPSTREAM_FAILURES_TO_SUSPEND
 * times in a row) is skipped at first, doubled each time it is still bad, up to
 * UPSTREAM_SUSPEND_MAX_MS; 0 never suspends.
 */
export function breakerSettings(env: EnvReader): { enabled: boolean; policy: Partial<BreakerPolicy> } {
  const base = env.integer('UPSTREAM_SUSPEND_MS', { min: 0 }) ?? DEFAULT_BREAKER_POLICY.baseBackoffMs;
  const max = env.integer('UPSTREAM_SUSPEND_MAX_MS', { min: 1 }) ?? Math.max(base, DEFAULT_BREAKER_POLICY.maxBackoffMs);
  if (max < base) throw new ConfigError(`UPSTREAM_SUSPEND_MAX_MS (${max}) must be at least UPSTREAM_SUSPEND_MS (${base}).`, 'UPSTREAM_SUSPEND_MAX_MS');
  const failureThreshold = env.positiveInteger('UPSTREAM_FAILURES_TO_SUSPEND') ?? DEFAULT_BREAKER_POLICY.failureThreshold;
  return { enabled: base > 0, policy: { baseBackoffMs: base, maxBackoffMs: max, failureThreshold } };
}

export async function createCapabilities(
  config: Config,
  deps: { outbound: OutboundClient; redis?: Redis; logger?: UpstreamLogger; db?: Queryable },
): Promise<Capabilities> {
  const env = envReader(config.env);
  // Replicas share each user's bound on the pools (docs/reliability.md, per-user fairness).
  const leases = deps.redis ? new RedisPoolLeases(deps.redis, { prefix: config.redisPrefix, logger: deps.logger }) : undefined;
  const pdf = new Lazy(pdfCapability, env, () => ({ leases }));
  const ocr = new Lazy(ocrCapability, env, () => ({ leases }));
  const browserSettings = env.read((reader) => browserCapability.settings(reader));

  let browser: Promise<BrowserPool | null> | undefined;
  // The pool once started, however it was (warm-up or a first request), for its gauges.
  let runningBrowser: BrowserPool | null = null;
  let knownBrowserStatus: BrowserStatus | undefined;
  // Found once (probe launches of Chromium), and said once in the log when the browser is not sandboxed.
  let browserStatusFound: Promise<BrowserStatus> | undefined;
  const findBrowserStatus = () =>
    (browserStatusFound ??= browserStatus(browserSettings.executablePath, browserSettings.sandbox ?? BROWSER_DEFAULTS.sandbox).then((status) => {
      knownBrowserStatus = status;
      if (status.available && !status.sandboxed) deps.logger?.warn({ sandboxed: false, reason: status.reason }, `the browser pool runs Chromium WITHOUT its sandbox: ${status.reason}`);
      else if (!status.available) deps.logger?.warn({ available: false, reason: status.reason }, `the browser pool stays off: ${status.reason}`);
      else deps.logger?.info?.({ sandboxed: true }, "the browser pool runs Chromium in its sandbox");
      return status;
    }));
  const getBrowser = () =>
    (browser ??= findBrowserStatus().then((status) =>
      status.available ? (runningBrowser = browserCapability.start({ ...browserSettings, leases }, undefined)) : null,
    ));
  const browserSource: BrowserSource = getBrowser;

  const breaker = env.read((reader) => breakerSettings(reader));
  const runtime = createUpstreamRuntime({
    outbound: deps.outbound,
    browser: browserSource,
    logger: deps.logger,
    // Replicas share one circuit per upstream, so two of them do not both hammer a blocked engine.
    breaker: { ...breaker, store: deps.redis ? new RedisBreakerStore(deps.redis, config.redisPrefix) : new MemoryBreakerStore() },
  });

  const searchSettings = env.read((reader) => searchCapability.settings(reader));
  // Only look for Chromium at start-up when the engines asked for may need it (Google).
  const hasBrowser = searchWantsBrowser(searchSettings) ? (await findBrowserStatus()).available : false;
  const search = env.read(() =>
    searchCapability.start(searchSettings, {
      runtime,
      hasBrowser,
      cache: deps.redis ? new RedisSearchCache(deps.redis, { prefix: config.redisPrefix }) : new MemorySearchCache(),
      logger: deps.logger,
    }),
  );
  const web = new Lazy(webCapability, env, () => ({ runtime, browser: browserSource, leases }));
  const forum = new Lazy(forumCapability, env, () => ({ runtime }));
  const microblog = new Lazy(xCapability, env, () => ({ runtime, redis: deps.redis, redisPrefix: config.redisPrefix, db: deps.db }));
  const chains = new Lazy(chainCapability, env, () => ({ runtime, db: deps.db }));
  const video = new Lazy(videoCapability, env, () => ({ runtime, db: deps.db }));
  const freelance = new Lazy(freelanceCapability, env, () => ({ runtime, db: deps.db }));
  let documents: DocumentFetcher | undefined;
  let warmState: 'never' | 'warming' | 'warm' = 'never';
  let closed = false;
  let startedBrowser: BrowserPool | null = null;

  return {
    pdf: () => pdf.get(),
    ocr: () => ocr.get(),
    search: () => search,
    web: () => web.get().scraper,
    documents: () => (documents ??= createDocumentFetcher(runtime, config.outbound.timeoutMs)),
    browser: getBrowser,
    runtime,
    forum: () => forum.get(),
    microblog: () => microblog.get(),
    chain: (name) => chains.get().client(name),
    chains: () => chains.get(),
    video: () => video.get(),
    freelance: () => freelance.get(),
    async warm(progress = () => {}) {
      warmState = 'warming';
      progress('starting the PDF pool');
      pdf.get();
      // The page-conversion processes of /v1/web (Markdown, text, links): started here, the first
      // such request does not wait for them to load their modules.
      progress('starting the page-conversion processes');
      web.get();
      progress('starting the OCR pool (loading the English model)');
      await ocr.get().warm();
      // Closed meanwhile (a shutdown during the start): start nothing more.
      if (closed) return;
      const status = await findBrowserStatus();
      if (closed) return;
      if (!status.available) {
        progress(`the browser pool stays off: ${status.reason}`);
      } else {
        progress(status.sandboxed ? "starting the browser pool (Chromium in its sandbox)" : `starting the browser pool WITHOUT Chromium's sandbox: ${status.reason}`);
        startedBrowser = await getBrowser();
      }
      warmState = 'warm';
    },
    started: () => warmState !== 'warming',
    poolStats() {
      const stats: PoolStats[] = [];
      const pdfStats = pdf.peek()?.stats?.();
      const pdfFairness = pdf.peek()?.fairness?.();
      if (pdfStats) stats.push({ pool: 'pdf', workers: pdfStats.threads, busy: pdfStats.busy, queued: pdfStats.queued, userBound: pdfFairness?.perTenant, userWaits: pdfFairness?.boundWaits, userPeak: pdfFairness?.peakTenantRunning });
      const ocrPool = ocr.peek();
      if (ocrPool) {
        const s = ocrPool.stats();
        const f = ocrPool.fairness();
        stats.push({ pool: 'ocr', workers: s.workers, busy: s.workers - s.idle, queued: s.queued, recycled: s.recycled, userBound: f.perTenant, userWaits: f.boundWaits, userPeak: f.peakTenantRunning });
      }
      const webService = web.peek();
      if (webService) {
        const s = webService.converter.stats();
        const f = webService.converter.fairness?.();
        stats.push({ pool: 'web', workers: s.processes, busy: s.busy, queued: s.queued, recycled: s.recycled, userBound: f?.perTenant, userWaits: f?.boundWaits, userPeak: f?.peakTenantRunning });
      }
      const statsBrowser = startedBrowser ?? runningBrowser;
      if (statsBrowser) {
        const s = statsBrowser.stats();
        const sandboxed = knownBrowserStatus?.available === true ? knownBrowserStatus.sandboxed : undefined;
        stats.push({ pool: 'browser', workers: s.running, busy: s.active, queued: s.queued, memoryBytes: s.memoryBytes, memoryKills: s.memoryKills, userBound: s.userBound, userWaits: s.userWaits, userPeak: s.userPeak, sandboxed });
      }
      return stats;
    },
    observeUpstreams: (listener) => runtime.observe(listener),
    probes() {
      const probes: UpstreamProbe[] = search.probes();
      probes.push({ upstream: 'reddit', operation: 'listing', run: (context) => forum.get().probe(context) });
      probes.push(...microblog.get().client.probes());
      for (const name of chains.get().configured()) {
        probes.push({ upstream: `chain-${name}`, operation: name === 'bitcoin' ? 'tip-height' : 'eth_blockNumber', run: (context) => chains.get().client(name)!.probe(context) });
      }
      probes.push({ upstream: 'youtube', operation: 'player', run: (context) => video.get().client.probe(context) });
      probes.push({ upstream: 'freelancer', operation: 'projects_active', run: (context) => freelance.get().client.probe(context) });
      const solver = web.settings.solver;
      if (solver) {
        const upstream = runtime.upstream({ timeoutMs: 15_000, baseUrl: solver.url, maxRedirects: 0 });
        probes.push({ upstream: SOLVER_BALANCE.upstream, operation: SOLVER_BALANCE.operation, run: (context) => upstream.call(SOLVER_BALANCE, { key: solver.key, payload: {} }, context) });
      }
      return probes;
    },
    async close() {
      closed = true;
      await Promise.all([pdf.close(), ocr.close(), forum.close(), microblog.close(), video.close(), freelance.close(), web.close(), browser?.then((pool) => (pool ? browserCapability.close(pool) : undefined))]);
    },
  };
}

/**
 * Reads every capability's settings, as `createCapabilities` will, without starting anything.
 * `startService` calls it before DATA_DIR, the database or the owner account exist, so a bad
 * setting stops the start having created nothing. A capability added to `createCapabilities`
 * is added here too (test/integration/start-failure.test.ts finds the variables that are not).
 */
export async function checkCapabilitySettings(config: Config): Promise<void> {
  const env = envReader(config.env);
  env.read((reader) => pdfCapability.settings(reader));
  env.read((reader) => ocrCapability.settings(reader));
  env.read((reader) => webCapability.settings(reader));
  env.read((reader) => forumCapability.settings(reader));
  env.read((reader) => xCapability.settings(reader));
  env.read((reader) => chainCapability.settings(reader));
  env.read((reader) => videoCapability.settings(reader));
  env.read((reader) => freelanceCapability.settings(reader));
  env.read((reader) => breakerSettings(reader));
  const browserSettings = env.read((reader) => browserCapability.settings(reader));
  // The engine list is otherwise checked only when the chain is built, after the database opened.
  const search = env.read((reader) => searchCapability.settings(reader));
  const unknown = search.engines.find((name) => !isEngineName(name));
  if (unknown !== undefined) {
    throw new ConfigError(`Unknown search engine "${unknown}" in SEARCH_ENGINES (known: ${ENGINE_NAMES.join(', ')}).`, 'SEARCH_ENGINES');
  }
  const needsBrowser = search.engines.length > 0 && search.engines.every((name) => isEngineName(name) && ENGINES[name].via === 'browser');
  if (needsBrowser) {
    const status = await browserStatus(browserSettings.executablePath, browserSettings.sandbox ?? BROWSER_DEFAULTS.sandbox);
    if (!status.available) throw new ConfigError(`SEARCH_ENGINES lists only engines that need Chromium, and the browser pool cannot run: ${status.reason}.`, 'SEARCH_ENGINES');
  }
}
