/**
 * A site's URLs as its sitemaps list them: the robots.txt `Sitemap:` lines and `/sitemap.xml`,
 * indexes followed breadth-first, every file through the upstream runtime.
 */
import type { Upstream } from '../kit/runtime.ts';
import type { CallContext } from '../kit/types.ts';
import { canonicalUrl } from './urls.ts';
import { runSliced } from '../../core/time-slice.ts';
import { MAX_SITEMAP_BYTES, sitemapAdapter } from './sitemap.ts';

export const SITEMAP_DISCOVERY_DEFAULTS = {
  /** Sitemap files fetched at most (indexes included). */
  maxFiles: 50,
  /** Files fetched at the same time: a few, not a burst at one site. */
  concurrency: 3,
} as const;

export interface SitemapDiscoveryOptions {
  startUrl: string;
  /** The robots.txt `Sitemap:` lines (absolute URLs); `<origin>/sitemap.xml` is always tried too. */
  robotsSitemaps: readonly string[];
  /** Page URLs returned at most. */
  maxUrls: number;
  /** Sitemap files fetched at most. Default 50. */
  maxFiles?: number;
  /** Files fetched at the same time. Default 3. */
  concurrency?: number;
  /** Only URLs it accepts are kept and counted (the site's scope, a path filter). Default: all. */
  accept?: (url: URL) => boolean;
  /** When to stop (ms since the epoch): no file is started after it, and each call's deadline ends at it. */
  deadline?: number;
}

export interface DiscoveredSitemaps {
  /** Canonical page URLs (`canonicalUrl(...).url`), deduplicated by canonical key, in discovery order. */
  urls: string[];
  /** Sitemap files read (an empty one included): zero means the site gave us no sitemap at all. */
  filesRead: number;
}

/**
 * Follows the site's sitemaps breadth-first: each file is fetched at most once (by canonical key),
 * at most `maxFiles` of them, a few in parallel; child sitemaps of an index join the queue. A file
 * that cannot be fetched or read is skipped (the runtime has logged why). Stops at `maxUrls`
 * page URLs, when the queue is empty, or at the deadline.
 *
 * `call` is a handle on the `site` upstream for arbitrary sites (no retry, no breaker), with the
 * caller's per-hop URL check; every file is fetched with `MAX_SITEMAP_BYTES` as its cap.
 */
export async function discoverSitemapUrls(call: Upstream, options: SitemapDiscoveryOptions, context: CallContext): Promise<DiscoveredSitemaps> {
  const maxFiles = options.maxFiles ?? SITEMAP_DISCOVERY_DEFAULTS.maxFiles;
  const concurrency = Math.max(1, options.concurrency ?? SITEMAP_DISCOVERY_DEFAULTS.concurrency);
  const accept = options.accept ?? (() => true);
  const queued = new Set<string>();
  const queue: string[] = [];
  const enqueue = (raw: string, base?: string) => {
    const file = canonicalUrl(raw, base);
    if (file === null || queued.has(file.key)) return;
    queued.add(file.key);
    queue.push(file.url);
  };
  for (const sitemap of options.robotsSitemaps) enqueue(sitemap);
  enqueue('/sitemap.xml', options.startUrl);

  const seen = new Set<string>();
  const urls: string[] = [];
  let fetched = 0;
  let filesRead = 0;
  const timeLeft = () => (options.deadline === undefined ? undefined : options.deadline - Date.now());

  while (queue.length > 0 && fetched < maxFiles && urls.length < options.maxUrls) {
    const remaining = timeLeft();
    if (remaining !== undefined && remaining <= 0) break;
    const batch = queue.splice(0, Math.min(concurrency, maxFiles - fetched));
    fetched += batch.length;
    const outcomes = await Promise.all(
      batch.map((url) => call.call(sitemapAdapter, { url }, context, { maxBytes: MAX_SITEMAP_BYTES, ...(remaining !== undefined ? { timeoutMs: Math.max(1, remaining) } : {}) })),
    );
    // Results are taken in queue order, whatever order the files arrived in: the answer is stable.
    for (const [position, outcome] of outcomes.entries()) {
      if (outcome.kind !== 'ok') continue;
      filesRead += 1;
      const fileUrl = batch[position];
      if (outcome.value.kind === 'index') {
        for (const child of outcome.value.sitemaps) enqueue(child, fileUrl);
        continue;
      }
      // Up to 50,000 URLs a file, some 10 µs each: judged in slices of the event loop.
      await runSliced(
        outcome.value.urls,
        (raw) => {
          if (urls.length >= options.maxUrls) return false;
          const page = canonicalUrl(raw, fileUrl);
          if (page === null || seen.has(page.key) || !accept(new URL(page.url))) return;
          seen.add(page.key);
          urls.push(page.url);
        },
        { budgetMs: Infinity, signal: context.signal },
      );
    }
  }
  return { urls, filesRead };
}
