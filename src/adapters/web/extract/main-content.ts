/**
 * Finds a page's main content. Mozilla's Readability (Firefox Reader View) scores the page's
 * blocks by text and link density and picks the article; around it:
 *
 * - before scoring, only what is never content goes (code, styling, hidden elements, form
 *   controls); site chrome (`nav`, `footer`, `aside`, dialogs) goes unless it holds the article
 *   markers or most of the page's text, and `form` is always kept (ASP.NET pages live in one);
 * - the page's own markers vote: schema.org `articleBody` (microdata, or JSON-LD when the page's
 *   markup lost the text), a single `<article>`, `<main>`;
 * - after scoring, blocks inside the article that are boilerplate by name and link density
 *   (share bars, related links, comment sections, tag lists) go;
 * - there is no whole-page fallback: a page without an article gives what Readability found, and
 *   only a page where it found nothing at all gives the cleaned body.
 */
import { Readability } from '@mozilla/readability';
import { bodyOf, collapsedLength, elementsByTagNames, parseDocument, type DomDocument, type DomElement } from './dom.ts';

/** Never content: code, styling, embedded objects, and controls without text of their own. */
const NEVER_CONTENT = 'script, style, noscript, template, iframe, frameset, frame, object, embed, svg, canvas, link, meta, input, button, select, textarea, dialog';

/** Hidden by the markup itself. Kept in the whole page: pages behind a consent overlay hide their content until it is accepted. */
const HIDDEN = '[hidden], [aria-hidden="true"], [style*="display:none" i], [style*="display: none" i]';

/** Site chrome: removed before scoring unless it may hold the content. */
const CHROME = 'nav, [role="navigation"], footer, [role="contentinfo"], aside, [role="complementary"], [role="dialog"], [role="banner"], header';

const ARTICLE_MARKERS = 'article, main, [role="main"], [itemprop~="articleBody"], [itemprop~="text"]';

/** Class or id words of blocks inside an article that are not its text. */
const BOILERPLATE_NAME = /(^|[\s_-])(share|sharing|social|related|recommend(ed|ations)?|newsletter|subscribe|subscription|promo|advert(isement)?|ads?|sponsor(ed)?|comments?|disqus|respond|reply|tags?|tag-?list|breadcrumbs?|author-?(bio|box|info)|byline|post-?meta|entry-?meta|meta-?data|popular|trending|read-?more|more-?stories|outbrain|taboola|toolbar|pagination|pager|cookie|consent|signup|login|print|follow|jump-?link)($|[\s_-])/i;

/** Readability, finding elements by tag with one walk (linkedom compiles a selector per `querySelectorAll`). */
class LinkedomReadability extends Readability<DomElement> {
  _getAllNodesWithTag(root: DomElement | DomDocument, tagNames: string[]): DomElement[] {
    return elementsByTagNames(root, tagNames);
  }

  /** formats.ts has made every link and image absolute already (against `<base>` and the page URL). */
  _fixRelativeUris(): void {}
}

export interface MainContent {
  /** The element holding the main content (detached from the page, or the page's body). */
  element: DomElement;
  /** Readability's title for the article (the page title without the site's name), if any. */
  title?: string;
  /** True when the content is the whole cleaned body (nothing looked like an article). */
  wholePage: boolean;
}

/** How much more text than Readability's choice the page's marked article may hold and still win (measured on bench/content.ts). */
const MARKED_MIN = 1.05;
const MARKED_MAX = 4;

/** Whether the text `outer` holds the start of `inner`'s (or `inner` has none). */
function holds(outer: string, inner: DomElement | null): boolean {
  const start = (inner?.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 80);
  return start === '' || outer.includes(start);
}

/** Removes what is never content, everywhere in the document, and with `hidden` what the markup hides. */
export function removeNonContent(document: DomDocument, options: { hidden: boolean }): void {
  const body = bodyOf(document);
  for (const element of [...body.querySelectorAll(options.hidden ? `${NEVER_CONTENT}, ${HIDDEN}` : NEVER_CONTENT)]) element.remove();
  for (const element of [...document.querySelectorAll('head, title')]) if (body.contains(element)) element.remove();
}

/** Comment threads, by the names blog and news engines give them. */
const COMMENTS = /(^|[\s_-])(comments?|comment-?list|commentlist|comments-?area|disqus_thread|disqus|respond|replies|discussion)($|[\s_-])/i;

/** Removes site chrome and comment threads that cannot hold the content. */
function removeChrome(body: DomElement): void {
  const pageText = collapsedLength(body.textContent);
  const chrome = [...body.querySelectorAll(CHROME)];
  for (const element of body.querySelectorAll('[id], [class]')) {
    if (element.localName !== 'body' && element.localName !== 'html' && COMMENTS.test(`${element.getAttribute('id') ?? ''} ${element.getAttribute('class') ?? ''}`)) chrome.push(element);
  }
  for (const element of chrome) {
    if (!body.contains(element)) continue; // inside chrome removed already
    if (element.querySelector(ARTICLE_MARKERS) !== null) continue;
    if (element.closest(ARTICLE_MARKERS) !== null && element.localName === 'header') continue; // an article's own header
    if (collapsedLength(element.textContent) > pageText * 0.5) continue;
    element.remove();
  }
}

