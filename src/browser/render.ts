/**
 * Rendering one page in a running browser: a fresh incognito context whose network goes through
 * its own guard proxy, request interception that refuses what the page must not load, and the
 * mapping of every failure to an `OutboundError`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, BrowserContext, CDPSession, Page, Response } from 'playwright-core';
import type { LookupFunction } from '../outbound/resolve.ts';
import { OutboundError } from '../outbound/types.ts';
import { parseHttpUrl } from '../outbound/url-policy.ts';
import { browserFailure, guardFailure, invokeCheckUrl } from './failures.ts';
import { raceAbort } from '../core/abort.ts';
import { GUARD_REFUSAL_HEADER, startGuardProxy, type GuardProxy } from './guard-proxy.ts';
import type { MemoryWatch } from './memory.ts';
import type { FetchPageResult, RenderOptions } from './types.ts';
import { CaptchaUnsolvedError, solveCaptcha, waitForInterstitials } from './challenges.ts';
import { RenderStepError, runActions, takeScreenshot, waitForCondition } from './steps.ts';

/**
 * The browser refused to open a context: it died (crash, kill) and the disconnect is not known
 * yet. Nothing reached the network, so the pool may retry on a fresh browser.
 */
export class BrowserGoneError extends Error {
  constructor(cause: unknown) {
    super('The browser is gone', { cause });
    this.name = 'BrowserGoneError';
  }
}

export interface RenderJob {
  url: URL;
  headers: Record<string, string>;
  render: RenderOptions;
  /** Epoch milliseconds after which nothing more is waited for. */
  deadline: number;
  maxBytes: number;
  checkUrl?: (url: URL) => void;
  /** The caller's host rule, run by the guard on every request of the page. */
  checkHost?: (hostname: string) => void;
  proxyCountry?: string;
  /** Aborted with an `OutboundError` when the request must stop (deadline, pool closing). */
  signal: AbortSignal;
}

export interface RenderSettings {
  allowHosts: readonly string[];
  lookup?: LookupFunction;
  transferLimitBytes: number;
  /** Cap on the bytes the page's requests deliver once decoded (a gzip bomb's inflated size). */
  decodedLimitBytes: number;
  /** The browser's renderer watchdog, which tells a crash it caused; undefined where it does not run. */
  memory?: Pick<MemoryWatch, 'killedSince'>;
  /** The renderer limit the watchdog enforces, for the message. */
  pageMemoryBytes: number;
  /** Egress proxy for this page's traffic, credentials included. */
  upstreamProxy?: URL;
  /** Called once the page is done with how many targets its guard refused. */
  onRefusals: (count: number) => void;
}

/** Heavy resources that a text extraction never needs; refusing them saves most of the bytes. */
const BLOCKED_RESOURCE_TYPES = ['Image', 'Media', 'Font'] as const;
const INTERCEPTED_RESOURCE_TYPES = ['Document', ...BLOCKED_RESOURCE_TYPES] as const;
const isBlockedResource = (type: string): boolean => (BLOCKED_RESOURCE_TYPES as readonly string[]).includes(type);

export async function renderPage(browser: Browser, job: RenderJob, settings: RenderSettings): Promise<FetchPageResult> {
  if (job.signal.aborted) throw job.signal.reason;
  // Whatever stops the request first (deadline, refused navigation, transfer cap) lands here.
  const stop = new AbortController();
  const fail = (reason: unknown) => {
    if (!stop.signal.aborted) stop.abort(reason);
  };
  const onOuterAbort = () => fail(job.signal.reason);
  job.signal.addEventListener('abort', onOuterAbort, { once: true });

  const guard = await startGuardProxy({
    allowHosts: settings.allowHosts,
    lookup: settings.lookup,
    transferLimitBytes: settings.transferLimitBytes,
    upstreamProxy: settings.upstreamProxy,
    checkHost: job.checkHost,
    onTransferLimit: () => {
      fail(new OutboundError('too_large', `The page pulled more than ${settings.transferLimitBytes} bytes`, job.url.href));
    },
  });
  const session = new PageSession(browser, job, guard, fail, stop.signal, settings);
  const work = session.run();
  work.catch(() => undefined); // settles after the race below when stopped early
  try {
    return await raceAbort(work, stop.signal);
  } catch (error) {
    // A renderer that died (killed for its memory, or crashed) fails the page, whichever
    // of the crash event and the navigation's rejection came first.
    if (session.crashed !== undefined) throw session.crashed;
    if (isCrash(error)) throw session.crashFailure();
    if (stop.signal.aborted && error === stop.signal.reason) throw error;
    if (error instanceof BrowserGoneError || error instanceof CaptchaUnsolvedError || error instanceof RenderStepError) throw error;
    throw browserFailure(error, job.url.href, session.mainUrl, guard);
  } finally {
    job.signal.removeEventListener('abort', onOuterAbort);
    fail(new OutboundError('network', 'The page session has ended', job.url.href));
    await session.dispose();
    settings.onRefusals(guard.refusedCount);
    await guard.close();
  }
}

