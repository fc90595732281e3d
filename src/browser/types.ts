/**
 * The contract of the headless-browser pool: what its caller, the upstream runtime, asks for and
 * gets back for adapters loaded `via: 'browser'` (search engines that only answer
 * JavaScript-capable clients, `/v1/web` with `bypass_captcha`).
 * Failures are `OutboundError`s with the same codes as the plain outbound client.
 */
import type { LookupFunction } from '../outbound/resolve.ts';
import type { OutboundRequest } from '../outbound/types.ts';
import type { CaptchaSolverFunction } from './challenges.ts';
import type { PageAction, ScreenshotOptions } from './steps.ts';
import type { TenantLeases } from '../core/fair-limiter.ts';
import type { BrowserSandboxMode } from './sandbox.ts';

export interface BrowserPoolOptions {
  /** The Chromium binary (CHROMIUM_PATH). Never downloaded: the system package provides it. */
  executablePath: string;
  /** Chromium processes to run at most. Default 1. */
  maxBrowsers?: number;
  /** Pages rendered at once per process (BROWSER_MAX_PAGES); more requests wait. Default 11. */
  maxPagesPerBrowser?: number;
  /** Per-request deadline when the request sets none (BROWSER_TIMEOUT_MS). */
  navigationTimeoutMs: number;
  /** Hosts exempted from the public-address rule (OUTBOUND_ALLOW_HOSTS): `host` on every port, `host:port` on that port. */
  allowHosts?: readonly string[];
  /** Egress proxy for all page traffic (PROXY_URL), e.g. http://user:pass@proxy:3128. Default: direct. */
  proxyUrl?: string;
  /** Username template for `proxyCountry` (PROXY_COUNTRY_USERNAME). Default `{username}-country-{country}`. */
  proxyCountryUsername?: string;
  /** Replaces `dns.lookup` in the guard proxy (tests map names to chosen addresses). */
  lookup?: LookupFunction;
  /** Cap on bytes one page may pull from the network, subresources included. Default 32 MiB. */
  maxTransferBytes?: number;
  /**
   * Cap on the bytes one page's requests deliver once decoded (after Content-Encoding), what a
   * gzip bomb inflates to. Default 32 MiB.
   */
  maxDecodedBytes?: number;
  /**
   * A page's renderer is killed when its resident memory passes this many MB, and the request
   * fails with `too_large` (BROWSER_PAGE_MEMORY_MB). Half of it is the page's JavaScript heap. Default 640.
   */
  pageMemoryMb?: number;
  /** Shut an idle browser down after this long; the next request relaunches it. Default 5 min, 0 never. */
  idleTimeoutMs?: number;
  /** Parent folder of the per-browser temporary profiles. Default: the OS temporary folder. */
  userDataRoot?: string;
  /** Deadline for starting Chromium. Default 30 s. */
  launchTimeoutMs?: number;
  /**
   * Pages one user may render at once (BROWSER_USER_CONCURRENCY); the user's further requests wait
   * in the user's own queue, and waiting users are served in turn. Default: half the page slots.
   */
  userConcurrency?: number;
  /** Shared per-user leases, so the bound holds across replicas (scaled mode). */
  leases?: TenantLeases;
  /**
   * Chromium's sandbox (BROWSER_SANDBOX, sandbox.ts): `auto` (default) sandboxed where the
   * machine allows it, else without and said so; `on` sandboxed or not at all; `off` never
   * sandboxed. The pool refuses to start as root unless it is `off`.
   */
  sandbox?: BrowserSandboxMode;
}

