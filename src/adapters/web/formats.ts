/**
 * LLM-ready output for /v1/web: the main content of a page as Markdown or plain text, its
 * metadata, and its links, from one parse of the page on a `linkedom` document (a fast DOM
 * without a browser). `extract/main-content.ts` finds the main content, `extract/markdown.ts`
 * writes Markdown, `extract/text.ts` text, `extract/metadata.ts` reads the metadata.
 *
 * The caller's `extract_rules` and `include_selectors`/`exclude_selectors` are applied here too,
 * on one cheerio parse of the page (the engine they were validated with), before the conversion.
 *
 * These functions are pure and synchronous. A large page takes a fraction of a second of CPU, so
 * the service runs them in the conversion processes (`converter.ts`), never on the event loop;
 * tests and tools call them directly.
 */
import * as cheerio from 'cheerio';
import { extractFromDocument, type ExtractedObject, type ExtractRules } from './extract-rules.ts';
import { filterDocument, hasSelectorFilter } from './selectors.ts';
import { bodyOf, elementsByTagNames, parseDocument, type DomDocument } from './extract/dom.ts';
import { findMainContent, removeNonContent } from './extract/main-content.ts';
import { toMarkdown } from './extract/markdown.ts';
import { jsonLdObjects, mainJsonLd, readMetadata, stepsHtml, type PageMetadata } from './extract/metadata.ts';
import { blockText } from './extract/text.ts';

export { elementsByTagNames } from './extract/dom.ts';
export { METADATA_KEYS, type PageMetadata } from './extract/metadata.ts';

