/**
 * LLM-ready output for /v1/web: the main content of a page as Markdown or plain text, and the
 * page's links. Mozilla's Readability (Firefox Reader View) finds the article, on a `linkedom`
 * document (a fast DOM without a browser); `turndown` with its GFM tables writes the Markdown
 * (headings, lists, tables, fenced code blocks). When Readability finds no article, the whole body is used without
 * scripts, styles and navigation.
 *
 * These functions are pure and synchronous. A large page takes seconds of CPU, so the service
 * runs them in the conversion processes (`converter.ts`); tests and tools call them directly.
 */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';
import { tables, strikethrough } from 'turndown-plugin-gfm';

export const OUTPUT_FORMATS = ['raw', 'text', 'markdown'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/**
 * What is never content: code, styling, templates and site chrome; a head or title that a page
 * without `<html>` leaves inside the body (the title is read before they go); and framesets, which
 * hold only frames, and which turndown's HTML parser would let replace the whole fragment it reads.
 */
const NON_CONTENT = 'head, title, script, style, noscript, template, iframe, frameset, frame, object, embed, svg, canvas, nav, [role="navigation"], footer, [role="contentinfo"], aside, form, dialog';

/** The part of the DOM used here (the project compiles without the DOM library; linkedom implements these). */
interface DomNode {
  nodeType: number;
  textContent: string | null;
  childNodes: Iterable<DomNode>;
}
interface DomElement extends DomNode {
  tagName: string;
  localName: string;
  innerHTML: string;
  parentNode: DomElement | DomDocument | null;
  firstElementChild: DomElement | null;
  nextElementSibling: DomElement | null;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  remove(): void;
  querySelectorAll(selector: string): Iterable<DomElement>;
}
interface DomDocument {
  body: DomElement | null;
  documentElement: DomElement;
  firstElementChild: DomElement | null;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): Iterable<DomElement>;
}

/**
 * The page as a document with an `<html>` root, as a browser's parser always builds one. linkedom
 * keeps only what the markup has: a page without any element (an empty body, bare text, a doctype
 * or a comment alone) gives a document without a root, on which `body` throws, and a fragment
 * (`<p>…</p>`) makes its first element the root, under which `body` comes out empty. Such a page
 * is parsed again inside `<html><body>`, so its text is the body's.
 */
function parseDocument(html: string): DomDocument {
  const parsed = parseHTML(html).document as { documentElement: DomElement | null };
  if (parsed.documentElement?.localName === 'html') return parsed as DomDocument;
  return parseHTML(`<!DOCTYPE html><html><body>${html}</body></html>`).document as DomDocument;
}

/** The least share of the page's text an article must hold to be taken as the main content. */
const MIN_ARTICLE_SHARE = 0.6;

// node-html-markdown was tried first: it takes seconds per 100 KB and grows quadratically
// (18 s for 300 KB), turndown stays linear (0.4 s for 300 KB).
const markdown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_' });
markdown.use([tables, strikethrough]);
// The GFM table rules read a table's first row without checking there is one, so a table without
// rows (`<table></table>`, common on real pages) threw. Such a table is its content, if any; this
// rule is added last, so it is asked first.
markdown.addRule('tableWithoutRows', {
  filter: (node) => node.nodeName === 'TABLE' && (node as unknown as { rows?: ArrayLike<unknown> }).rows?.[0] === undefined,
  replacement: (content) => (content.trim() === '' ? '' : `\n\n${content}\n\n`),
});

/**
 * Readability as it is, but finding elements by tag name with one walk instead of
 * `querySelectorAll`: linkedom compiles the selector into a CSS matcher on every call, and
 * Readability makes thousands of such calls on a large page (one per paragraph, per candidate).
 * The walk returns what `querySelectorAll` does for a list of tag names: the descendants in
 * document order, names compared without case, the inside of `<template>` skipped (a unit test
 * holds the two to the same answers). About a tenth of a 1 MB page's conversion time.
 */
class LinkedomReadability extends Readability<DomElement> {
  _getAllNodesWithTag(root: DomElement | DomDocument, tagNames: string[]): DomElement[] {
    return elementsByTagNames(root, tagNames);
  }
}

/** The descendants of `root` whose tag is one of `tagNames`, as `querySelectorAll(tagNames.join(','))` finds them on linkedom. */
export function elementsByTagNames(root: DomElement | DomDocument, tagNames: readonly string[]): DomElement[] {
  const names = new Set(tagNames.map((name) => name.toLowerCase()));
  const found: DomElement[] = [];
  let node = root.firstElementChild;
  while (node !== null) {
    if (names.has(node.localName.toLowerCase())) found.push(node);
    const child = node.localName === 'template' ? null : node.firstElementChild;
    if (child !== null) {
      node = child;
      continue;
    }
    // Up to the nearest ancestor (below root) with a next sibling.
    let next: DomElement | null = null;
    for (let at: DomElement | DomDocument | null = node; at !== root && at !== null; at = (at as DomElement).parentNode) {
      next = (at as DomElement).nextElementSibling;
      if (next !== null) break;
    }
    node = next;
  }
  return found;
}

export interface ConvertOptions {
  /** `raw` converts nothing (the caller keeps the page as it is). */
  format: OutputFormat;
  links: boolean;
}

export interface ConvertedPage {
  /** The main content as `format`; absent for `raw`. */
  content?: string;
  /** Present when `links` was asked. */
  links?: string[];
}

