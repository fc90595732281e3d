/**
 * URLs of one site, pure: the canonical form a crawl or a map fetches and dedupes by, what counts
 * as the same site, and the users' path filters (include/exclude regular expressions, RE2 syntax).
 */
import { getDomain } from 'tldts';
import { RE2JS } from 're2js';
import { MAX_URL_LENGTH } from '../../core/limits.ts';
import { trimTrailing } from '../../core/text.ts';

/** Query parameters that only track the visitor: the same page with or without them. */
const TRACKING_PARAMETERS = new Set(['gclid', 'dclid', 'fbclid', 'msclkid', 'yclid', 'igshid', 'mc_cid', 'mc_eid', '_ga', '_gl', 'ref_src']);

function isTrackingParameter(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.startsWith('utm_') || TRACKING_PARAMETERS.has(lower);
}

/** A query parameter's name as a form decodes it (`+` is a space); the raw text when it is not valid percent-encoding. */
function parameterName(pair: string): string {
  const equals = pair.indexOf('=');
  const raw = (equals === -1 ? pair : pair.slice(0, equals)).replace(/\+/g, ' ');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * The query without tracking parameters, the rest sorted by name. Pairs are kept byte for byte
 * (re-encoding them would change what the server is asked), and the sort is stable, so repeated
 * names keep their order (`a=2&a=1` can mean something).
 */
function cleanQuery(search: string): string {
  if (search.length <= 1) return '';
  const pairs = search
    .slice(1)
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => ({ pair, name: parameterName(pair) }))
    .filter(({ name }) => !isTrackingParameter(name));
  pairs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return pairs.length === 0 ? '' : `?${pairs.map(({ pair }) => pair).join('&')}`;
}

export interface CanonicalUrl {
  /** What to fetch: no fragment, lowercase scheme and host, no default port, no tracking parameters, the query sorted; the path as given. */
  url: string;
  /**
   * What to dedupe by: `url` with a trailing slash of a non-root path removed (`/a/` and `/a` are
   * one page). `http` and `https` of the same host and path stay two keys: telling whether a site
   * serves the same page on both would take a fetch, and a crawl usually meets only one of them.
   */
  key: string;
}

/**
 * The canonical form of `raw` (resolved against `base` when relative), or null unless it is an
 * http(s) URL that parses and carries no credentials (`user:pass@`: never fetched, never listed).
 */
