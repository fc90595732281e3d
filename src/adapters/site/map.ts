/**
 * A site's map (POST /v1/map, docs/spec/contract.md §9): the URLs of one site, from its start
 * page's links and its sitemaps, without fetching the pages themselves.
 */
import type { Upstream } from '../kit/runtime.ts';
import type { CallContext } from '../kit/types.ts';
import type { WebOutcome, WebScraper } from '../web/scraper.ts';
import { canonicalUrl, siteScope } from './urls.ts';
import { runSliced } from '../../core/time-slice.ts';
import { readRobots, robotsAdapter, robotsUrlFor, ROBOTS_MAX_BYTES, type RobotsRules } from './robots.ts';
import { discoverSitemapUrls } from './discover.ts';

export const MAP_DEFAULTS = {
  limit: 5000,
  /** The contract's largest `limit`. */
  maxLimit: 50_000,
  /**
   * The whole map's time: the start page, robots.txt and every sitemap file share it. What was
   * read when it passes is answered; files still loading are dropped.
   */
  deadlineMs: 30_000,
  /** A robots.txt file does not get the whole deadline. */
  robotsTimeoutMs: 10_000,
  /** Other origins of the site (a `www.` twin, subdomains) whose robots.txt is read; their URLs beyond these are left out. */
  robotsOrigins: 20,
  /** Those files are read after discovery: they get this long even when the deadline has passed. */
  robotsGraceMs: 2_000,
  /**
   * Sitemap URLs gathered beyond `limit`, for those the start page's links already gave
   * (discovery runs alongside the page, so it cannot know which ones those will be).
   */
  pageLinkMargin: 1000,
} as const;

export interface SiteMapRequest {
  /** The start URL (validated: http(s), public). */
  url: string;
  /** Links answered at most. */
  limit: number;
  /** Subdomains of the start URL's registrable domain count as the site. */
  includeSubdomains: boolean;
  /** Keep only URLs containing this, case-insensitively; those with it in their path first. */
  search?: string;
  /** List the URLs robots.txt disallows too (the operator allows it); by default they are left out. */
  ignoreRobots?: boolean;
}

export interface SiteMapDeps {
  /** A handle on the `site` upstream for arbitrary sites (`siteUpstream`). */
  site: Upstream;
  /** Reads the start page's links. */
  web: Pick<WebScraper, 'scrape'>;
  /** The User-Agent robots.txt groups are matched by (its product token): the crawler's. */
  userAgent: string;
  /** Default `MAP_DEFAULTS.deadlineMs`. */
  deadlineMs?: number;
}

export type SiteMapOutcome =
  | { kind: 'ok'; links: string[] }
  /** Neither the start page nor any sitemap could be read. */
  | { kind: 'unreachable' }
  /** No sitemap, and the start page could not be read because every conversion process is taken. */
  | { kind: 'busy' }
  /** The start URL's robots.txt could not be read (no answer, 429, 5xx): it may disallow everything. */
  | { kind: 'robots_unreadable' };

/**
 * The site's URLs: the start URL first, then the start page's links in page order, then the
 * sitemaps' URLs (indexes followed); only URLs of the site (`siteScope`), canonical
 * (`canonicalUrl`), each once, at most `limit`.
 *
 * robots.txt gives the `Sitemap:` lines, and judges the URLs as it judges a crawl's: what it
 * disallows for our user agent is left out, each origin by its own file (one that cannot be read
 * disallows its origin, RFC 9309 §2.3.1.4), unless `ignoreRobots`.
 */
export async function mapSite(request: SiteMapRequest, deps: SiteMapDeps, context: CallContext): Promise<SiteMapOutcome> {
  const start = canonicalUrl(request.url);
  if (start === null) return { kind: 'unreachable' };
  const deadline = Date.now() + (deps.deadlineMs ?? MAP_DEFAULTS.deadlineMs);
  const inScope = siteScope(start.url, { allowSubdomains: request.includeSubdomains });
  const search = request.search?.trim() ?? '';
  // Searching drops URLs after discovery, so gather as many as a map may hold.
  const wanted = search === '' ? Math.min(MAP_DEFAULTS.maxLimit, request.limit + MAP_DEFAULTS.pageLinkMargin) : MAP_DEFAULTS.maxLimit;

  const [page, sitemaps] = await Promise.all([
    readStartPage(start.url, deps.web, context, deadline),
    readSitemaps(start.url, deps, context, { deadline, maxUrls: wanted, accept: inScope }),
  ]);
  if (page.kind !== 'ok' && page.kind !== 'not_a_page' && sitemaps.filesRead === 0) {
    return page.kind === 'busy' ? { kind: 'busy' } : { kind: 'unreachable' };
  }

  const links = new SiteLinks(inScope);
  links.add(start.url);
  // Thousands of URLs, each parsed twice: in slices of the event loop.
  const pageLinks = page.kind === 'ok' ? (page.page.links ?? []) : [];
  await runSliced([...pageLinks, ...sitemaps.urls], (url) => links.add(url), { budgetMs: Infinity, signal: context.signal });
  let listed = links.urls;
  if (!request.ignoreRobots) {
    if (sitemaps.robots === null) return { kind: 'robots_unreadable' };
    listed = await allowedByRobots(listed, start.url, sitemaps.robots, deps, context, deadline);
  }
  const found = search === '' ? listed : matching(listed, search);
  return { kind: 'ok', links: found.slice(0, request.limit) };
}

