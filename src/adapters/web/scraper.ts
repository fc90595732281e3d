/**
 * Generic page scraping behind POST /v1/web (docs/web.md): one page fetched with plain HTTP
 * through the outbound client, or rendered in the shared headless browser (`bypass_captcha`),
 * turned into the contract's `{url, status_code, headers, content}`. Everything read from the
 * page's HTML (extraction rules, selectors, Markdown, text, links) is made by the converter: in
 * the service, a pool of processes off the event loop (converter.ts); this module never parses a
 * page.
 *
 * Both paths apply the blocked-domain rule to every URL they request: the plain client on the
 * first URL and on each redirect hop (`checkUrl`), the browser on every main-frame navigation and,
 * at its guard proxy, on every request the page makes (`checkHost`).
 */
import { OutboundError } from '../../outbound/types.ts';
import { CaptchaUnsolvedError } from '../../browser/challenges.ts';
import { RenderStepError, type PageAction } from '../../browser/steps.ts';
import type { BrowserSource, UpstreamRuntime } from '../kit/runtime.ts';
import type { Adapter, CallContext, CallOutcome, ParseOutcome, UpstreamMethod, UpstreamResponse } from '../kit/types.ts';
import { headerValue } from '../kit/decode.ts';
import type { DomainBlocklist } from './blocked-domains.ts';
import { decodePage } from './charset.ts';
import { isHtmlType, isWebContent } from './content-type.ts';
import type { ConvertOptions, OutputFormat, PageMetadata } from './formats.ts';
import { inlineConverter, type PageConverter } from './converter.ts';
import { forwardableRequestHeaders, returnedResponseHeaders } from './headers.ts';
import { CaptchaSolverError, type CaptchaSolver } from './solver.ts';
import { hasSelectorFilter } from './selectors.ts';
import type { ExtractedObject } from './extract-rules.ts';

/** The page cap: 10 MB of decoded bytes (docs/spec/contract.md §6). */
export const MAX_PAGE_BYTES = 10 * 1024 * 1024;
/** Redirect hops followed at most, each one checked again. */
export const MAX_REDIRECTS = 10;

export interface WebRequest extends ConvertOptions {
  url: string;
  method: UpstreamMethod;
  headers?: Record<string, string>;
  /** A string is sent as is; any other JSON value is sent as JSON. */
  body?: unknown;
  /** Render in the headless browser and get past interstitials and captchas. */
  browser: boolean;
  proxyCountry?: string;
  /** Browser only: a selector to become visible, or milliseconds to pause, before the page is read. */
  waitFor?: string | number;
  /** Browser only: clicks, typing, key presses, scrolls and waits, in order. */
  actions?: readonly PageAction[];
  /** Browser only: a screenshot of the viewport or of the whole page (capped in height). */
  screenshot?: { fullPage: boolean; type: 'png' | 'jpeg' };
  /** Hand a PDF back as `pdf` (plain mode, `text`/`markdown`) for the caller to read, instead of `not_a_page`. */
  pdf?: boolean;
}

export interface WebPage {
  url: string;
  status_code: number;
  headers: Record<string, string>;
  content: string;
  /** With `text` and `markdown` on an HTML page: title, description, language… (formats.ts). */
  metadata?: PageMetadata;
  links?: string[];
  /** With `extract_rules`: what they read, `null` when the page is not HTML. */
  extracted?: ExtractedObject | null;
  /** With `screenshot`: the image, base64. */
  screenshot?: string;
}

/**
 * What became of the request. Only `ok` is a page to answer (and charge); the target's status
 * decides that, as the contract says: 2xx, 404 and 410 are answers, anything else is `status`.
 */
export type WebOutcome =
  | { kind: 'ok'; page: WebPage }
  | { kind: 'status'; status: number }
  | { kind: 'blocked_domain'; url: string }
  | { kind: 'private_address'; url: string }
  | { kind: 'not_a_page'; contentType: string | undefined }
  | { kind: 'too_large' }
  /**
   * The page came, but is too large or complex to turn into `what` (the conversion's time or
   * memory limit): the format, else the links, else the extraction rules, else the selectors.
   */
  | { kind: 'not_converted'; what: Exclude<OutputFormat, 'raw'> | 'links' | 'extract_rules' | 'selectors'; reason: string }
  | { kind: 'unreachable'; reason: string }
  | { kind: 'captcha_unsolved'; reason: string }
  | { kind: 'no_browser' }
  /** A PDF answered where `pdf` was asked for: the document, for the PDF reader. */
  | { kind: 'pdf'; url: string; status: number; headers: Record<string, string>; bytes: Uint8Array }
  /** A caller's browser step (`wait_for`, `actions.N`, `screenshot`) the page did not allow. */
  | { kind: 'step_failed'; step: string; message: string }
  /** Too many pages already wait for a conversion process: the server is overloaded. */
  | { kind: 'busy' };

