/**
 * The shared headless-browser pool. Chromium processes are started lazily, reused across
 * requests (one incognito context per request, closed after), relaunched after a crash and shut
 * down when idle. A bounded number of pages render at once, and one user's at most
 * `userConcurrency` of them; further requests wait in their user's line, the users served in
 * turn (core/fair-limiter.ts), and every request has one deadline covering the wait, the launch
 * and the rendering.
 */
import { OutboundError } from '../outbound/types.ts';
import { assertProxyCountry, DEFAULT_PROXY_COUNTRY_USERNAME, parseProxyUrl, proxyUrlForCountry } from '../outbound/proxy.ts';
import { parseHttpUrl } from '../outbound/url-policy.ts';
import { invokeCheckHost, invokeCheckUrl } from './failures.ts';
import { raceAbort } from '../core/abort.ts';
import { launchBrowser, type LaunchedBrowser } from './launch.ts';
import { browserStatus } from './availability.ts';
import { currentUid, rootRefusal, type BrowserSandboxMode } from './sandbox.ts';
import type { MemoryWatchOptions } from './memory.ts';
import { defaultPerTenant, FairLimiter, SYSTEM_TENANT } from '../core/fair-limiter.ts';
import { BrowserGoneError, renderPage, type RenderJob } from './render.ts';
import type { BrowserPool, BrowserPoolOptions, BrowserPoolStats, BrowserRequest, FetchPageResult } from './types.ts';

export const POOL_DEFAULTS = {
  maxBrowsers: 1,
  // A per_page=100 search renders up to 11 upstream pages at once (a window of 100 results that
  // starts inside an upstream page spans 11): fewer slots would run them in waves.
  maxPagesPerBrowser: 11,
  maxTransferBytes: 32 * 1024 * 1024,
  // Bytes as the page's documents and scripts get them, after Content-Encoding: what a gzip bomb
  // inflates to, where the transfer cap only sees the compressed wire.
  maxDecodedBytes: 32 * 1024 * 1024,
  // A renderer is killed past this resident size (memory.ts). Heavy real pages stay below it;
  // a bomb passes it within seconds, and the watchdog's reading interval bounds the overshoot.
  pageMemoryMb: 640,
  idleTimeoutMs: 5 * 60_000,
  sandbox: 'auto' as BrowserSandboxMode,
} as const;

/** How often a browser's process tree is read while pages render. */
const MEMORY_CHECK_INTERVAL_MS = 100;

export function createBrowserPool(options: BrowserPoolOptions): BrowserPool {
  return new Pool(options);
}

class Pool implements BrowserPool {
  readonly #options: BrowserPoolOptions;
  readonly #slots: BrowserSlot[];
  readonly #limiter: FairLimiter;
  readonly #inFlight = new Set<AbortController>();
  readonly #maxTransferBytes: number;
  readonly #maxDecodedBytes: number;
  readonly #pageMemoryBytes: number;
  readonly #proxyUrl: URL | undefined;
  #refusals = 0;
  #closed = false;