class PageSession {
  /** The main-frame URL being loaded or shown: the initial URL, then each redirect/navigation. */
  mainUrl: string;

  readonly #browser: Browser;
  readonly #job: RenderJob;
  readonly #guard: GuardProxy;
  readonly #fail: (reason: unknown) => void;
  readonly #stopped: AbortSignal;
  readonly #checked = new Set<string>();
  readonly #settings: RenderSettings;
  readonly #started = Date.now();
  #context: BrowserContext | undefined;
  #decodedBytes = 0;
  /** Set when the page's renderer died. */
  crashed: OutboundError | undefined;

  constructor(browser: Browser, job: RenderJob, guard: GuardProxy, fail: (reason: unknown) => void, stopped: AbortSignal, settings: RenderSettings) {
    this.#browser = browser;
    this.#job = job;
    this.#guard = guard;
    this.#fail = fail;
    this.#stopped = stopped;
    this.#settings = settings;
    this.mainUrl = job.url.href;
    this.#checked.add(withoutFragment(job.url)); // the pool checked it before queueing
  }

  async run(): Promise<FetchPageResult> {
    const job = this.#job;
    const context = await this.#browser
      .newContext({
        proxy: { server: this.#guard.url, bypass: '<-loopback>' },
        ...browserHeaders(job.headers, this.#browser.version()),
        locale: job.render.locale ?? DEFAULT_LOCALE,
        viewport: job.render.viewport ?? DEFAULT_VIEWPORT,
        acceptDownloads: false,
        serviceWorkers: 'block', // a worker's fetches would escape the interception below
        ignoreHTTPSErrors: false,
      })
      .catch((error: unknown) => {
        const closed = error instanceof Error && /has been closed|Target closed/i.test(error.message);
        throw closed || !this.#browser.isConnected() ? new BrowserGoneError(error) : error;
      });
    this.#context = context;
    if (this.#stopped.aborted) {
      await context.close().catch(() => undefined);
      throw this.#stopped.reason;
    }
    const page = await context.newPage();
    page.on('crash', () => {
      this.crashed ??= this.crashFailure();
      this.#fail(this.crashed);
    });
    context.on('page', (popup) => {
      if (popup !== page) void popup.close().catch(() => undefined);
    });
    await this.#intercept(page, context);
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) this.#onMainFrameCommitted(frame.url());
    });
    // Scripts and meta refreshes may replace the document after the first one: keep the latest.
    let documentResponse: Response | null = null;
    page.on('response', (response) => {
      if (response.frame() === page.mainFrame() && response.request().isNavigationRequest()) documentResponse = response;
    });