export function canonicalUrl(raw: string, base?: string): CanonicalUrl | null {
  const trimmed = raw.trim();
  if (trimmed.length > MAX_URL_LENGTH) return null;
  let parsed: URL;
  try {
    parsed = new URL(trimmed, base);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
  if (parsed.username !== '' || parsed.password !== '') return null;
  if (parsed.hostname === '') return null;
  // WHATWG parsing already lowercased the scheme and host and dropped the default port.
  parsed.hash = '';
  const query = cleanQuery(parsed.search);
  const origin = `${parsed.protocol}//${parsed.host}`;
  const url = `${origin}${parsed.pathname}${query}`;
  // Resolving against a base can make a URL longer than the one given.
  if (url.length > MAX_URL_LENGTH) return null;
  return { url, key: `${origin}${withoutTrailingSlashes(parsed.pathname)}${query}` };
}

/** A path without its trailing slashes (`/a//` → `/a`), the root kept as `/`. */
function withoutTrailingSlashes(path: string): string {
  return path.length > 1 ? trimTrailing(path, '/') || '/' : path;
}

/** A hostname as one site: lowercase, no trailing dot, no leading `www.`. */
function siteHost(hostname: string): string {
  const bare = hostname.toLowerCase().replace(/\.$/, '');
  return bare.startsWith('www.') ? bare.slice(4) : bare;
}

function isIpLiteral(hostname: string): boolean {
  return hostname.startsWith('[') || /^\d{1,3}(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * Which URLs belong to the site of `startUrl`: http(s), the same hostname (`www.example.com` and
 * `example.com` are one site) and the same port. With `allowSubdomains`, any host under the
 * start URL's registrable domain (private suffixes such as `github.io` count as public ones, so
 * one user's pages never take in another's). An IP-literal start URL matches only itself.
 *
 * Ports are compared as written: an explicit port must match, while the default ports of `http`
 * (80) and `https` (443) both read as "none", so a link from the https site to its http pages
 * stays on the site.
 */
export function siteScope(startUrl: string, options: { allowSubdomains: boolean }): (url: URL) => boolean {
  const start = new URL(startUrl);
  const port = start.port;
  if (isIpLiteral(start.hostname)) {
    return (url) => isHttp(url) && url.port === port && url.hostname === start.hostname;
  }
  const host = siteHost(start.hostname);
  const domain = options.allowSubdomains ? getDomain(host, { allowPrivateDomains: true }) : null;
  return (url) => {
    if (!isHttp(url) || url.port !== port) return false;
    const candidate = siteHost(url.hostname);
    if (candidate === host) return true;
    return domain !== null && (candidate === domain || candidate.endsWith(`.${domain}`));
  };
}

function isHttp(url: URL): boolean {
  return url.protocol === 'http:' || url.protocol === 'https:';
}

/** Longest pattern accepted, in characters. */
export const MAX_PATH_PATTERN_LENGTH = 500;
/** Most patterns in one list. */
export const MAX_PATH_PATTERNS = 100;
/**
 * The most RE2 instructions one list compiles to, all its patterns together. Matching is linear
 * in the path, times the pattern's size at worst: this bounds one URL's check to a few hundred
 * milliseconds on the longest URL taken (8 KB), while a hundred ordinary patterns (`^/blog/` is
 * 9 instructions, `^/(en|de)/products/[0-9]+$` 27) stay well inside it.
 */
export const MAX_PATH_PATTERNS_PROGRAM = 1000;

export interface PathPatterns {
  ok: true;
  patterns: readonly RE2JS[];
  /** True when any pattern matches the URL's path (raw, percent-encoded as the URL has it; no query). */
  test(url: URL): boolean;
}

export interface PathPatternsRefused {
  ok: false;
  /** The position of the first refused pattern; null when the list itself is refused. */
  index: number | null;
  /** The 422's message for the list's field (`attribute` as messages name it: "include paths"). */
  message(attribute: string): string;
}

/**
 * Reads a list of regular expressions as sent (null or absent is an empty list): each a string
 * of at most 500 characters in RE2 syntax, at most 100 of them, compiling to at most
 * `MAX_PATH_PATTERNS_PROGRAM` instructions together. The first one refused is reported by its
 * index, for a 422 on that field.
 *
 * Patterns run on the server against every URL a crawl finds, so they are matched by RE2's
 * automaton (re2js), in time linear in the path: `(a|a)*`, `a*a*a*b` and `(\w|\d)*` cost what
 * `a*` costs. RE2 has no look-around and no back-references; a pattern using them is refused
 * with the reason.
 *
 * Patterns are matched against the URL's pathname only (`/blog/2024/post`, percent-encoded as in
 * the URL), unanchored: `^/blog/` for a prefix, `\.pdf$` for a suffix.
 */
export function compilePathPatterns(patterns: unknown): PathPatterns | PathPatternsRefused {
  if (patterns === undefined || patterns === null) return accepted([]);
  if (!Array.isArray(patterns) || patterns.length > MAX_PATH_PATTERNS) {
    return refused(null, (attribute) => `The ${attribute} must be an array of at most ${MAX_PATH_PATTERNS} regular expressions.`);
  }
  const compiled: RE2JS[] = [];
  let program = 0;
  for (const [index, pattern] of patterns.entries()) {
    if (typeof pattern !== 'string') return refused(index, (attribute) => `The ${attribute}.${index} must be a string.`);
    if (pattern.length > MAX_PATH_PATTERN_LENGTH) {
      return refused(index, (attribute) => `The ${attribute}.${index} must not be greater than ${MAX_PATH_PATTERN_LENGTH} characters.`);
    }
    let regex: RE2JS;
    try {
      regex = RE2JS.compile(pattern);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return refused(index, (attribute) => `The ${attribute}.${index} must be a valid regular expression in RE2 syntax (${reason}).`);
    }
    program += regex.programSize();
    if (program > MAX_PATH_PATTERNS_PROGRAM) {
      return refused(index, (attribute) => `The ${attribute} must be simpler: together they may compile to at most ${MAX_PATH_PATTERNS_PROGRAM} RE2 instructions, and the first ${index + 1} take ${program}.`);
    }
    compiled.push(regex);
  }
  return accepted(compiled);
}

function accepted(patterns: readonly RE2JS[]): PathPatterns {
  return { ok: true, patterns, test: (url) => patterns.some((pattern) => pattern.matcher(url.pathname).find()) };
}

function refused(index: number | null, message: (attribute: string) => string): PathPatternsRefused {
  return { ok: false, index, message };
}

/**
 * The crawl's path filter: a URL passes when some include pattern matches its path (no include
 * patterns: every path) and no exclude pattern does.
 */
export function pathFilter(include: PathPatterns, exclude: PathPatterns): (url: URL) => boolean {
  return (url) => (include.patterns.length === 0 || include.test(url)) && !exclude.test(url);
}
