/**
 * robots.txt (RFC 9309): the pure adapter that fetches it and the reading of its rules, for the
 * crawler (what it may fetch, how slowly) and the map (its `Sitemap:` lines).
 *
 * The rules are read and matched here rather than by a package: the file is hostile input, and a
 * matcher whose work grows with the rule's length times the path's (as Google's reference one and
 * its ports do) let a 500 KiB file of `*`-laden rules stall the server for seconds per link. Each
 * rule is compiled once into its literal segments, and a match is a few `startsWith`/`indexOf`
 * calls: linear in the path. The semantics are Google's and RFC 9309's (groups by product token,
 * `*` and a final `$`, the longest rule wins, Allow breaks a tie).
 */
import type { Adapter, ParseOutcome, UpstreamResponse } from '../kit/types.ts';
import { MAX_URL_LENGTH } from '../../core/limits.ts';

/** The parse limit: RFC 9309 §2.5 asks crawlers to read at least 500 KiB; what follows is ignored. */
export const ROBOTS_PARSE_LIMIT_BYTES = 500 * 1024;
/**
 * The fetch cap (the runtime's `maxBytes` of a robots call). Above it the outbound client gives
 * up (`too_large`) and the file counts as unreadable; between the two, only the first 500 KiB are read.
 */
export const ROBOTS_MAX_BYTES = 1024 * 1024;
/** The longest crawl delay honoured: a site asking for more is crawled every 30 s, not every hour. */
export const MAX_CRAWL_DELAY_MS = 30_000;
/**
 * Rules whose path, once its runs of `*` are one `*`, is longer than this are ignored: every other
 * character must match one of the path's, and no URL longer than `MAX_URL_LENGTH` is fetched.
 */
export const MAX_ROBOTS_RULE_LENGTH = MAX_URL_LENGTH;
/**
 * The most rules with a `*` in the group that applies to us. A literal rule costs at most its own
 * length to check, so the 500 KiB bound them all; a `*` rule may scan the whole path, so 30,000 of
 * them (what 500 KiB holds) made one check take 200 ms. Real files have tens. A file past this is
 * read as "disallow everything", as one that cannot be read is (RFC 9309 §2.3.1.4): erring
 * towards not fetching.
 */
export const MAX_ROBOTS_WILDCARD_RULES = 5000;

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
  const file = parseRobotsFile(text);
  const token = robotsProductToken(userAgent);
  // RFC 9309 §2.2.1: the groups naming our product token (merged), else those of `*`, else none.
  const group = file.groups.get(token) ?? file.groups.get('*');
  const rules = compileRules(group?.rules ?? []) ?? DISALLOW_ALL;
  const delaySeconds = group?.crawlDelaySeconds;
  const crawlDelayMs = delaySeconds !== undefined && delaySeconds > 0 ? Math.min(delaySeconds * 1000, MAX_CRAWL_DELAY_MS) : 0;
  const sitemaps: string[] = [];
  for (const line of file.sitemaps) {
    try {
      const url = new URL(line, robotsUrl);
      if (url.protocol === 'http:' || url.protocol === 'https:') sitemaps.push(url.href);
    } catch {
      // A Sitemap line that is no URL: nothing to follow.
    }
  }
  const origin = originOf(robotsUrl);
  return {
    isAllowed: (url) => {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        return false;
      }
      if (origin === null || originOf(parsed) !== origin) return false;
      return isPathAllowed(rules, normalizeEncoding(`${parsed.pathname}${parsed.search}`));
    },
    crawlDelayMs,
    sitemaps,
  };
}

/** Scheme, host and port (the default one written out), or null for what is no URL. */
function originOf(url: string | URL): string | null {
  try {
    const parsed = typeof url === 'string' ? new URL(url) : url;
    const port = parsed.port || (parsed.protocol === 'https:' ? '443' : parsed.protocol === 'http:' ? '80' : '');
    return `${parsed.protocol}//${parsed.hostname}:${port}`;
  } catch {
    return null;
  }
}

interface RawRule {
  allow: boolean;
  path: string;
}

interface RobotsGroup {
  rules: RawRule[];
  crawlDelaySeconds?: number;
}

interface RobotsFile {
  /** Groups by product token (lowercase), those naming one token merged in file order. */
  groups: Map<string, RobotsGroup>;
  sitemaps: string[];
}

/**
 * The file's lines as RFC 9309 §2.1 reads them: `key: value`, comments after `#`; consecutive
 * `user-agent` lines open one group, whose rules follow until the next `user-agent` line after a
 * rule. Unknown keys are skipped; `Sitemap` lines belong to no group.
 */