    const firstResponse = await page.goto(job.url.href, { waitUntil: 'load', timeout: remaining(job.deadline) });
    if (firstResponse === null) throw new OutboundError('network', 'The navigation produced no document', job.url.href);
    this.#assertNotRefused(firstResponse);
    if (job.render.waitForChallenges) {
      // Keep a second of the deadline for serialising whatever the challenge leaves.
      await waitForInterstitials(page, Math.max(0, remaining(job.deadline) - CHALLENGE_RESERVE_MS), this.#stopped);
    }
    if (job.render.solveCaptcha !== undefined) {
      await solveCaptcha(page, job.render.solveCaptcha, job.deadline, this.#stopped);
    }
    if (job.render.waitFor !== undefined) {
      await page.waitForSelector(job.render.waitFor, { state: 'attached', timeout: remaining(job.deadline) });
    }
    if (job.render.waitForCondition !== undefined) await waitForCondition(page, job.render.waitForCondition, job.deadline, this.#stopped);
    if (job.render.actions !== undefined && job.render.actions.length > 0) await runActions(page, job.render.actions, job.deadline, this.#stopped);
    // Pages that finish rendering (or navigate) from timers after `load`: give the network a
    // moment to go quiet (500 ms without requests), bounded so a chatty page is not waited on.
    await page.waitForLoadState('networkidle', { timeout: Math.min(NETWORK_QUIET_CAP_MS, remaining(job.deadline)) }).catch(() => undefined);
    const body = await settledContent(page, job.deadline, job.maxBytes);
    if (job.render.screenshot !== undefined) await takeScreenshot(page, job.render.screenshot, job.deadline);
    const response: Response = documentResponse ?? firstResponse;
    this.#assertNotRefused(response);
    const headers = response.headers();
    const finalUrl = page.url();
    if (!isHttpUrl(finalUrl)) {
      // A later script navigation failed and left Chromium's error page in the main frame.
      throw guardFailure(this.#guard, this.mainUrl) ?? new OutboundError('network', 'The page navigated to an error page', this.mainUrl);
    }
    const size = Buffer.byteLength(body, 'utf8');
    if (size > job.maxBytes) {
      throw new OutboundError('too_large', `The rendered page is ${size} bytes, more than ${job.maxBytes}`, finalUrl);
    }
    return {
      url: finalUrl,
      status: response.status(),
      headers: documentHeaders(headers),
      body,
      refused: this.#guard.log.filter((entry) => entry.code === 'blocked_address' || entry.code === 'blocked_host').map((entry) => `${entry.hostname}:${entry.port}`),
    };
  }

  /** Over plain http the guard's refusal arrives as a response; it must not pass for the page. */
  #assertNotRefused(response: Response): void {
    if (response.headers()[GUARD_REFUSAL_HEADER] === undefined) return;
    const refusal = guardFailure(this.#guard, response.url());
    if (refusal !== undefined) throw refusal;
  }

  /** Why the renderer died: the watchdog killed it for its memory, or it crashed on its own. */
  crashFailure(): OutboundError {
    if (this.#settings.memory?.killedSince(this.#started)) {
      const mb = Math.round(this.#settings.pageMemoryBytes / 1024 / 1024);
      return new OutboundError('too_large', `The page used more than ${mb} MB of memory`, this.mainUrl);
    }
    return new OutboundError('network', "The page's renderer crashed", this.mainUrl);
  }

  async dispose(): Promise<void> {
    await this.#context?.close().catch(() => undefined);
  }

  /**
   * Pauses every document and heavy resource before it is requested. Unlike route handlers,
   * the protocol-level interception also pauses each redirect hop, so a refused hop is never
   * requested at all.
   */
  async #intercept(page: Page, context: BrowserContext): Promise<void> {
    const cdp = await context.newCDPSession(page);
    const { frameTree } = await cdp.send('Page.getFrameTree');
    const mainFrameId = frameTree.frame.id;
    cdp.on('Fetch.requestPaused', (event) => {
      const { requestId, resourceType, frameId, request } = event;
      // A screenshot shows the page as a reader sees it, images and fonts included.
      if (isBlockedResource(resourceType) && this.#job.render.screenshot === undefined) {
        settle(cdp, 'Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' });
        return;
      }
      if (resourceType === 'Document' && frameId === mainFrameId) {
        const refusal = this.#checkMainNavigation(request.url);
        if (refusal !== undefined) {
          this.#fail(refusal);
          settle(cdp, 'Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' });
          return;
        }
        this.mainUrl = request.url;
      }
      settle(cdp, 'Fetch.continueRequest', { requestId });
    });
    // Decoded bytes, as the renderer receives them: the transfer cap at the guard counts the
    // compressed wire, so a gzip bomb passes it and only shows here.
    cdp.on('Network.dataReceived', (event) => {
      this.#decodedBytes += event.dataLength;
      if (this.#decodedBytes > this.#settings.decodedLimitBytes) {
        this.#fail(new OutboundError('too_large', `The page's responses decode to more than ${this.#settings.decodedLimitBytes} bytes`, this.mainUrl));
      }
    });
    // No bodies kept for this session: it only counts.
    await cdp.send('Network.enable', { maxTotalBufferSize: 0, maxResourceBufferSize: 0 });
    await cdp.send('Fetch.enable', {
      patterns: INTERCEPTED_RESOURCE_TYPES.map((resourceType) => ({ urlPattern: '*', resourceType, requestStage: 'Request' as const })),
    });
  }

  /** Only http(s) in the main frame, and the caller's `checkUrl` on every new URL. */
  #checkMainNavigation(href: string): unknown {
    try {
      const url = parseHttpUrl(href);
      if (!this.#checked.has(withoutFragment(url))) {
        this.#checked.add(withoutFragment(url));
        invokeCheckUrl(this.#job.checkUrl, url);
      }
      return undefined;
    } catch (error) {
      return error;
    }
  }

  /** Catches main-frame documents that never went through the network (data:, file:, blob:...). */
  #onMainFrameCommitted(href: string): void {
    if (isHttpUrl(href) || href === 'about:blank' || href.startsWith('chrome-error:')) return;
    this.#fail(new OutboundError('invalid_url', `The page navigated to a non-http(s) URL (${href.split(':')[0]}:)`, this.mainUrl));
  }
}

/**
 * Transfer headers describe the bytes between the guard and the browser or the encoded original,
 * not the serialised DOM that is returned, so they are left out.
 */
const TRANSFER_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'content-length', 'content-encoding']);

function documentHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !TRANSFER_HEADERS.has(name)));
}

/** `User-Agent` becomes the context's user agent (navigator.userAgent agrees); the rest are sent as is. */
function browserHeaders(
  headers: Record<string, string>,
  browserVersion: string,
): { userAgent: string; extraHTTPHeaders: Record<string, string> } {
  let userAgent: string | undefined;
  const extraHTTPHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === 'user-agent') userAgent = value;
    else extraHTTPHeaders[name] = value;
  }
  return { userAgent: userAgent ?? desktopUserAgent(browserVersion), extraHTTPHeaders };
}

/** Headless Chromium announces itself as "HeadlessChrome"; present the ordinary desktop string. */
export function desktopUserAgent(browserVersion: string): string {
  const major = browserVersion.split('.')[0] || '0';
  return `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Safari/537.36`;
}

const DEFAULT_LOCALE = 'en-US';
const DEFAULT_VIEWPORT = { width: 1366, height: 768 };
/** Part of the deadline an interstitial wait leaves for the rest of the render. */
const CHALLENGE_RESERVE_MS = 1_000;

/** Longest wait for the network to go quiet after `load`. */
const NETWORK_QUIET_CAP_MS = 2_000;

/**
 * The serialised DOM once the main frame has stopped navigating: a script or meta refresh may
 * replace the document after `load`, and serialising in the middle of that fails.
 */
/** Runs in the page (source text: the service is compiled without the DOM's types). */
const SERIALISED_LENGTH = '(document.documentElement ? document.documentElement.outerHTML.length : 0)';

async function settledContent(page: Page, deadline: number, maxBytes: number): Promise<string> {
  for (;;) {
    try {
      // Measured in the page first: a DOM far over the cap is refused without being carried
      // here. A UTF-16 code unit is at least one UTF-8 byte, so a length over the cap is over it.
      const length = Number(await page.evaluate(SERIALISED_LENGTH));
      if (length > maxBytes) throw new OutboundError('too_large', `The rendered page has ${length} characters, more than ${maxBytes} bytes`, page.url());
      return await page.content();
    } catch (error) {
      const navigating = error instanceof Error && /is navigating|Execution context was destroyed/i.test(error.message);
      if (!navigating || Date.now() >= deadline) throw error;
      await sleep(50); // the new document may not have committed yet
      await page.waitForLoadState('load', { timeout: remaining(deadline) });
    }
  }
}

/** The URL as the network sees it: fragments are never sent, so they do not make a new hop. */
function withoutFragment(url: URL): string {
  return url.hash === '' ? url.href : url.href.slice(0, -url.hash.length);
}

function settle(cdp: CDPSession, method: 'Fetch.continueRequest' | 'Fetch.failRequest', params: object): void {
  // The page may close while a request is paused; the protocol error is expected then.
  void cdp.send(method, params as never).catch(() => undefined);
}

function remaining(deadline: number): number {
  return Math.max(1, deadline - Date.now()); // 0 would mean "no timeout" to Playwright
}

function isCrash(error: unknown): boolean {
  return error instanceof Error && /crashed/i.test(error.message);
}

function isHttpUrl(href: string): boolean {
  return href.startsWith('http://') || href.startsWith('https://');
}