export interface WebScraperSettings {
  /** Deadline of a plain fetch (WEB_TIMEOUT_MS). */
  timeoutMs: number;
  /** Deadline of a browser render, captcha solving included (WEB_BROWSER_TIMEOUT_MS). */
  browserTimeoutMs: number;
  /** True when PROXY_URL is set, so `proxy_country` has a proxy to rewrite. */
  proxyConfigured: boolean;
}

export interface WebScraperDeps {
  runtime: UpstreamRuntime;
  /** Whether a browser can render (`bypass_captcha`); the render itself goes through the runtime. */
  browser: BrowserSource;
  blocklist: DomainBlocklist;
  /** Undefined when no solver is configured: a captcha then fails the request. */
  solver?: CaptchaSolver;
  /**
   * Where Markdown, text and links are made: the service passes its process pool. Without one,
   * pages are converted on the calling thread (tests and tools), which blocks it meanwhile.
   */
  converter?: PageConverter;
}

export interface WebScraper {
  /** True when the URL's host is a blocked domain (or under one). */
  isBlocked(url: string): boolean;
  /** True when `proxy_country` can be honoured (a proxy is configured). */
  readonly geoAvailable: boolean;
  scrape(request: WebRequest, context: CallContext): Promise<WebOutcome>;
}

/** Target statuses that are an answer about the page (and charged). */
export function isChargeableStatus(status: number): boolean {
  return (status >= 200 && status < 300) || status === 404 || status === 410;
}

/** Thrown by the blocked-domain check; the clients turn it into `blocked_host`. */
class BlockedDomainError extends Error {
  constructor(hostname: string) {
    super(`${hostname} is a blocked domain`);
    this.name = 'BlockedDomainError';
  }
}

/** The plain request: the caller's method and body, their headers minus the unsafe ones. */
export function plainRequestParts(request: Pick<WebRequest, 'headers' | 'body'>): { headers: Record<string, string>; body?: string } {
  const headers = forwardableRequestHeaders(request.headers ?? {});
  if (request.body === undefined || request.body === null) return { headers };
  if (typeof request.body === 'string') return { headers, body: request.body };
  headers['content-type'] ??= 'application/json';
  return { headers, body: JSON.stringify(request.body) };
}

/** What the target answered, before any conversion: a page, or something that is not one. */
export type FetchedPage =
  | { kind: 'page'; url: string; status: number; headers: Record<string, string>; content: string }
  | { kind: 'not_a_page'; contentType: string | undefined; bytes?: Uint8Array; url?: string; status?: number; headers?: Record<string, string> };

/**
 * The target's answer, read: a status that is no answer about the page (anything but 2xx, 404,
 * 410) is the site refusing or failing (`blocked`, with its status); a body that is no web page
 * (a PDF, an image) is said so; a page is decoded as browsers do (plain HTTP) or taken as the
 * browser serialised it.
 */
export function parseFetchedPage(response: UpstreamResponse, via: 'http' | 'browser'): ParseOutcome<FetchedPage> {
  // The runtime adds the status to every outcome but `ok`.
  if (!isChargeableStatus(response.status)) return { kind: 'blocked', reason: `the target answered ${response.status}` };
  const contentType = headerValue(response.headers, 'content-type');
  const bytes = response.bytes ?? Buffer.from(response.body, 'utf8');
  if (!isWebContent(contentType, bytes.subarray(0, 1024))) {
    // A PDF keeps its bytes: /v1/web reads it when a text format was asked for.
    if (isPdf(contentType, response.url, bytes)) return { kind: 'ok', value: { kind: 'not_a_page', contentType, bytes, url: response.url, status: response.status, headers: response.headers } };
    return { kind: 'ok', value: { kind: 'not_a_page', contentType } };
  }
  const content = via === 'browser' ? response.body : decodePage(bytes, contentType).text;
  return { kind: 'ok', value: { kind: 'page', url: response.url, status: response.status, headers: response.headers, content } };
}