/**
 * Everything /v1/web derives from an HTML page, from one parse: the main content as `format`
 * (nothing for `raw`), and the page's links when asked. `pageUrl` makes links absolute.
 */
export function convertPage(html: string, pageUrl: string, options: ConvertOptions): ConvertedPage {
  const document = parseDocument(html);
  const converted: ConvertedPage = {};
  // Markdown shows link and image targets, so they are made absolute in the document. Text shows
  // none, and leaving them as written changes nothing it keeps: what Readability decides depends
  // on an href only through whether it starts with "#", which rewriting never changes.
  if (options.links || options.format === 'markdown') {
    const links = resolveLinks(document, pageUrl, { rewrite: options.format === 'markdown' });
    if (options.links) converted.links = links;
  }
  if (options.format !== 'raw') converted.content = render(document, options.format);
  return converted;
}

/** The page's main content as `format`. `pageUrl` makes links absolute. */
export function renderContent(html: string, pageUrl: string, options: { format: Exclude<OutputFormat, 'raw'> }): string {
  return convertPage(html, pageUrl, { format: options.format, links: false }).content ?? '';
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
    for (const image of document.querySelectorAll('img[src]')) {
      const value = image.getAttribute('src') ?? '';
      if (value.startsWith('#')) continue;
      const url = resolve(value, base);
      if (url !== undefined) image.setAttribute('src', url.href);
    }
  }
  return [...seen];
}

/** The main content of `document` (which this edits) as `format`. */
function render(document: DomDocument, format: Exclude<OutputFormat, 'raw'>): string {
  const title = document.querySelector('title')?.textContent?.trim() || undefined;
  // Site chrome goes first: on a short page Readability keeps whatever it has, navigation included.
  const body = document.body ?? document.documentElement;
  for (const element of body.querySelectorAll(NON_CONTENT)) element.remove();
  const pageText = collapsedLength(body.textContent ?? '');
  // Readability edits the document it reads, and the fallback needs the body as it is now: its
  // markup is kept (a string costs a fraction of copying the whole document for Readability).
  const bodyHtml = body.innerHTML;
  let article: ReturnType<LinkedomReadability['parse']> = null;
  try {
    // The article comes back as its element: Markdown serialises it, text reads it directly.
    article = new LinkedomReadability(document, { serializer: (element) => element as DomElement }).parse();
  } catch {
    article = null;
  }
  // An "article" holding a small part of the page's text is a guess on a page that has none (a
  // results page, a listing): the whole cleaned body serves the reader better then.
  const articleText = collapsedLength(article?.textContent ?? '');
  const found = article?.content && articleText > 0 && articleText >= pageText * MIN_ARTICLE_SHARE ? article.content : undefined;
  const mainTitle = (found && article?.title?.trim()) || title;
  if (format === 'markdown') {
    const converted = markdown.turndown(found ? found.innerHTML : bodyHtml).replace(/\n{3,}/g, '\n\n').trim();
    return withTitle(converted, mainTitle, (heading) => `# ${heading}`);
  }
  const root = found ?? parseDocument(`<!DOCTYPE html><html><body>${bodyHtml}</body></html>`).body!;
  return withTitle(blockText(root), mainTitle, (heading) => heading);
}

/** Length of `text` with whitespace runs collapsed to one space and the ends trimmed. */
function collapsedLength(text: string): number {
  return text.replace(/\s+/g, ' ').trim().length;
}

/** Readability drops a heading that repeats the title; put the title back on top when it is missing. */
function withTitle(text: string, title: string | undefined, format: (title: string) => string): string {
  if (title === undefined || text.slice(0, 2 * title.length + 20).includes(title)) return text;
  return text === '' ? format(title) : `${format(title)}\n\n${text}`;
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

const BLOCK_ELEMENTS = new Set([
  'ADDRESS', 'ARTICLE', 'BLOCKQUOTE', 'DD', 'DIV', 'DL', 'DT', 'FIELDSET', 'FIGCAPTION', 'FIGURE', 'H1', 'H2', 'H3', 'H4',
  'H5', 'H6', 'HEADER', 'HR', 'LI', 'MAIN', 'OL', 'P', 'SECTION', 'TABLE', 'TR', 'UL', 'DETAILS', 'SUMMARY',
]);

/** Text with one line per block (paragraph, heading, list item, table row), whitespace collapsed inside lines, `<pre>` kept as is. */
function blockText(root: DomElement): string {
  const lines: string[] = [];
  let current = '';
  const flush = () => {
    const line = current.replace(/[ \t\r\n\f]+/g, ' ').trim();
    if (line !== '') lines.push(line);
    current = '';
  };
  const walk = (node: DomNode) => {
    if (node.nodeType === 3) {
      current += node.textContent ?? '';
      return;
    }
    if (node.nodeType !== 1) return;
    const element = node as DomElement;
    const tag = element.tagName.toUpperCase();
    if (tag === 'BR') {
      flush();
      return;
    }
    if (tag === 'PRE') {
      flush();
      const text = (element.textContent ?? '').replace(/\s+$/, '');
      if (text.trim() !== '') lines.push(text);
      return;
    }
    const block = BLOCK_ELEMENTS.has(tag);
    if (block) flush();
    for (const child of element.childNodes) walk(child);
    if (tag === 'TD' || tag === 'TH') current += '\t';
    if (block) flush();
  };
  walk(root);
  flush();
  return lines.join('\n');
}
