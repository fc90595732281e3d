/**
 * HTML helpers every adapter that reads pages shares: parsing, text and link extraction, and
 * spotting the challenge widgets (captchas) upstreams put in front of their content.
 */
import * as cheerio from 'cheerio';
import type { Cheerio, CheerioAPI } from 'cheerio';
import type { AnyNode } from 'domhandler';
import type { UpstreamResponse } from './types.ts';
import { pathOf } from './request.ts';

/**
 * Parses with scripting disabled so `<noscript>` content is markup, not text: some engines put
 * the display URL of a result inside one.
 */
export function loadHtml(body: string): CheerioAPI {
  return cheerio.load(body, { scriptingEnabled: false });
}
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/** Text with its character references decoded (`&amp;`, `&#39;`, `&#x1F600;`); an unknown or out-of-range one stays as written. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, entity: string) => {
    if (entity[0] === '#') {
      const code = entity[1] === 'x' || entity[1] === 'X' ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[entity.toLowerCase()] ?? whole;
  });
}

export function cleanText(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
export function textOf(node: Cheerio<AnyNode>): string {
  return cleanText(node.first().text());
}
/** The first element under `scope` matching the first selector, in priority order, that matches. */
export function findFirst(scope: Cheerio<AnyNode>, selectors: string[]): Cheerio<AnyNode> | undefined {
  for (const selector of selectors) {
    const found = scope.find(selector);
    if (found.length > 0) return found.first();
  }
  return undefined;
}
export function textOfFirst(scope: Cheerio<AnyNode>, selectors: string[]): string {
  const found = findFirst(scope, selectors);
  return found ? textOf(found) : '';
}
/** The page's text (scripts and styles are gone since `openPage`), computed once on first use. */
export function pageTextReader($: CheerioAPI): () => string {
  let text: string | undefined;
  return () => (text ??= cleanText($.root().text()));
}
/**
 * Resolves `href` against the page URL, lets `unwrap` replace an engine's redirect link by its
 * target, and keeps only absolute http(s) URLs (javascript:, data:, fragments are dropped).
 */
export function resolveLink(
  href: string | undefined,
  pageUrl: string,
  unwrap?: (url: URL) => string | undefined,
): string | undefined {
  if (!href) return undefined;
  let url: URL;
  try {
    url = new URL(href.trim(), pageUrl);
  } catch {
    return undefined;
  }
  const target = unwrap?.(url);
  if (target !== undefined) return resolveLink(target, pageUrl);
  return url.protocol === 'http:' || url.protocol === 'https:' ? url.toString() : undefined;
}
/** Challenge widgets any upstream may put in front of its content. */
const CHALLENGE_SELECTORS = [
  'form[action*="captcha" i]',
  '#captcha-form',
  '.g-recaptcha',
  'iframe[src*="recaptcha" i]',
  '.h-captcha',
  'iframe[src*="hcaptcha" i]',
  '.cf-turnstile',
  '#turnstile-widget',
  '#challenge-form',
  '#challenge-running',
].join(', ');

/** Why the page is a challenge rather than content, or undefined. */
export function genericChallenge($: CheerioAPI, response: UpstreamResponse): string | undefined {
  if (/\/(captcha|sorry)\b/i.test(pathOf(response.url))) return `redirected to a challenge page (${response.url})`;
  if ($(CHALLENGE_SELECTORS).length > 0) return 'captcha challenge';
  if (/captcha|are you a robot|verify you are human/i.test($('title').text())) return 'captcha challenge';
  return undefined;
}

