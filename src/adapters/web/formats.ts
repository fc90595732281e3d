/**
 * LLM-ready output for /v1/web: the main content of a page as Markdown or plain text, its
 * metadata, and its links, from one parse of the page on a `linkedom` document (a fast DOM
 * without a browser). `extract/main-content.ts` finds the main content, `extract/markdown.ts`
 * writes Markdown, `extract/text.ts` text, `extract/metadata.ts` reads the metadata.
 *
 * These functions are pure and synchronous. A large page takes a fraction of a second of CPU, so
 * the service runs them in the conversion processes (`converter.ts`); tests and tools call them
 * directly.
 */
import { bodyOf, parseDocument, type DomDocument } from './extract/dom.ts';
import { findMainContent, removeNonContent } from './extract/main-content.ts';
import { toMarkdown } from './extract/markdown.ts';
import { jsonLdObjects, mainJsonLd, readMetadata, type PageMetadata } from './extract/metadata.ts';
import { blockText } from './extract/text.ts';

export { elementsByTagNames } from './extract/dom.ts';
export { METADATA_KEYS, type PageMetadata } from './extract/metadata.ts';

export const OUTPUT_FORMATS = ['raw', 'text', 'markdown'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface ConvertOptions {
  /** `raw` converts nothing (the caller keeps the page as it is). */
  format: OutputFormat;
  links: boolean;
  /** Only the main content (default), or the whole page without scripts, styles and hidden parts. */
  onlyMainContent?: boolean;
  /** Markdown keeps links and images (default), or only the links' text and no images. */
  linksInline?: boolean;
}

export interface ConvertedPage {
  /** The content as `format`; absent for `raw`. */
  content?: string;
  /** The page's metadata; present with the `text` and `markdown` formats. */
  metadata?: PageMetadata;
  /** Present when `links` was asked. */
  links?: string[];
}

/**
 * Everything /v1/web derives from an HTML page, from one parse: the content as `format` with the
 * page's metadata (nothing for `raw`), and the page's links when asked. `pageUrl` makes links
 * absolute.
 */
export function convertPage(html: string, pageUrl: string, options: ConvertOptions): ConvertedPage {
  const document = parseDocument(html);
  const converted: ConvertedPage = {};
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
 * Resolves every link of the page (against `<base href>`, then the page URL), in one pass: with
 * `rewrite`, links and images are rewritten to absolute URLs in the document (fragment-only links
 * stay as they are); returned are the http(s) links, without fragment, deduplicated, in page order.
 */
function resolveLinks(document: DomDocument, pageUrl: string, options: { rewrite: boolean }): string[] {
  const base = baseUrl(document, pageUrl);
  const seen = new Set<string>();
  for (const anchor of document.querySelectorAll('a[href], area[href]')) {
    const value = anchor.getAttribute('href') ?? '';
    const url = resolve(value, base);
    if (url === undefined) continue;
    if (options.rewrite && !value.startsWith('#')) anchor.setAttribute('href', url.href);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    url.hash = '';
    seen.add(url.href);
  }
  if (options.rewrite) {
    for (const image of document.querySelectorAll('img')) {
      // Lazy-loading pages keep the real image in a data attribute.
      const value = image.getAttribute('data-src') ?? image.getAttribute('data-original') ?? image.getAttribute('data-lazy-src') ?? image.getAttribute('src') ?? '';
      if (value === '' || value.startsWith('#') || value.startsWith('data:')) continue;
      const url = resolve(value, base);
      if (url !== undefined) image.setAttribute('src', url.href);
    }
  }
  return [...seen];
}

function render(document: DomDocument, pageUrl: string, options: { format: Exclude<OutputFormat, 'raw'>; onlyMainContent: boolean; linksInline: boolean }): { content: string; metadata: PageMetadata } {
  const objects = jsonLdObjects(document);
  const metadata = readMetadata(document, pageUrl, objects);
  const articleBody = mainJsonLd(objects)?.articleBody;
  let root;
  let title = metadata.title ?? undefined;
  // The page's own heading is the title without the site's name, when the title holds it.
  const heading = document.querySelector('h1')?.textContent?.replace(/\s+/g, ' ').trim();
  if (options.onlyMainContent) {
    const main = findMainContent(document, { articleBody: typeof articleBody === 'string' ? articleBody : undefined });
    root = main.element;
    title = main.title ?? title;
  } else {
    removeNonContent(document, { hidden: false });
    root = bodyOf(document);
  }
  if (options.format === 'text') return { content: blockText(root), metadata };
  if (heading && title !== undefined && comparable(heading) !== '' && comparable(title).includes(comparable(heading))) title = heading;
  return { content: withTitle(toMarkdown(root, { linksInline: options.linksInline }), title), metadata };
}

const comparable = (text: string) => text.replace(/[\s#*_`[\]()\\|:–—-]+/g, ' ').trim().toLowerCase();

/** The title as an H1 on top, unless the Markdown already starts with it. */
function withTitle(markdown: string, title: string | undefined): string {
  if (title === undefined || comparable(title) === '') return markdown;
  const firstLine = markdown.slice(0, markdown.indexOf('\n') === -1 ? undefined : markdown.indexOf('\n'));
  const start = comparable(firstLine);
  const wanted = comparable(title);
  if (start !== '' && (start === wanted || (/^#{1,3} /.test(firstLine) && (wanted.includes(start) || start.includes(wanted))))) return markdown;
  return markdown === '' ? `# ${title}` : `# ${title}\n\n${markdown}`;
}

function baseUrl(document: DomDocument, pageUrl: string): string {
  const declared = document.querySelector('base[href]')?.getAttribute('href');
  return (declared && resolve(declared, pageUrl)?.href) || pageUrl;
}

function resolve(href: string, base: string): URL | undefined {
  try {
    return new URL(href.trim(), base);
  } catch {
    return undefined;
  }
}