/** A PDF by its type, or by a `.pdf` path when the server says nothing useful; its bytes must agree. */
function isPdf(contentType: string | undefined, url: string, bytes: Uint8Array): boolean {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  let path = '';
  try {
    path = new URL(url).pathname.toLowerCase();
  } catch {
    // an unparsable URL is no .pdf
  }
  const declared = type === 'application/pdf' || type === 'application/x-pdf' || ((type === '' || type === 'application/octet-stream' || type === 'binary/octet-stream') && path.endsWith('.pdf'));
  return declared && Buffer.from(bytes.subarray(0, 1024)).includes('%PDF-');
}

/** A page with plain HTTP: the caller's method, headers (the unsafe ones dropped) and body. */
export const webPageAdapter: Adapter<WebRequest, FetchedPage> = {
  upstream: 'web',
  operation: 'page',
  buildRequest: (request) => ({ url: request.url, method: request.method, ...plainRequestParts(request) }),
  parse: (response) => parseFetchedPage(response, 'http'),
};

/** A page rendered in the headless browser, past interstitials and captchas. */
export const webRenderAdapter: Adapter<WebRequest, FetchedPage> = {
  upstream: 'web',
  operation: 'render',
  via: 'browser',
  buildRequest: (request) => ({ url: request.url, method: 'GET', headers: {} }),
  parse: (response) => parseFetchedPage(response, 'browser'),
};

export function createWebScraper(settings: WebScraperSettings, deps: WebScraperDeps): WebScraper {
  const { blocklist } = deps;
  const converter = deps.converter ?? inlineConverter;
  const checkHost = (hostname: string) => {
    if (blocklist.isBlocked(hostname)) throw new BlockedDomainError(hostname);
  };
  const checkUrl = (url: URL) => checkHost(url.hostname);
  // Arbitrary sites: a user's request is neither retried nor suspended (one site refusing says nothing of another).
  const plain = deps.runtime.upstream({ timeoutMs: settings.timeoutMs, maxBytes: MAX_PAGE_BYTES, maxRedirects: MAX_REDIRECTS, checkUrl, retry: false, breaker: false });
  const rendered = deps.runtime.upstream({ timeoutMs: settings.browserTimeoutMs, maxBytes: MAX_PAGE_BYTES, checkUrl, checkHost, retry: false, breaker: false });

  async function load(request: WebRequest, context: CallContext, onScreenshot: (image: Buffer) => void): Promise<CallOutcome<FetchedPage> | { kind: 'no_browser' }> {
    if (!request.browser) return plain.call(webPageAdapter, request, context, { proxyCountry: request.proxyCountry });
    if ((await deps.browser()) === null) return { kind: 'no_browser' };
    const solver = deps.solver;
    return rendered.call(webRenderAdapter, request, context, {
      render: {
        waitForChallenges: true,
        waitForCondition: request.waitFor,
        actions: request.actions,
        screenshot: request.screenshot === undefined ? undefined : { ...request.screenshot, receive: onScreenshot },
        solveCaptcha: async (widget, signal) => {
          if (solver === undefined) throw new CaptchaSolverError('No captcha solver is configured (CAPTCHA_SOLVER_URL, CAPTCHA_SOLVER_KEY)');
          return solver(widget, { ...context, signal });
        },
      },
    });
  }

  /**
   * The page as answered: its extraction rules read, trimmed by the selectors, converted to the
   * format asked for, with its links when asked; all of it in one task of the converter.
   */
  async function shape(fetched: Extract<FetchedPage, { kind: 'page' }>, request: WebRequest, signal: AbortSignal | undefined, tenant: string | undefined): Promise<WebOutcome> {
    const { url, status, headers, content } = fetched;
    const contentType = headerValue(headers, 'content-type');
    const html = isHtmlType(contentType, content);
    const page: WebPage = { url, status_code: status, headers: returnedResponseHeaders(headers), content };
    if (request.extractRules !== undefined && !html) page.extracted = null;
    // Main content, rules and selectors only make sense for HTML; JSON or plain text is returned as it is.
    if (html && needsConverter(request)) {
      const task = {
        html: content,
        pageUrl: url,
        format: request.format,
        links: request.links,
        onlyMainContent: request.onlyMainContent ?? true,
        linksInline: request.linksInline ?? true,
        includeSelectors: request.includeSelectors,
        excludeSelectors: request.excludeSelectors,
        extractRules: request.extractRules,
      };
      const converted = await converter.convert(task, signal ?? new AbortController().signal, tenant);
      if (converted.kind === 'queue_full') return { kind: 'busy' };
      if (converted.kind !== 'ok') return { kind: 'not_converted', what: convertedPart(request), reason: converted.kind };
      if (request.extractRules !== undefined) page.extracted = converted.page.extracted ?? null;
      if (converted.page.content !== undefined) page.content = converted.page.content;
      if (converted.page.metadata !== undefined) page.metadata = converted.page.metadata;
      if (request.links) page.links = converted.page.links ?? [];
    }
    if (request.links && !html) page.links = [];
    return { kind: 'ok', page };
  }

  return {
    isBlocked(url) {
      try {
        return blocklist.isBlocked(new URL(url).hostname);
      } catch {
        return false;
      }
    },
    geoAvailable: settings.proxyConfigured,
    async scrape(request, context) {
      // A page that will need a conversion is not fetched when the conversion queue is full.
      if (needsConverter(request) && !converter.hasCapacity()) return { kind: 'busy' };
      let screenshot: Buffer | undefined;
      const outcome = await load(request, context, (image) => (screenshot = image));
      if (outcome.kind !== 'ok') return failure(outcome);
      if (outcome.value.kind !== 'page') {
        const { contentType, bytes, url, status, headers } = outcome.value;
        if (request.pdf && request.format !== 'raw' && bytes !== undefined && url !== undefined && status !== undefined && headers !== undefined) return { kind: 'pdf', url, status, headers, bytes };
        return { kind: 'not_a_page', contentType };
      }
      const shaped = await shape(outcome.value, request, context.signal, context.tenant);
      if (shaped.kind === 'ok' && screenshot !== undefined) shaped.page.screenshot = screenshot.toString('base64');
      return shaped;
    },
  };
}

