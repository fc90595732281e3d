/**
 * The contract of the headless-browser pool: what callers (the search chain for engines that only
 * answer JavaScript-capable clients, `/v1/web` with `bypass_captcha`) ask for and get back.
 * Failures are `OutboundError`s with the same codes as the plain outbound client.
 */
import type { LookupFunction } from '../outbound/resolve.ts';

export interface BrowserPoolOptions {
  /** The Chromium binary (CHROMIUM_PATH). Never downloaded: the system package provides it. */
  executablePath: string;
  /** Chromium processes to run at most. Default 1. */
  maxBrowsers?: number;
  /** Pages rendered at once per process (BROWSER_MAX_PAGES); more requests wait. Default 4. */
  maxPagesPerBrowser?: number;
  /** Per-request deadline when the request sets none (BROWSER_TIMEOUT_MS). */
  navigationTimeoutMs: number;
  /** Hostnames or IP literals exempted from the public-address rule (OUTBOUND_ALLOW_HOSTS). */
  allowHosts?: readonly string[];
  /** Egress proxy for all page traffic (PROXY_URL), e.g. http://user:pass@proxy:3128. Default: direct. */
  proxyUrl?: string;
  /** Username template for `proxyCountry` (PROXY_COUNTRY_USERNAME). Default `{username}-country-{country}`. */
  proxyCountryUsername?: string;
  /** Replaces `dns.lookup` in the guard proxy (tests map names to chosen addresses). */
  lookup?: LookupFunction;
  /** Cap on bytes one page may pull from the network, subresources included. Default 32 MiB. */
  maxTransferBytes?: number;
  /** Shut an idle browser down after this long; the next request relaunches it. Default 5 min, 0 never. */
  idleTimeoutMs?: number;
  /** Parent folder of the per-browser temporary profiles. Default: the OS temporary folder. */
  userDataRoot?: string;
  /** Deadline for starting Chromium. Default 30 s. */
  launchTimeoutMs?: number;
}

export interface FetchPageRequest {
  /** An http(s) URL. */
  url: string;
  /** Sent with every request of the page. `User-Agent` replaces the browser's own. */
  headers?: Record<string, string>;
  /** A CSS selector to wait for after the load event, e.g. the results container. */
  waitFor?: string;
  /** Whole-request deadline (queueing included). Default: the pool's `navigationTimeoutMs`. */
  timeoutMs?: number;
  /** Cap on the rendered HTML, in UTF-8 bytes. Default: the pool's `maxTransferBytes`. */
  maxBytes?: number;
  /**
   * Called with the main-frame URL before it is requested, then with every main-frame
   * navigation and redirect hop. Throw to refuse: the request fails with that error
   * (non-`OutboundError`s become `blocked_host`, as with the outbound client).
   */
  checkUrl?: (url: URL) => void;
  /** Route through PROXY_URL with the username rewritten for this country (ignored without it). */
  proxyCountry?: string;
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
  /** Targets refused by the guard, all requests together. */
  refusals: number;
}

export interface BrowserPool {
  fetchPage(request: FetchPageRequest): Promise<FetchPageResult>;
  stats(): BrowserPoolStats;
  /** Stops the browsers; queued and running requests fail. */
  close(): Promise<void>;
}
