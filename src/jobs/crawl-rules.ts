/**
 * Which URLs a crawl may fetch (contract §9): the same site (subdomains when asked), the include
 * and exclude path patterns, robots.txt, each page once by its canonical form. Built once per job
 * from its parameters and the robots.txt read when it started.
 *
 * A page's links are judged in slices of the event loop, within a budget per page: the links,
 * the patterns and the robots.txt all come from the user or the site, and each check, though
 * linear, multiplied by a thousand links must never hold the server (docs/reliability.md).
 */
import { canonicalUrl, compilePathPatterns, pathFilter, siteScope } from '../adapters/site/urls.ts';
import { runSliced } from '../core/time-slice.ts';
import type { RobotsRules } from '../adapters/site/robots.ts';
import type { FoundPage } from './store.ts';

/** A crawl's parameters as stored with the job (validated when it was created). */
export interface CrawlParams {
  url: string;
  limit: number;
  max_depth: number;
  include_paths?: string[];
  exclude_paths?: string[];
  allow_subdomains?: boolean;
  sitemap?: 'include' | 'skip' | 'only';
  format?: string;
  links?: boolean;
}

export interface CrawlRules {
  /** The start URL's robots.txt: it judges URLs of the start origin; other origins (a `www.` twin, subdomains) have their own. */
  robots: RobotsRules;
  /** Whether the start origin's robots.txt is the one that judges `url`. */
  sameOrigin(url: string): boolean;
  maxDepth: number;
  /** The start URL's site (and subdomains, when asked): where a redirect may end. */
  inScope(url: string): boolean;
  /**
   * The URLs the crawl may fetch, canonical and once each, as pages found at `depth`, judged in
   * slices of the event loop for at most `budgetMs` of work: `cut` counts the URLs left unjudged.
   */
  admit(urls: readonly string[], depth: number, options: { budgetMs: number; signal?: AbortSignal }): Promise<Admission>;
  /** The start page, fetched whatever the path patterns say (robots.txt still has the last word). */
  start(): FoundPage[];
}

export interface Admission {
  pages: FoundPage[];
  /** URLs not judged because the budget ran out (none normally). */
  cut: number;
}

/** The work one crawled page's links may take, and the start's (its sitemaps' URLs). */
export const ADMISSION_BUDGET_MS = { page: 2_000, start: 10_000 } as const;

export function crawlRules(params: CrawlParams, robots: RobotsRules): CrawlRules {
  const scope = siteScope(params.url, { allowSubdomains: params.allow_subdomains === true });
  const include = compilePathPatterns(params.include_paths);
  const exclude = compilePathPatterns(params.exclude_paths);
  // Validated when the job was created; a stored job that no longer compiles admits nothing.
  const paths = include.ok && exclude.ok ? pathFilter(include, exclude) : () => false;
  const startOrigin = new URL(params.url).origin;
  const sameOrigin = (raw: string) => {
    try {
      return new URL(raw).origin === startOrigin;
    } catch {
      return false;
    }
  };
  const inScope = (raw: string) => {
    try {
      return scope(new URL(raw));
    } catch {
      return false;
    }
  };
  return {
    robots,
    // `sitemap: only` crawls the sitemaps' pages and follows no link.
    maxDepth: params.sitemap === 'only' ? 0 : params.max_depth,
    sameOrigin,
    inScope,
    async admit(urls, depth, options) {
      const pages: FoundPage[] = [];
      const seen = new Set<string>();
      // Other origins' robots.txt is read when their pages are fetched (the worker asks it then).
      const accept = (url: URL) => scope(url) && paths(url) && (url.origin !== startOrigin || robots.isAllowed(url.href));
      const run = await runSliced(urls, (raw) => addPage(pages, seen, raw, depth, accept), options);
      return { pages, cut: urls.length - run.processed };
    },
    start() {
      const canonical = canonicalUrl(params.url);
      return canonical && robots.isAllowed(canonical.url) ? [{ key: canonical.key, url: canonical.url, depth: 0 }] : [];
    },
  };
}

/** The URLs as pages found at `depth`: canonical, once each, in the order given, those `accept` takes. */
export function canonicalPages(urls: readonly string[], depth: number, accept: (url: URL) => boolean = () => true): FoundPage[] {
  const seen = new Set<string>();
  const pages: FoundPage[] = [];
  for (const raw of urls) addPage(pages, seen, raw, depth, accept);
  return pages;
}

function addPage(pages: FoundPage[], seen: Set<string>, raw: string, depth: number, accept: (url: URL) => boolean): void {
  const canonical = canonicalUrl(raw);
  if (!canonical || seen.has(canonical.key)) return;
  seen.add(canonical.key);
  if (accept(new URL(canonical.url))) pages.push({ key: canonical.key, url: canonical.url, depth });
}
