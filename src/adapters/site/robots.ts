/**
 * robots.txt (RFC 9309): the pure adapter that fetches it and the reading of its rules, for the
 * crawler (what it may fetch, how slowly) and the map (its `Sitemap:` lines).
 */
import robotsModule from 'robots-parser';
import type { Adapter, ParseOutcome, UpstreamResponse } from '../kit/types.ts';

// The package's types declare an ES default export; at run time the CommonJS module is the function itself.
const robotsParser = robotsModule as unknown as typeof robotsModule.default;

/** The parse limit: RFC 9309 §2.5 asks crawlers to read at least 500 KiB; what follows is ignored. */
export const ROBOTS_PARSE_LIMIT_BYTES = 500 * 1024;
/**
 * The fetch cap (the runtime's `maxBytes` of a robots call). Above it the outbound client gives
 * up (`too_large`) and the file counts as unreadable; between the two, only the first 500 KiB are read.
 */
export const ROBOTS_MAX_BYTES = 1024 * 1024;
/** The longest crawl delay honoured: a site asking for more is crawled every 30 s, not every hour. */
export const MAX_CRAWL_DELAY_MS = 30_000;

export interface RobotsRules {
  /**
   * Whether the rules of this robots.txt let us fetch `url`. Only URLs of the file's own origin
   * (scheme, host, port) are its to judge: any other URL is answered false, so a caller that asks
   * the wrong file errs towards not fetching (ask the file of that URL's origin instead).
   */
  isAllowed(url: string): boolean;
  /** The delay asked between two requests, in ms: 0 when none, at most `MAX_CRAWL_DELAY_MS`. */
  crawlDelayMs: number;
  /** The `Sitemap:` lines, as absolute http(s) URLs, in file order. */
  sitemaps: string[];
}

/** Where the robots.txt of `url`'s origin is. */
export function robotsUrlFor(url: string): string {
  return new URL('/robots.txt', url).href;
}

/**
 * The product token robots.txt groups are matched by (RFC 9309 §2.2.1), from a User-Agent
 * header: `Mozilla/5.0 (compatible; gleaner/0.1)` → `gleaner`, `gleaner/0.1` → `gleaner`.
 */
export function robotsProductToken(userAgent: string): string {
  const compatible = /compatible;\s*([A-Za-z_-]+)/.exec(userAgent);
  if (compatible) return compatible[1].toLowerCase();
  const first = /^\s*([A-Za-z_-]+)/.exec(userAgent);
  return first ? first[1].toLowerCase() : '*';
}

/**
 * The rules of the robots.txt at `robotsUrl`, for `userAgent` (a product token, or a whole
 * User-Agent header, read by `robotsProductToken`). A missing file (`body` null: it answered
 * 4xx, RFC 9309 §2.3.1.3) allows everything, as does an empty one.
 */
export function readRobots(robotsUrl: string, body: string | null, userAgent: string): RobotsRules {
  const text = limitText(body ?? '', ROBOTS_PARSE_LIMIT_BYTES).replace(/^\uFEFF/, '');
  const robots = robotsParser(robotsUrl, text);
  const token = robotsProductToken(userAgent);
  const delaySeconds = robots.getCrawlDelay(token);
  const crawlDelayMs = typeof delaySeconds === 'number' && delaySeconds > 0 ? Math.min(delaySeconds * 1000, MAX_CRAWL_DELAY_MS) : 0;
  const sitemaps: string[] = [];
  for (const line of robots.getSitemaps()) {
    try {
      const url = new URL(line, robotsUrl);
      if (url.protocol === 'http:' || url.protocol === 'https:') sitemaps.push(url.href);
    } catch {
      // A Sitemap line that is no URL: nothing to follow.
    }
  }
  return {
    // robots-parser answers undefined for a URL of another origin.
    isAllowed: (url) => robots.isAllowed(url, token) === true,
    crawlDelayMs,
    sitemaps,
  };
}

/** The first `limit` bytes of `text` (UTF-8), cut at the last line break before the limit. */
function limitText(text: string, limit: number): string {
  if (text.length <= limit / 4) return text;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return text;
  const head = bytes.subarray(0, limit).toString('utf8');
  const lastBreak = Math.max(head.lastIndexOf('\n'), head.lastIndexOf('\r'));
  return lastBreak === -1 ? head : head.slice(0, lastBreak);
}

export interface RobotsParams {
  /** Any URL of the site: its origin's /robots.txt is asked for. */
  url: string;
}

/**
 * What the robots.txt answer says: the file's text for a 2xx; null ("no rules") for a 4xx or a
 * redirect left unfollowed (RFC 9309 §2.3.1.2, §2.3.1.3: the crawler may fetch anything); the
 * server failing (5xx) or rate-limiting us (429, the way major crawlers read it) is `blocked`.
 *
 * A caller crawling by these rules must read a failed call (`blocked`, `unreachable`, `timeout`)
 * as "disallow everything": RFC 9309 §2.3.1.4 ("unreachable" status) says a crawler MUST assume
 * complete disallow while robots.txt cannot be read.
 */
export function parseRobotsResponse(response: UpstreamResponse): ParseOutcome<string | null> {
  const { status } = response;
  if (status >= 200 && status < 300) return { kind: 'ok', value: response.body };
  if (status === 429 || status >= 500) return { kind: 'blocked', reason: `robots.txt answered ${status}` };
  return { kind: 'ok', value: null };
}

/** GET `<origin>/robots.txt`. Call it with `maxBytes: ROBOTS_MAX_BYTES`: adapters declare no size cap, calls do. */
export const robotsAdapter: Adapter<RobotsParams, string | null> = {
  upstream: 'site',
  operation: 'robots',
  idempotent: true,
  buildRequest: ({ url }) => ({ url: robotsUrlFor(url), method: 'GET', headers: { accept: 'text/plain, */*;q=0.5' } }),
  parse: (response) => parseRobotsResponse(response),
};