  constructor(options: BrowserPoolOptions) {
    // As root Chromium runs only without its sandbox: the operator must have said so.
    const refusal = rootRefusal(options.sandbox ?? POOL_DEFAULTS.sandbox, currentUid());
    if (refusal !== undefined) throw new Error(`The browser pool does not start: ${refusal}`);
    this.#options = options;
    const maxBrowsers = positive(options.maxBrowsers ?? POOL_DEFAULTS.maxBrowsers, 'maxBrowsers');
    const maxPages = positive(options.maxPagesPerBrowser ?? POOL_DEFAULTS.maxPagesPerBrowser, 'maxPagesPerBrowser');
    positive(options.navigationTimeoutMs, 'navigationTimeoutMs');
    this.#maxTransferBytes = positive(options.maxTransferBytes ?? POOL_DEFAULTS.maxTransferBytes, 'maxTransferBytes');
    this.#maxDecodedBytes = positive(options.maxDecodedBytes ?? POOL_DEFAULTS.maxDecodedBytes, 'maxDecodedBytes');
    this.#pageMemoryBytes = positive(options.pageMemoryMb ?? POOL_DEFAULTS.pageMemoryMb, 'pageMemoryMb') * 1024 * 1024;
    this.#proxyUrl = options.proxyUrl ? parseProxyUrl(options.proxyUrl) : undefined;
    const slots = maxBrowsers * maxPages;
    // One user's pages that never load must not hold every slot: past its bound a user's requests
    // wait in its own queue, inside their deadline, and the waiting users are served in turn.
    const perUser = positive(options.userConcurrency ?? defaultPerTenant(slots), 'userConcurrency');
    this.#limiter = new FairLimiter({ capacity: slots, perTenant: perUser, name: 'browser', leases: options.leases });
    const memory = { rendererLimitBytes: this.#pageMemoryBytes, intervalMs: MEMORY_CHECK_INTERVAL_MS };
    this.#slots = Array.from({ length: maxBrowsers }, () => new BrowserSlot(options, memory));
  }

  async fetchPage(request: BrowserRequest): Promise<FetchPageResult> {
    const url = parseHttpUrl(request.url);
    if (request.proxyCountry !== undefined) assertProxyCountry(request.proxyCountry);
    invokeCheckUrl(request.checkUrl, url);
    invokeCheckHost(request.checkHost, url);
    if (this.#closed) throw new OutboundError('network', 'The browser pool is closed', url.href);

    const timeoutMs = request.timeoutMs ?? this.#options.navigationTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    const controller = new AbortController();
    const timer = setTimeout(() => {
      controller.abort(new OutboundError('timeout', `The page did not render within ${timeoutMs} ms`, url.href));
    }, timeoutMs);
    // The caller going away (its client hung up) stops the render like the deadline does.
    const onCallerAbort = () => controller.abort(request.signal?.reason);
    if (request.signal?.aborted) onCallerAbort();
    else request.signal?.addEventListener('abort', onCallerAbort, { once: true });
    this.#inFlight.add(controller);
    try {
      const release = await this.#limiter.acquire(request.tenant ?? SYSTEM_TENANT, { signal: controller.signal });
      const slot = this.#slots.reduce((best, candidate) => (candidate.active < best.active ? candidate : best));
      slot.enter();
      const job: RenderJob = {
        url,
        headers: request.headers ?? {},
        render: request.render ?? {},
        deadline,
        maxBytes: request.maxBytes ?? this.#maxTransferBytes,
        checkUrl: request.checkUrl,
        checkHost: request.checkHost,
        proxyCountry: request.proxyCountry,
        signal: controller.signal,
      };
      try {
        try {
          return await this.#render(slot, job);
        } catch (error) {
          if (!(error instanceof BrowserGoneError)) throw error;
          // The browser died between requests: one retry on a fresh one, nothing was sent yet.
          return await this.#render(slot, job);
        }
      } catch (error) {
        if (error instanceof BrowserGoneError) {
          throw new OutboundError('network', 'The browser closed before the page could be opened', url.href, { cause: error });
        }
        throw error;
      } finally {
        slot.leave();
        release();
      }
    } finally {
      clearTimeout(timer);
      request.signal?.removeEventListener('abort', onCallerAbort);
      this.#inFlight.delete(controller);
    }
  }

  async #render(slot: BrowserSlot, job: RenderJob): Promise<FetchPageResult> {
    const launched = await raceAbort(slot.browser(), job.signal).catch((error: unknown) => {
      if (error instanceof OutboundError) throw error;
      throw new OutboundError('network', `Chromium could not be started: ${firstLine(error)}`, job.url.href, { cause: error });
    });
    const endWatch = launched.memory?.watchPage();
    try {
      return await renderPage(launched.browser, job, {
        allowHosts: this.#options.allowHosts ?? [],
        lookup: this.#options.lookup,
        transferLimitBytes: this.#maxTransferBytes,
        decodedLimitBytes: this.#maxDecodedBytes,
        memory: launched.memory,
        pageMemoryBytes: this.#pageMemoryBytes,
        upstreamProxy: this.#upstreamProxy(job.proxyCountry),
        onRefusals: (count) => {
          this.#refusals += count;
        },
      });
    } catch (error) {
      if (error instanceof BrowserGoneError) slot.discard(launched);
      throw error;
    } finally {
      endWatch?.();
    }
  }

  #upstreamProxy(country: string | undefined): URL | undefined {
    if (this.#proxyUrl === undefined || country === undefined) return this.#proxyUrl;
    return proxyUrlForCountry(this.#proxyUrl, this.#options.proxyCountryUsername ?? DEFAULT_PROXY_COUNTRY_USERNAME, country);
  }

  stats(): BrowserPoolStats {
    return {
      launches: this.#slots.reduce((sum, slot) => sum + slot.launches, 0),
      running: this.#slots.filter((slot) => slot.running).length,
      active: this.#slots.reduce((sum, slot) => sum + slot.active, 0),
      queued: this.#limiter.queued,
      userBound: this.#limiter.perTenant,
      userWaits: this.#limiter.stats().boundWaits,
      userPeak: this.#limiter.stats().peakTenantRunning,
      refusals: this.#refusals,
      memoryBytes: this.#slots.reduce((sum, slot) => sum + slot.memoryBytes(), 0),
      memoryKills: this.#slots.reduce((sum, slot) => sum + slot.memoryKills, 0),
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    const reason = new OutboundError('network', 'The browser pool was closed', '');
    this.#limiter.rejectAll(reason);
    for (const controller of this.#inFlight) controller.abort(reason);
    await Promise.all(this.#slots.map((slot) => slot.close()));
  }
}

/** One Chromium process, launched on first use, dropped when it disconnects or idles. */
class BrowserSlot {
  active = 0;
  launches = 0;

  readonly #options: BrowserPoolOptions;
  readonly #memory: MemoryWatchOptions;
  /** Renderers killed for their memory by the browsers that are gone. */
  #pastKills = 0;
  /** Every process not yet fully gone, so `close()` can wait for their profiles to be deleted. */
  readonly #alive = new Set<LaunchedBrowser>();
  #launching: Promise<LaunchedBrowser> | undefined;
  #current: LaunchedBrowser | undefined;
  #idleTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: BrowserPoolOptions, memory: MemoryWatchOptions) {
    this.#options = options;
    this.#memory = memory;
  }

  /** Resident memory of the running browser's process tree (0 when none runs, or /proc is not there). */
  memoryBytes(): number {
    // Fresh for a scrape (its gauges ask several times in a row), never a reading from mid-page.
    return [...this.#alive].reduce((sum, launched) => sum + (launched.memory?.totalBytes(250) ?? 0), 0);
  }

  /** Renderers killed for their memory, all browsers of this slot together. */
  get memoryKills(): number {
    return this.#pastKills + [...this.#alive].reduce((sum, launched) => sum + (launched.memory?.kills ?? 0), 0);
  }

  get running(): boolean {
    return this.#current?.browser.isConnected() === true;
  }

  enter(): void {
    this.active += 1;
    clearTimeout(this.#idleTimer);
  }

  leave(): void {
    this.active -= 1;
    const idleMs = this.#options.idleTimeoutMs ?? POOL_DEFAULTS.idleTimeoutMs;
    if (this.active === 0 && idleMs > 0 && !this.#closed) {
      this.#idleTimer = setTimeout(() => {
        if (this.active === 0) void this.#retire();
      }, idleMs);
      this.#idleTimer.unref();
    }
  }

  /** The running browser, launching one when there is none or the previous one died. */
  browser(): Promise<LaunchedBrowser> {
    if (this.#closed) return Promise.reject(new Error('The browser pool was closed'));
    if (this.#current !== undefined && !this.#current.browser.isConnected()) this.#forget(this.#current);
    this.#launching ??= this.#launch();
    return this.#launching;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#idleTimer);
    await this.#launching?.catch(() => undefined);
    await Promise.all([...this.#alive].map((launched) => launched.close()));
  }

  #launch(): Promise<LaunchedBrowser> {
    const launching = this.#start().then((launched) => {
      this.launches += 1;
      this.#current = launched;
      this.#alive.add(launched);
      launched.browser.once('disconnected', () => this.#forget(launched));
      void launched.exited.then(() => {
        this.#alive.delete(launched);
        this.#pastKills += launched.memory?.kills ?? 0;
      });
      if (this.#closed) void launched.close();
      return launched;
    });
    launching.catch(() => {
      if (this.#launching === launching) this.#launching = undefined;
    });
    return launching;
  }

  /** Chromium as the machine and BROWSER_SANDBOX allow: with its sandbox, without it, or not at all. */
  async #start(): Promise<LaunchedBrowser> {
    const status = await browserStatus(this.#options.executablePath, this.#options.sandbox ?? POOL_DEFAULTS.sandbox);
    if (!status.available) throw new Error(status.reason);
    return launchBrowser({
      executablePath: this.#options.executablePath,
      sandboxed: status.sandboxed,
      userDataRoot: this.#options.userDataRoot,
      timeoutMs: this.#options.launchTimeoutMs,
      memory: this.#memory,
    });
  }

  /** Drops a browser that stopped answering and makes sure its process is gone. */
  discard(launched: LaunchedBrowser): void {
    this.#forget(launched);
    void launched.close();
  }

  #forget(launched: LaunchedBrowser): void {
    if (this.#current !== launched) return;
    this.#current = undefined;
    this.#launching = undefined;
  }

  async #retire(): Promise<void> {
    const launched = this.#current;
    if (launched === undefined) return;
    this.#forget(launched);
    await launched.close();
  }
}

function positive(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive whole number, got ${value}`);
  return value;
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0];
}