/**
 * The URLs robots.txt lets our user agent fetch: the start origin's by the rules read with the
 * sitemaps, another origin's by its own file, read once (up to `MAP_DEFAULTS.robotsOrigins`
 * origins, within the deadline or the grace after it); an origin whose file is not read lists nothing.
 */
async function allowedByRobots(urls: string[], startUrl: string, startRules: RobotsRules, deps: SiteMapDeps, context: CallContext, deadline: number): Promise<string[]> {
  const rules = new Map<string, Promise<RobotsRules | null>>([[new URL(startUrl).origin, Promise.resolve(startRules)]]);
  for (const url of urls) {
    const origin = new URL(url).origin;
    if (rules.has(origin) || rules.size > MAP_DEFAULTS.robotsOrigins) continue;
    rules.set(origin, readRobotsOf(origin, deps, context, Math.max(deadline, Date.now() + MAP_DEFAULTS.robotsGraceMs)));
  }
  const settled = new Map(await Promise.all([...rules].map(async ([origin, read]) => [origin, await read] as const)));
  // Up to 50,000 checks against files the sites wrote: in slices of the event loop, within the
  // map's time; a URL not judged by then is left out, as one whose robots.txt was not read.
  const allowed: string[] = [];
  const budgetMs = Math.max(MAP_DEFAULTS.robotsGraceMs, deadline - Date.now());
  const judge = (url: string) => {
    if (settled.get(new URL(url).origin)?.isAllowed(url) === true) allowed.push(url);
  };
  await runSliced(urls, judge, { budgetMs, signal: context.signal });
  return allowed;
}

/** A site's robots.txt rules, or null when the file could not be read by the deadline. */
async function readRobotsOf(url: string, deps: SiteMapDeps, context: CallContext, deadline: number): Promise<RobotsRules | null> {
  const timeoutMs = Math.max(1, Math.min(MAP_DEFAULTS.robotsTimeoutMs, deadline - Date.now()));
  const read = await deps.site.call(robotsAdapter, { url }, context, { maxBytes: ROBOTS_MAX_BYTES, timeoutMs });
  return read.kind === 'ok' ? readRobots(robotsUrlFor(url), read.value, deps.userAgent) : null;
}

/** The start page with its links, within the map's deadline; a page that did not come in time is a failure. */
async function readStartPage(url: string, web: SiteMapDeps['web'], context: CallContext, deadline: number): Promise<WebOutcome> {
  const timer = AbortSignal.timeout(Math.max(1, deadline - Date.now()));
  const signal = context.signal ? AbortSignal.any([context.signal, timer]) : timer;
  try {
    return await web.scrape({ url, method: 'GET', browser: false, format: 'raw', links: true }, { ...context, signal });
  } catch (error) {
    // The caller went away: the whole map stops. Only our own deadline is a failed page.
    if (context.signal?.aborted || !timer.aborted) throw error;
    return { kind: 'unreachable', reason: 'the map deadline passed' };
  }
}

/** The sitemaps' URLs, and the start origin's robots.txt rules they were found with (null: unreadable, so no `Sitemap:` lines). */
async function readSitemaps(startUrl: string, deps: SiteMapDeps, context: CallContext, options: { deadline: number; maxUrls: number; accept: (url: URL) => boolean }) {
  const robots = await readRobotsOf(startUrl, deps, context, options.deadline);
  const found = await discoverSitemapUrls(deps.site, { startUrl, robotsSitemaps: robots?.sitemaps ?? [], ...options }, context);
  return { ...found, robots };
}

/** URLs of the site, each once by canonical key, in the order first added. */
class SiteLinks {
  readonly urls: string[] = [];
  readonly #keys = new Set<string>();
  readonly #inScope: (url: URL) => boolean;

  constructor(inScope: (url: URL) => boolean) {
    this.#inScope = inScope;
  }

  add(raw: string): void {
    const link = canonicalUrl(raw);
    if (link === null || this.#keys.has(link.key) || !this.#inScope(new URL(link.url))) return;
    this.#keys.add(link.key);
    this.urls.push(link.url);
  }
}

/** URLs containing `term` (case-insensitively, as written or percent-decoded): those with it in their path first, order kept otherwise. */
export function matching(urls: readonly string[], term: string): string[] {
  const needle = term.toLowerCase();
  const contains = (text: string) => text.toLowerCase().includes(needle) || decoded(text).toLowerCase().includes(needle);
  const inPath: string[] = [];
  const elsewhere: string[] = [];
  for (const url of urls) {
    if (!contains(url)) continue;
    (contains(new URL(url).pathname) ? inPath : elsewhere).push(url);
  }
  return [...inPath, ...elsewhere];
}

function decoded(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