/** The page's own marker of its article body: one `articleBody`, else one `<article>`, with real text. */
function markedArticle(body: DomElement): DomElement | undefined {
  const single = (selector: string) => {
    const found = [...body.querySelectorAll(selector)].filter((element) => collapsedLength(element.textContent) >= 250);
    return found.length === 1 ? found[0] : undefined;
  };
  return single('[itemprop~="articleBody"]') ?? single('article');
}

function linkDensity(element: DomElement): number {
  const length = collapsedLength(element.textContent);
  if (length === 0) return 0;
  let links = 0;
  for (const anchor of element.querySelectorAll('a')) links += collapsedLength(anchor.textContent);
  return links / length;
}

/** Captions and credits of pictures: not the article's text. */
const CAPTION = 'figcaption, [class*="caption" i], [class*="credit" i], [class*="copyright" i]';

/**
 * Removes boilerplate blocks inside the chosen content: named as such, lists of links (with the
 * heading that introduces them), picture captions and credits, and link-only lines.
 */
function pruneBoilerplate(root: DomElement): void {
  const total = collapsedLength(root.textContent);
  for (const element of [...root.querySelectorAll(CAPTION)]) {
    if (root.contains(element) && collapsedLength(element.textContent) < Math.max(300, total * 0.1)) element.remove();
  }
  for (const element of [...root.querySelectorAll('div, section, ul, ol, p, span, aside, nav, footer, header, form, table, li, dl')]) {
    if (!root.contains(element)) continue;
    const length = collapsedLength(element.textContent);
    if (length > total * 0.4) continue;
    const name = `${element.getAttribute('class') ?? ''} ${element.getAttribute('id') ?? ''}`;
    if (name.trim() !== '' && BOILERPLATE_NAME.test(name) && !/(^|\s)(article|content|entry-content|post-content|story)(\s|$)/i.test(name)) {
      element.remove();
      continue;
    }
    const list = element.localName === 'ul' || element.localName === 'ol' || element.localName === 'dl';
    const anchors = list || element.localName === 'div' || element.localName === 'section' ? element.querySelectorAll('a') : [];
    let count = 0;
    for (const _ of anchors) count += 1;
    if (count >= (list ? 2 : 3) && length < 1000 && linkDensity(element) > (list ? 0.5 : 0.7)) {
      // The heading just before a list of links names it ("Read more", "Related").
      const before = previousElement(element);
      if (before && /^h[1-6]$/.test(before.localName)) before.remove();
      element.remove();
      continue;
    }
    // A short line that is one link ("Read more", "To the shop").
    if ((element.localName === 'p' || element.localName === 'div') && length < 80 && length > 0 && linkDensity(element) > 0.9) element.remove();
  }
}

function previousElement(element: DomElement): DomElement | null {
  const parent = element.parentElement;
  if (parent === null) return null;
  let previous: DomElement | null = null;
  for (const child of parent.children) {
    if (child === element) return previous;
    previous = child;
  }
  return null;
}

/** The main content of `document` (which this edits). */
export function findMainContent(document: DomDocument, options: { articleBody?: string } = {}): MainContent {
  removeNonContent(document, { hidden: true });
  const body = bodyOf(document);
  removeChrome(body);
  // Readability edits the document it reads: the marked article is kept as it is now, as markup
  // (serialising costs a fraction of copying its nodes, and it is parsed again only when it wins).
  const markedElement = markedArticle(body);
  const markedText = (markedElement?.textContent ?? '').replace(/\s+/g, ' ').trim();
  const markedHtml = markedElement?.outerHTML;

  const article = readArticle(document);
  let element = article?.content ?? null;
  const title = article?.title?.trim() || undefined;
  const found = collapsedLength(element?.textContent);
  // The page's own article marker wins when Readability kept only a part of it (a lead, a
  // heading or a list outside the block it chose), as long as it holds what Readability chose.
  if (markedHtml !== undefined && markedText.length > found * MARKED_MIN && markedText.length < found * MARKED_MAX && holds(markedText, element)) {
    element = parseDocument(`<!DOCTYPE html><html><body>${markedHtml}</body></html>`).body!.firstElementChild ?? element;
    if (element !== null) removeChrome(element);
  }
  if (element === null || collapsedLength(element.textContent) === 0) {
    if (options.articleBody && collapsedLength(options.articleBody) >= 200) return { element: paragraphs(document, options.articleBody), title, wholePage: false };
    return { element: body, title, wholePage: true };
  }
  // The page's JSON-LD has the article body, and the markup holds far less of it: a page that
  // renders its text with scripts.
  if (options.articleBody && collapsedLength(options.articleBody) > collapsedLength(element.textContent) * 2) {
    return { element: paragraphs(document, options.articleBody), title, wholePage: false };
  }
  pruneBoilerplate(element);
  return { element, title, wholePage: false };
}

interface ReadArticle {
  content: DomElement | null;
  title?: string | null;
}

/** Readability's article, or null when it finds none (or fails on odd markup). */
function readArticle(document: DomDocument): ReadArticle | null {
  try {
    return new LinkedomReadability(document, { serializer: (element) => element as DomElement }).parse() as ReadArticle | null;
  } catch {
    return null;
  }
}

/** Text as an element of paragraphs (one per line of the text). */
function paragraphs(document: DomDocument, text: string): DomElement {
  const root = document.createElement('div');
  for (const line of text.split(/\n+/)) {
    if (line.trim() === '') continue;
    const paragraph = document.createElement('p');
    paragraph.textContent = line.trim();
    root.appendChild(paragraph);
  }
  return root;
}
