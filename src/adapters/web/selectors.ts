/**
 * CSS selectors a caller sends to `/v1/web` (`include_selectors`, `exclude_selectors`,
 * `extract_rules`): checked once at validation, on the request thread (only the selectors are
 * parsed, never the page), then applied to the page in the conversion process, before the
 * conversion (formats.ts). Cheerio (css-select) is the engine, so what validates is what runs.
 */
import * as cheerio from 'cheerio';
import { compile } from 'css-select';
import { isTraversal, parse } from 'css-what';

/** Longest selector accepted: anything longer is no hand-written selector. */
export const MAX_SELECTOR_LENGTH = 500;
/** Selectors per list (`include_selectors`, `exclude_selectors`). */
export const MAX_SELECTORS = 50;

/**
 * True when css-select can run the selector. css-what accepts a trailing combinator (`div >`),
 * which selects nothing useful and is almost always a typo, so it is refused too.
 */
export function isValidSelector(selector: unknown): selector is string {
  if (typeof selector !== 'string' || selector.trim() === '' || selector.length > MAX_SELECTOR_LENGTH) return false;
  try {
    const groups = parse(selector);
    if (groups.some((tokens) => tokens.length === 0 || isTraversal(tokens[tokens.length - 1]!))) return false;
    compile(selector);
    return true;
  } catch {
    return false;
  }
}

export interface SelectorFilter {
  /** Only these elements (and what they contain) are kept, in page order. */
  include?: readonly string[];
  /** These elements are removed, after `include`. */
  exclude?: readonly string[];
}

export const hasSelectorFilter = (filter: SelectorFilter): boolean => (filter.include?.length ?? 0) > 0 || (filter.exclude?.length ?? 0) > 0;

/**
 * The page with only the included elements and without the excluded ones. The `<head>` is kept
 * whole, so the title and metadata still come through. An element inside another kept element
 * is kept once, as part of it. Nothing matching `include` leaves an empty body.
 */
export function applySelectorFilter(html: string, filter: SelectorFilter): string {
  if (!hasSelectorFilter(filter)) return html;
  return filterDocument(cheerio.load(html), filter);
}

/**
 * `applySelectorFilter` on a page already loaded (which this edits): the page's HTML once
 * filtered. The extraction rules read the same document first, so a page is parsed once for both.
 */
export function filterDocument($: cheerio.CheerioAPI, filter: SelectorFilter): string {
  const include = filter.include ?? [];
  if (include.length > 0) {
    const matched = $(include.join(', ')).toArray();
    const kept = new Set(matched);
    // Outermost matches only: a match whose ancestor is also a match is already inside it.
    const outermost = matched.filter((element) => !$(element).parents().toArray().some((parent) => kept.has(parent)));
    const parts = outermost.map((element) => $.html(element));
    $('body').empty().append(parts.join('\n'));
  }
  const exclude = filter.exclude ?? [];
  // Excluding from the body only: removing <head> parts would lose the page's metadata.
  if (exclude.length > 0) $('body').find(exclude.join(', ')).remove();
  return $.html();
}