function parseRobotsFile(text: string): RobotsFile {
  const groups = new Map<string, RobotsGroup>();
  const sitemaps: string[] = [];
  let agents: RobotsGroup[] = [];
  let lastWasAgent = false;
  for (const rawLine of text.split(/\r\n|\r|\n/)) {
    const hash = rawLine.indexOf('#');
    const line = hash === -1 ? rawLine : rawLine.slice(0, hash);
    const colon = line.indexOf(':');
    if (colon === -1) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === '') continue;
    switch (key) {
      case 'user-agent': {
        if (!lastWasAgent) agents = [];
        const token = agentToken(value);
        if (token !== '') {
          let group = groups.get(token);
          if (!group) groups.set(token, (group = { rules: [] }));
          agents.push(group);
        }
        break;
      }
      case 'allow':
      case 'disallow':
        // An empty value is no rule (`Disallow:` allows everything), but it still closes the agents' list.
        if (value !== '') for (const group of agents) group.rules.push({ allow: key === 'allow', path: value });
        break;
      case 'crawl-delay': {
        const seconds = Number(value);
        if (value !== '' && !Number.isNaN(seconds)) for (const group of agents) group.crawlDelaySeconds = seconds;
        break;
      }
      case 'sitemap':
        if (value !== '') sitemaps.push(value);
        break;
    }
    lastWasAgent = key === 'user-agent';
  }
  return { groups, sitemaps };
}

/** A `User-agent` line's token: lowercase, any version (`Bot/1.0`) cut off. */
function agentToken(value: string): string {
  const slash = value.indexOf('/');
  return (slash === -1 ? value : value.slice(0, slash)).trim().toLowerCase();
}

/**
 * Paths compared as RFC 9309 §2.2.2 asks: characters outside US-ASCII (and those a URL may not
 * hold as they are) percent-encoded as UTF-8, every escape in upper case, a `%` already there kept.
 */
function normalizeEncoding(path: string): string {
  let encoded: string;
  try {
    encoded = encodeURI(path).replaceAll('%25', '%');
  } catch {
    // A lone surrogate: nothing a URL could hold; compared as it is.
    encoded = path;
  }
  return encoded.replace(/%[0-9a-f]{2}/gi, (escape) => escape.toUpperCase());
}

interface CompiledRule {
  allow: boolean;
  /** Precedence: the rule's length in octets as written (RFC 9309 §2.2.2, "the most octets"). */
  length: number;
  /** What the path must start with. */
  head: string;
  /** Literal pieces found in order after the head (the rule's `*`s between them). */
  middle: string[];
  /** The last piece after a `*` (null when the rule has no `*`), and whether `$` ends the rule. */
  tail: string | null;
  anchored: boolean;
}

const DISALLOW_ALL: CompiledRule[] = [{ allow: false, length: 1, head: '/', middle: [], tail: null, anchored: false }];

/**
 * Each rule compiled once, the longest first (Allow first on a tie): the first that matches wins.
 * Null past `MAX_ROBOTS_WILDCARD_RULES`.
 */
function compileRules(rules: readonly RawRule[]): CompiledRule[] | null {
  const compiled: CompiledRule[] = [];
  let wildcards = 0;
  for (const rule of rules) {
    const pattern = normalizeEncoding(rule.path);
    const anchored = pattern.endsWith('$');
    const body = anchored ? pattern.slice(0, -1) : pattern;
    // `a**b` is `a*b`: the runs of `*` that made matching slow go before anything else.
    const collapsed = body.replace(/\*+/g, '*');
    if (collapsed.length > MAX_ROBOTS_RULE_LENGTH) continue;
    const pieces = collapsed.split('*');
    if (pieces.length > 1 && ++wildcards > MAX_ROBOTS_WILDCARD_RULES) return null;
    compiled.push({
      allow: rule.allow,
      length: pattern.length,
      head: pieces[0],
      middle: pieces.slice(1, -1),
      tail: pieces.length > 1 ? pieces[pieces.length - 1] : null,
      anchored,
    });
  }
  return compiled.sort((a, b) => b.length - a.length || Number(b.allow) - Number(a.allow));
}

/**
 * Whether `path` (normalized) matches `rule`: the head as a prefix, then each piece at its first
 * place after the one before (the leftmost place leaves the most room to what follows, so it is
 * the right one for `*`), the tail anywhere after them, or at the very end when `$` anchors it.
 */
function ruleMatches(rule: CompiledRule, path: string): boolean {
  if (!path.startsWith(rule.head)) return false;
  if (rule.tail === null) return !rule.anchored || path.length === rule.head.length;
  let position = rule.head.length;
  for (const piece of rule.middle) {
    const found = path.indexOf(piece, position);
    if (found === -1) return false;
    position = found + piece.length;
  }
  if (rule.anchored) return path.length - rule.tail.length >= position && path.endsWith(rule.tail);
  return rule.tail === '' || path.indexOf(rule.tail, position) !== -1;
}

function isPathAllowed(rules: readonly CompiledRule[], path: string): boolean {
  // RFC 9309 §2.2.2: the file itself is always allowed.
  if (path === '/robots.txt') return true;
  for (const rule of rules) if (ruleMatches(rule, path)) return rule.allow;
  return true;
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
