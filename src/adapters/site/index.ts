/**
 * Public entry of the site-discovery layer (crawl, map, batch; docs/spec/contract.md §9): URLs of
 * one site, robots.txt, sitemaps, and the map of a site. Every file is fetched through the
 * upstream runtime as the `site` upstream.
 */
import type { Upstream, UpstreamRuntime } from '../kit/runtime.ts';
import { MAX_REDIRECTS } from '../web/scraper.ts';
import { ROBOTS_MAX_BYTES } from './robots.ts';

export { canonicalUrl, compilePathPatterns, pathFilter, siteScope, MAX_PATH_PATTERNS, MAX_PATH_PATTERN_LENGTH } from './urls.ts';
export type { CanonicalUrl, PathPatterns, PathPatternsRefused } from './urls.ts';
export { MAX_CRAWL_DELAY_MS, parseRobotsResponse, readRobots, robotsAdapter, robotsProductToken, robotsUrlFor, ROBOTS_MAX_BYTES, ROBOTS_PARSE_LIMIT_BYTES } from './robots.ts';
export type { RobotsParams, RobotsRules } from './robots.ts';
export { MAX_SITEMAP_BYTES, MAX_SITEMAP_ENTRIES, parseSitemap, parseSitemapResponse, sitemapAdapter } from './sitemap.ts';
export type { SitemapFile, SitemapParams } from './sitemap.ts';
export { discoverSitemapUrls, SITEMAP_DISCOVERY_DEFAULTS } from './discover.ts';
export type { DiscoveredSitemaps, SitemapDiscoveryOptions } from './discover.ts';
export { mapSite, matching, MAP_DEFAULTS } from './map.ts';
export type { SiteMapDeps, SiteMapOutcome, SiteMapRequest } from './map.ts';

/** Deadline of one robots.txt or sitemap file, unless the call sets a shorter one. */
export const SITE_FILE_TIMEOUT_MS = 15_000;

/**
 * A handle on the `site` upstream: robots.txt and sitemap files of arbitrary sites. Like /v1/web,
 * neither retried nor suspended (one site failing says nothing of another), redirects followed
 * up to 10 hops, each hop through the outbound client's address rules and `checkUrl` (the
 * blocked domains). Its size cap is robots.txt's (`ROBOTS_MAX_BYTES`): sitemap calls raise it
 * to `MAX_SITEMAP_BYTES` themselves (`discoverSitemapUrls` does).
 */
export function siteUpstream(runtime: UpstreamRuntime, options: { checkUrl?: (url: URL) => void; timeoutMs?: number } = {}): Upstream {
  return runtime.upstream({
    timeoutMs: options.timeoutMs ?? SITE_FILE_TIMEOUT_MS,
    maxBytes: ROBOTS_MAX_BYTES,
    maxRedirects: MAX_REDIRECTS,
    checkUrl: options.checkUrl,
    retry: false,
    breaker: false,
  });
}