export const OUTPUT_FORMATS = ['raw', 'text', 'markdown'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** How an HTML page is converted: /v1/web's options, as the scraper takes them (`WebRequest`) and hands them on. */
export interface ConvertOptions {
  /** `raw` converts nothing (the caller keeps the page as it is). */
  format: OutputFormat;
  links: boolean;
  /** `text`/`markdown`: only the main content (default), or the whole page without scripts, styles and hidden parts. */
  onlyMainContent?: boolean;
  /** `markdown`: links and images inline (default), or only the links' text and no images. */
  linksInline?: boolean;
  /** CSS selectors: only these elements of an HTML page (and its head) are kept, before anything else is read (selectors.ts). */
  includeSelectors?: readonly string[];
  /** CSS selectors: these elements of the body are removed, after `includeSelectors`, before conversion. */
  excludeSelectors?: readonly string[];
  /** Named CSS rules that passed `validateExtractRules`, read from the whole page as served into `extracted`, before the selectors (extract-rules.ts). */
  extractRules?: ExtractRules;
}

export interface ConvertedPage {
  /**
   * The content as `format`; for `raw`, the page's HTML once the selectors have trimmed it, and
   * absent when no selector was given (the page is as it came).
   */
  content?: string;
  /** What `extractRules` read; present when they were given. */
  extracted?: ExtractedObject;
  /** The page's metadata; present with the `text` and `markdown` formats. */
  metadata?: PageMetadata;
  /** Present when `links` was asked. */
  links?: string[];
}

/**
 * Everything /v1/web derives from an HTML page: what the extraction rules read, the page trimmed
 * by the selectors, the content as `format` with the page's metadata (nothing for `raw`), and the
 * page's links when asked. `pageUrl` makes links absolute. The rules and the selectors share one
 * cheerio parse; the conversion parses the (trimmed) page once, and only when it has something
 * to make.
 */
export function convertPage(html: string, pageUrl: string, options: ConvertOptions): ConvertedPage {
  const converted: ConvertedPage = {};
  const filter = { include: options.includeSelectors, exclude: options.excludeSelectors };
  const filtering = hasSelectorFilter(filter);
  if (options.extractRules !== undefined || filtering) {
    const $ = cheerio.load(html);
    // The rules read the page as served, before the selectors trim it.
    if (options.extractRules !== undefined) converted.extracted = extractFromDocument($, options.extractRules);
    if (filtering) {
      html = filterDocument($, filter);
      if (options.format === 'raw') converted.content = html;
    }
  }
  if (options.format === 'raw' && !options.links) return converted;
  const document = parseDocument(html);
  // Markdown shows link and image targets, so they are made absolute in the document. Text shows
  // none, and leaving them as written changes nothing it keeps.
  if (options.links || options.format === 'markdown') {
    const links = resolveLinks(document, pageUrl, { rewrite: options.format === 'markdown' });
    if (options.links) converted.links = links;
  }
  if (options.format !== 'raw') {
    const rendered = render(document, pageUrl, { format: options.format, onlyMainContent: options.onlyMainContent ?? true, linksInline: options.linksInline ?? true });
    converted.content = rendered.content;
    converted.metadata = rendered.metadata;
  }
  return converted;
}

/** The page's main content as `format`. `pageUrl` makes links absolute. */
export function renderContent(html: string, pageUrl: string, options: { format: Exclude<OutputFormat, 'raw'>; onlyMainContent?: boolean; linksInline?: boolean }): string {
  return convertPage(html, pageUrl, { ...options, links: false }).content ?? '';
}

/** Every http(s) link of the page, absolute, without fragment, deduplicated, in page order. */
export function extractLinks(html: string, pageUrl: string): string[] {
  return convertPage(html, pageUrl, { format: 'raw', links: true }).links ?? [];
}

/**
 * Resolves every link of the page (against `<base href>`, then the page URL), in one walk of the
 * document: with `rewrite`, links and images are rewritten to absolute URLs in the document
 * (fragment-only links stay as they are); returned are the http(s) links, without fragment,
 * deduplicated, in page order. A value written many times (a site's menu on every item) is
 * resolved once.
 */
function resolveLinks(document: DomDocument, pageUrl: string, options: { rewrite: boolean }): string[] {
  const elements = elementsByTagNames(document, options.rewrite ? ['a', 'area', 'base', 'img'] : ['a', 'area', 'base']);
  const declared = elements.find((element) => element.localName.toLowerCase() === 'base' && element.hasAttribute('href'))?.getAttribute('href');
  const base = (declared && resolve(declared, pageUrl)?.href) || pageUrl;
  const resolved = new Map<string, { href: string; link?: string } | null>();
  const resolveOnce = (value: string) => {
    let known = resolved.get(value);
    if (known === undefined) {
      const url = resolve(value, base);
      if (url === undefined) {
        known = null;
      } else {
        known = { href: url.href };
        if (url.protocol === 'http:' || url.protocol === 'https:') {
          url.hash = '';
          known.link = url.href;
        }
      }
      resolved.set(value, known);
    }
    return known;
  };
  const seen = new Set<string>();
  for (const element of elements) {
    const name = element.localName.toLowerCase();
    if (name === 'img') {
      // Lazy-loading pages keep the real image in a data attribute.
      const value = element.getAttribute('data-src') ?? element.getAttribute('data-original') ?? element.getAttribute('data-lazy-src') ?? element.getAttribute('src') ?? '';
      if (value === '' || value.startsWith('#') || value.startsWith('data:')) continue;
      const url = resolveOnce(value);
      if (url !== null) element.setAttribute('src', url.href);
    } else if (name !== 'base' && element.hasAttribute('href')) {
      const value = element.getAttribute('href') ?? '';
      const url = resolveOnce(value);
      if (url === null) continue;
      if (options.rewrite && !value.startsWith('#')) element.setAttribute('href', url.href);
      if (url.link !== undefined) seen.add(url.link);
    }
  }
  return [...seen];
}

function render(document: DomDocument, pageUrl: string, options: { format: Exclude<OutputFormat, 'raw'>; onlyMainContent: boolean; linksInline: boolean }): { content: string; metadata: PageMetadata } {
  const objects = jsonLdObjects(document);
  const metadata = readMetadata(document, pageUrl, objects);
  const described = mainJsonLd(objects);
  const articleBody = described?.articleBody;
  let root;
  let title = metadata.title ?? undefined;
  // The page's own heading is the title without the site's name, when the title holds it.
  const heading = document.querySelector('h1')?.textContent?.replace(/\s+/g, ' ').trim();
  if (options.onlyMainContent) {
    const main = findMainContent(document, { articleBody: typeof articleBody === 'string' ? articleBody : undefined, stepsHtml: stepsHtml(described) });
    root = main.element;
    title = main.title ?? title;
  } else {
    removeNonContent(document, { hidden: false });
    root = bodyOf(document);
  }
  if (heading && title !== undefined && comparable(heading) !== '' && comparable(title).includes(comparable(heading))) title = heading;
  // Both formats hold the same content: the title on top when the content does not start with it.
  if (options.format === 'text') return { content: withTitle(blockText(root), title, { mark: '', gap: '\n' }), metadata };
  return { content: withTitle(toMarkdown(root, { linksInline: options.linksInline }), title), metadata };
}

const comparable = (text: string) => text.replace(/[\s#*_`[\]()\\|:–—-]+/g, ' ').trim().toLowerCase();

/**
 * The title on top (an H1 in Markdown, a line of its own in text), unless the content already
 * starts with it: a first line that is the title, or a Markdown heading that holds it or that it holds.
 */
function withTitle(content: string, title: string | undefined, { mark, gap } = { mark: '# ', gap: '\n\n' }): string {
  if (title === undefined || comparable(title) === '') return content;
  const firstLine = content.slice(0, content.indexOf('\n') === -1 ? undefined : content.indexOf('\n'));
  const start = comparable(firstLine);
  const wanted = comparable(title);
  if (start !== '' && (start === wanted || (/^#{1,3} /.test(firstLine) && (wanted.includes(start) || start.includes(wanted))))) return content;
  return content === '' ? `${mark}${title}` : `${mark}${title}${gap}${content}`;
}

function resolve(href: string, base: string): URL | undefined {
  try {
    return new URL(href.trim(), base);
  } catch {
    return undefined;
  }
}
