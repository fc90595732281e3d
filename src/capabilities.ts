/**
 * The heavy capabilities behind the billed routes: the PDF worker pool, the OCR engines, the
 * search engine chain and the headless browser pool. Each module reads its own settings from the
 * same environment as the rest of the config; they are started lazily (or warmed by `serve`) so a
 * process only pays for what it uses.
 */
import type { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import { ConfigError, type Config } from './config.ts';
import { createPdfExtractor, MIN_PDF_HEAP_MB, MIN_PDF_MEMORY_MB, type PdfExtractor } from './extract/pdf/index.ts';
import { createImageOcr, imageOcrOptionsFromEnv, type ImageOcr } from './extract/image/index.ts';
import {
  createSearchChain,
  ENGINE_NAMES,
  MemorySearchCache,
  readSearchSettings,
  RedisSearchCache,
  type BrowserFetch,
  type SearchChain,
} from './adapters/search/index.ts';
import { browserPoolOptionsFromEnv, createBrowserPool, isBrowserAvailable, type BrowserPool } from './browser/index.ts';
import type { OutboundClient } from './outbound/types.ts';

export interface Capabilities {
  pdf(): PdfExtractor;
  ocr(): ImageOcr;
  search(): SearchChain;
  /** The shared headless browser pool, or null when no Chromium is installed. */
  browser(): Promise<BrowserPool | null>;
  /** Starts what the first request should not wait for (OCR engines). */
  warm(): Promise<void>;
  close(): Promise<void>;
}

function positive(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new ConfigError(`${name} must be a positive whole number (got "${raw}").`);
  return Number(raw);
}

export async function createCapabilities(
  config: Config,
  deps: { outbound: OutboundClient; redis?: Redis; logger?: FastifyBaseLogger },
): Promise<Capabilities> {
  const { env } = config;
  // Settings are read now, so a typo stops the start instead of failing the first request.
  const pdfOptions = {
    threads: positive(env, 'PDF_THREADS'),
    timeoutMs: positive(env, 'PDF_TIMEOUT_MS'),
    maxHeapMb: positive(env, 'PDF_MAX_HEAP_MB'),
    maxMemoryMb: positive(env, 'PDF_MAX_MEMORY_MB'),
  };
  if (pdfOptions.maxHeapMb !== undefined && pdfOptions.maxHeapMb < MIN_PDF_HEAP_MB) {
    throw new ConfigError(`PDF_MAX_HEAP_MB must be at least ${MIN_PDF_HEAP_MB} (got ${pdfOptions.maxHeapMb}): a smaller heap cannot start a PDF thread.`);
  }
  if (pdfOptions.maxMemoryMb !== undefined && (pdfOptions.maxMemoryMb < MIN_PDF_MEMORY_MB || pdfOptions.maxMemoryMb > 2048)) {
    throw new ConfigError(`PDF_MAX_MEMORY_MB must be between ${MIN_PDF_MEMORY_MB} and 2048 (got ${pdfOptions.maxMemoryMb}): the PDF engine's memory ceiling.`);
  }
  const ocrOptions = settings(() => imageOcrOptionsFromEnv(env));
  const browserOptions = settings(() => browserPoolOptionsFromEnv(env));

  const listed = (env.SEARCH_ENGINES ?? '').trim();
  const wantsGoogle = listed === '' || /(^|,)\s*google\s*(,|$)/i.test(listed);
  const hasBrowser = wantsGoogle ? await isBrowserAvailable(browserOptions.executablePath) : false;
  const searchSettings = settings(() => readSearchSettings(env, { hasBrowser }));

  let pdf: PdfExtractor | undefined;
  let ocr: ImageOcr | undefined;
  let browser: Promise<BrowserPool | null> | undefined;

  const getBrowser = () =>
    (browser ??= isBrowserAvailable(browserOptions.executablePath).then((available) => (available ? createBrowserPool(browserOptions) : null)));

  const browserFetch: BrowserFetch = async (request) => {
    const pool = await getBrowser();
    if (!pool) throw new Error('No headless browser is available.');
    const page = await pool.fetchPage({ url: request.url, headers: request.headers });
    return { status: page.status, url: page.url, headers: page.headers, body: page.body };
  };

  const baseUrls = Object.fromEntries(
    ENGINE_NAMES.flatMap((engine) => {
      const url = env[`UPSTREAM_${engine.toUpperCase()}_URL`]?.trim();
      return url ? [[engine, url]] : [];
    }),
  );
  const search = settings(() =>
    createSearchChain({
      engines: searchSettings.engines,
      fetch: deps.outbound,
      baseUrls,
      timeoutMs: positive(env, 'SEARCH_TIMEOUT_MS') ?? 15_000,
      cacheTtlSeconds: searchSettings.cacheTtlSeconds,
      cache: searchSettings.cacheTtlSeconds > 0 ? (deps.redis ? new RedisSearchCache(deps.redis, { prefix: config.redisPrefix }) : new MemorySearchCache()) : undefined,
      browserFetch: hasBrowser ? browserFetch : undefined,
      logger: deps.logger,
    }),
  );

  return {
    pdf: () => (pdf ??= createPdfExtractor(pdfOptions)),
    ocr: () => (ocr ??= createImageOcr(ocrOptions)),
    search: () => search,
    browser: getBrowser,
    async warm() {
      await (ocr ??= createImageOcr(ocrOptions)).warm();
    },
    async close() {
      await Promise.all([pdf?.close(), ocr?.close(), browser?.then((b) => b?.close())]);
    },
  };
}

/** Runs a module's settings reader, turning its complaint into a start-up configuration error. */
function settings<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}