/** How a page is rendered, beyond what a plain request says. */
export interface RenderOptions {
  /** A CSS selector to wait for after the load event, e.g. the results container. */
  waitFor?: string;
  /**
   * Wait while the page is an interstitial challenge (a page that checks the browser and reloads
   * itself, "Just a moment…"), up to the deadline less a second kept for serialising the page.
   */
  waitForChallenges?: boolean;
  /**
   * Solves a captcha widget (reCAPTCHA v2/v3, hCaptcha, Turnstile) found on the loaded page; the
   * token is injected and the form submitted. A rejection fails the request with
   * `CaptchaUnsolvedError`. Without it a widget is left as it is.
   */
  solveCaptcha?: CaptchaSolverFunction;
  /** The context's locale (navigator.language, Accept-Language). Default `en-US`. */
  locale?: string;
  /** The window size. Default 1366×768, the most common desktop size. */
  viewport?: { width: number; height: number };
  /**
   * A caller's condition after the challenges: a selector to become visible, or milliseconds to
   * pause (steps.ts). A selector that never shows fails the render with `RenderStepError`.
   */
  waitForCondition?: string | number;
  /** A caller's clicks, typing, key presses, scrolls and waits, run in order (steps.ts). */
  actions?: readonly PageAction[];
  /** Take a screenshot once the page is ready; images and fonts are then loaded, not refused. */
  screenshot?: ScreenshotOptions;
}

/**
 * A page request: the outbound client's request fields (one fetch contract for plain HTTP and the
 * browser), plus how to render. A page is always loaded with GET. `timeoutMs` counts queueing too;
 * `maxBytes` caps the rendered HTML (default: the pool's `maxTransferBytes`); `checkUrl` sees the
 * main-frame URL and every main-frame navigation and redirect hop (what it throws becomes
 * `blocked_host`); `signal` stops the render and closes the page (the client went away).
 */
export interface BrowserRequest extends Pick<OutboundRequest, 'headers' | 'timeoutMs' | 'proxyCountry' | 'checkUrl' | 'signal'> {
  /** An http(s) URL. */
  url: string;
  /**
   * Called at the guard proxy with the host of EVERY request the page makes (documents,
   * subresources, fetch/XHR, WebSockets, workers), before it is resolved; throwing refuses that
   * request (`blocked_host`, and the whole page when it is the main document).
   */
  checkHost?: (hostname: string) => void;
  maxBytes?: number;
  render?: RenderOptions;
  /** Whose render it is (the user's id), for the per-user bound; unset: the system's. */
  tenant?: string;
}

export interface FetchPageResult {
  /** The URL of the rendered document, after redirects and script navigations. */
  url: string;
  /** Status of the main document response. */
  status: number;
  /**
   * Headers of the main document response, names in lower case, without the transfer headers
   * (Connection, Keep-Alive, Transfer-Encoding, Content-Length, Content-Encoding) since `body`
   * is the serialised DOM, not the bytes that were sent.
   */
  headers: Record<string, string>;
  /** The rendered DOM serialised as HTML (`page.content()`). */
  body: string;
  /** `host:port` targets the guard refused while the page loaded (subresources included). */
  refused: string[];
}

export interface BrowserPoolStats {
  /** Chromium processes started so far (relaunches after crashes or idling included). */
  launches: number;
  /** Browsers currently running. */
  running: number;
  /** Pages being rendered now. */
  active: number;
  /** Requests waiting for a free page slot. */
  queued: number;
  /** Pages one user may render at once. */
  userBound?: number;
  /** Requests, since the start, that waited while a slot was free because their user was at its bound. */
  userWaits?: number;
  /** The most pages one user has rendered at once, since the start. */
  userPeak?: number;
  /** Targets refused by the guard, all requests together. */
  refusals: number;
  /** Resident memory of the running browsers' process trees, in bytes (0 where /proc is not there). */
  memoryBytes: number;
  /** Renderers killed for passing `pageMemoryMb`, since the pool started. */
  memoryKills: number;
}

export interface BrowserPool {
  fetchPage(request: BrowserRequest): Promise<FetchPageResult>;
  stats(): BrowserPoolStats;
  /** Stops the browsers; queued and running requests fail. */
  close(): Promise<void>;
}
