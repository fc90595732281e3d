/**
 * A site's map (POST /v1/map, docs/spec/contract.md §9): the URLs of one site, from its start
 * page's links and its sitemaps, without fetching the pages themselves.
 */
import type { Upstream } from '../kit/runtime.ts';
import type { CallContext } from '../kit/types.ts';
import type { WebOutcome, WebScraper } from '../web/scraper.ts';
import { canonicalUrl, siteScope } from './urls.ts';
import { runSliced } from '../../core/time-slice.ts';
import { readRobots, robotsAdapter, robotsUrlFor, ROBOTS_MAX_BYTES } from './robots.ts';
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
  /** robots.txt only gives sitemap URLs: it does not get the whole deadline. */
  robotsTimeoutMs: 10_000,
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
}

export interface SiteMapDeps {
  /** A handle on the `site` upstream for arbitrary sites (`siteUpstream`). */
  site: Upstream;
  /** Reads the start page's links. */
  web: Pick<WebScraper, 'scrape'>;
  /** Our User-Agent (robots.txt groups are matched by its product token). */
  userAgent: string;
  /** Default `MAP_DEFAULTS.deadlineMs`. */
  deadlineMs?: number;
}

export type SiteMapOutcome =
  | { kind: 'ok'; links: string[] }
  /** Neither the start page nor any sitemap could be read. */
  | { kind: 'unreachable' }
  /** No sitemap, and the start page could not be read because every conversion process is taken. */
  | { kind: 'busy' };

/**
 * The site's URLs: the start URL first, then the start page's links in page order, then the
 * sitemaps' URLs (indexes followed); only URLs of the site (`siteScope`), canonical
 * (`canonicalUrl`), each once, at most `limit`.
 *
 * robots.txt is read for its `Sitemap:` lines only. A map lists URLs and fetches none of them, so
 * URLs robots.txt disallows are listed all the same (Firecrawl's map does the same); a crawl
 * fetching them obeys robots.txt.
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
  const found = search === '' ? links.urls : matching(links.urls, search);
  return { kind: 'ok', links: found.slice(0, request.limit) };
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

async function readSitemaps(startUrl: string, deps: SiteMapDeps, context: CallContext, options: { deadline: number; maxUrls: number; accept: (url: URL) => boolean }) {
  const timeoutMs = Math.max(1, Math.min(MAP_DEFAULTS.robotsTimeoutMs, options.deadline - Date.now()));
  const robots = await deps.site.call(robotsAdapter, { url: startUrl }, context, { maxBytes: ROBOTS_MAX_BYTES, timeoutMs });
  // An unreadable robots.txt only means no Sitemap: lines here (nothing is crawled).
  const robotsSitemaps = robots.kind === 'ok' && robots.value !== null ? readRobots(robotsUrlFor(startUrl), robots.value, deps.userAgent).sitemaps : [];
  return discoverSitemapUrls(deps.site, { startUrl, robotsSitemaps, ...options }, context);
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
