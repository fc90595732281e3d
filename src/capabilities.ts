/**
 * The capability registry: the heavy parts behind the billed routes (the PDF worker pool, the
 * OCR engines, the search engine chain, the headless browser pool, the web scraper with its page
 * conversion threads, and the upstream runner the adapters share). Each module says how it reads
 * its settings, starts and closes (its `Capability`); this file reads every module's settings at
 * start-up, so a typo stops the start with the variable's name, and starts each one on first use
 * (or when `serve` warms it), so a process only pays for what it uses.
 */
import type { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import type { Capability } from './core/capability.ts';
import type { EnvReader } from './core/env.ts';
import type { Config } from './config.ts';
import type { PdfExtractor } from './extract/pdf/index.ts';
import { pdfCapability } from './extract/pdf/capability.ts';
import type { ImageOcr } from './extract/image/index.ts';
import { ocrCapability } from './extract/image/capability.ts';
import { MemorySearchCache, RedisSearchCache, searchCapability, searchWantsBrowser, type SearchChain } from './adapters/search/index.ts';
import { createUpstreamRunner, type BrowserSource, type UpstreamEvent, type UpstreamRunner } from './adapters/kit/runner.ts';
import { browserCapability, isBrowserAvailable, type BrowserPool } from './browser/index.ts';
import { webCapability, type WebScraper } from './adapters/web/index.ts';
import type { OutboundClient } from './outbound/types.ts';
import { forumCapability, type ForumClient } from './adapters/reddit/index.ts';
import { envReader } from './core/env.ts';
import { xCapability, type Microblog } from './adapters/x/index.ts';
import type { Queryable } from './storage/db.ts';

export interface Capabilities {
  pdf(): PdfExtractor;
  ocr(): ImageOcr;
  search(): SearchChain;
  /** The shared headless browser pool, or null when no Chromium is installed. */
  browser(): Promise<BrowserPool | null>;
  /** Generic pages (POST /v1/web): plain HTTP, or the browser with captcha solving; starts the conversion threads. */
  web(): WebScraper;
  /** Runs upstream adapters (forum, microblog, web) through the outbound client or the browser. */
  upstreams: UpstreamRunner;
  /** The forum (Reddit) client behind /v1/forum*: its token and rate-limit budget live here. */
  forum(): ForumClient;
  /** The microblog (X) client and its page tokens. */
  microblog(): Microblog;
  /**
   * Starts what the first request should not wait for: the PDF threads, the OCR engines and (when
   * Chromium is installed) the browser pool, telling `progress` what it is doing.
   */
  warm(progress?: (message: string) => void): Promise<void>;
  /** Whether `warm` was asked for and has finished: what readiness waits for (true when never asked). */
  started(): boolean;
  /** Queue depth and busy workers of the pools started so far (none is started by asking). */
  poolStats(): PoolStats[];
  /** Watches every upstream call's verdict (metrics); returns how to stop watching. */
  observeUpstreams(listener: (event: UpstreamEvent) => void): () => void;
  close(): Promise<void>;
}

export interface PoolStats {
  pool: 'pdf' | 'ocr' | 'browser' | 'web';
  workers: number;
  busy: number;
  queued: number;
  /** Workers replaced so far to give their memory back, for the pools that do. */
  recycled?: number;
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

export async function createCapabilities(
  config: Config,
  deps: { outbound: OutboundClient; redis?: Redis; logger?: FastifyBaseLogger; db?: Queryable },
): Promise<Capabilities> {
  const env = envReader(config.env);
  const pdf = new Lazy(pdfCapability, env, () => undefined);
  const ocr = new Lazy(ocrCapability, env, () => undefined);
  const browserSettings = env.read((reader) => browserCapability.settings(reader));

  let browser: Promise<BrowserPool | null> | undefined;
  const getBrowser = () =>
    (browser ??= isBrowserAvailable(browserSettings.executablePath).then((available) =>
      available ? browserCapability.start(browserSettings, undefined) : null,
    ));
  const browserSource: BrowserSource = getBrowser;

  const searchSettings = env.read((reader) => searchCapability.settings(reader));
  // Only look for Chromium at start-up when the engines asked for may need it (Google).
  const hasBrowser = searchWantsBrowser(searchSettings) ? await isBrowserAvailable(browserSettings.executablePath) : false;
  const search = env.read(() =>
    searchCapability.start(searchSettings, {
      outbound: deps.outbound,
      browser: hasBrowser ? browserSource : undefined,
      cache: deps.redis ? new RedisSearchCache(deps.redis, { prefix: config.redisPrefix }) : new MemorySearchCache(),
      logger: deps.logger,
    }),
  );
  const upstreamListeners = new Set<(event: UpstreamEvent) => void>();
  const upstreams = createUpstreamRunner({
    outbound: deps.outbound,
    browser: browserSource,
    logger: deps.logger,
    observe: (event) => upstreamListeners.forEach((listener) => listener(event)),
  });
  const web = new Lazy(webCapability, env, () => ({ outbound: deps.outbound, browser: browserSource }));
  const forum = new Lazy(forumCapability, env, () => ({ upstreams, logger: deps.logger }));
  const microblog = new Lazy(xCapability, env, () => ({ runner: upstreams, redis: deps.redis, redisPrefix: config.redisPrefix, db: deps.db }));
  let warmState: 'never' | 'warming' | 'warm' = 'never';
  let closed = false;
  let startedBrowser: BrowserPool | null = null;

  return {
    pdf: () => pdf.get(),
    ocr: () => ocr.get(),
    search: () => search,
    web: () => web.get().scraper,
    browser: getBrowser,
    upstreams,
    forum: () => forum.get(),
    microblog: () => microblog.get(),
    async warm(progress = () => {}) {
      warmState = 'warming';
      progress('starting the PDF pool');
      pdf.get();
      // The page-conversion threads of /v1/web (Markdown, text, links): started here, the first
      // such request does not wait for them to load their modules.
      progress('starting the page-conversion threads');
      web.get();
      progress('starting the OCR pool (loading the English model)');
      await ocr.get().warm();
      // Closed meanwhile (a shutdown during the start): start nothing more.
      if (closed) return;
      if ((await isBrowserAvailable(browserSettings.executablePath)) && !closed) {
        progress('starting the browser pool');
        startedBrowser = await getBrowser();
      } else {
        progress('no Chromium found: the browser pool stays off');
      }
      warmState = 'warm';
    },
    started: () => warmState !== 'warming',
    poolStats() {
      const stats: PoolStats[] = [];
      const pdfStats = pdf.peek()?.stats?.();
      if (pdfStats) stats.push({ pool: 'pdf', workers: pdfStats.threads, busy: pdfStats.busy, queued: pdfStats.queued });
      const ocrPool = ocr.peek();
      if (ocrPool) {
        const s = ocrPool.stats();
        stats.push({ pool: 'ocr', workers: s.workers, busy: s.workers - s.idle, queued: s.queued, recycled: s.recycled });
      }
      const webService = web.peek();
      if (webService) {
        const s = webService.converter.stats();
        stats.push({ pool: 'web', workers: s.processes, busy: s.busy, queued: s.queued, recycled: s.recycled });
      }
      if (startedBrowser) {
        const s = startedBrowser.stats();
        stats.push({ pool: 'browser', workers: s.running, busy: s.active, queued: s.queued });
      }
      return stats;
    },
    observeUpstreams(listener) {
      upstreamListeners.add(listener);
      return () => upstreamListeners.delete(listener);
    },
    async close() {
      closed = true;
      await Promise.all([pdf.close(), ocr.close(), forum.close(), microblog.close(), web.close(), browser?.then((pool) => (pool ? browserCapability.close(pool) : undefined))]);
    },
  };
}