/** Whether an HTML page of this request goes to the converter: anything asked of it beyond the raw page. */
function needsConverter(request: WebRequest): boolean {
  return request.format !== 'raw' || request.links || request.extractRules !== undefined || hasSelectorFilter({ include: request.includeSelectors, exclude: request.excludeSelectors });
}

/** The part of the request a page too large or complex to convert is blamed on: the first of them asked for. */
function convertedPart(request: WebRequest): Extract<WebOutcome, { kind: 'not_converted' }>['what'] {
  if (request.format !== 'raw') return request.format;
  if (request.links) return 'links';
  return request.extractRules !== undefined ? 'extract_rules' : 'selectors';
}

/** What a call that brought no page comes to. */
function failure(outcome: Exclude<CallOutcome<FetchedPage>, { kind: 'ok' }> | { kind: 'no_browser' }): WebOutcome {
  if (outcome.kind === 'blocked') {
    if (outcome.error instanceof CaptchaUnsolvedError) return { kind: 'captcha_unsolved', reason: outcome.error.message };
    if (outcome.status !== undefined) return { kind: 'status', status: outcome.status };
    return { kind: 'unreachable', reason: outcome.reason };
  }
  if (outcome.kind === 'unreachable' || outcome.kind === 'timeout') {
    const error: unknown = outcome.error;
    if (error instanceof RenderStepError) return { kind: 'step_failed', step: error.step, message: error.message };
    if (error instanceof OutboundError) {
      if (error.code === 'blocked_host') return { kind: 'blocked_domain', url: error.url };
      if (error.code === 'blocked_address') return { kind: 'private_address', url: error.url };
      if (error.code === 'too_large') return { kind: 'too_large' };
    }
    return { kind: 'unreachable', reason: outcome.reason };
  }
  if (outcome.kind === 'empty' || outcome.kind === 'not_found' || outcome.kind === 'changed' || outcome.kind === 'suspended') {
    return { kind: 'unreachable', reason: 'reason' in outcome && outcome.reason ? outcome.reason : outcome.kind };
  }
  return outcome;
}
