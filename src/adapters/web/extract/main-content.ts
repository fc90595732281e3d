/**
 * Finds a page's main content. Mozilla's Readability (Firefox Reader View) scores the page's
 * blocks by text and link density and picks the article; around it:
 *
 * - before scoring, only what is never content goes (code, styling, hidden elements, form
 *   controls); site chrome (`nav`, `footer`, `aside`, dialogs) goes unless it holds the article
 *   markers or most of the page's text, and `form` is always kept (ASP.NET pages live in one);
 * - Readability's choice is widened, before its cleaning, to the blocks beside it that continue
 *   the article (running text its sibling threshold left out: a lead, the half of a story after
 *   an ad), and to the lead in the article's header;
 * - the page's own markers vote: schema.org `articleBody` (microdata, or JSON-LD when the page's
 *   markup lost the text), a single `<article>`, `<main>`;
 * - after scoring, a precision pass over the article: the comment section, blocks that are
 *   boilerplate by name, markup, multilingual wording or link density (share bars, related
 *   links, captions and credits, bylines and dates, comment forms, tag lists), the short lines
 *   and links around the running text, and, when the page's JSON-LD `articleBody` is there and
 *   the article holds it, the blocks it lacks; a block holding much of the text stays;
 * - there is no whole-page fallback: a page without an article gives what Readability found, and
 *   only a page where it found nothing at all gives the cleaned body.
 */
import { Readability } from '@mozilla/readability';
import { BLOCK_TAG, bodyOf, collapsedLength, elementsByTagNames, elementsWhere, findDescendant, isSpaceCode, parseDocument, tagNamesUnder, type DomDocument, type DomElement, type DomNode } from './dom.ts';
import { isWhitespace, replaceTags, trimEndWhile } from '../../../core/text.ts';

/*
 * The elements below are told by their tag and attributes rather than by selectors: linkedom
 * compiles a selector into a matcher on every `querySelectorAll`. Tags compare without case and
 * attribute values as the selectors in the comments would.
 */

/** Never content: code, styling, embedded objects, and controls without text of their own. */
const NEVER_CONTENT = new Set(['script', 'style', 'noscript', 'template', 'iframe', 'frameset', 'frame', 'object', 'embed', 'svg', 'canvas', 'link', 'meta', 'input', 'button', 'select', 'textarea', 'dialog']);

/** Hidden by the markup itself (`[hidden], [aria-hidden="true"], [style*="display:none" i], [style*="display: none" i]`). Kept in the whole page: pages behind a consent overlay hide their content until it is accepted. */
function isHidden(element: DomElement): boolean {
  if (element.hasAttribute('hidden') || element.getAttribute('aria-hidden') === 'true') return true;
  const style = element.getAttribute('style');
  return style !== null && /display:none|display: none/i.test(style);
}

/** Site chrome, removed before scoring unless it may hold the content: `nav, footer, aside, header` and the roles of chrome. */
const CHROME_TAGS = new Set(['nav', 'footer', 'aside', 'header']);
const CHROME_ROLES = new Set(['navigation', 'contentinfo', 'complementary', 'dialog', 'banner']);

/** Marks a form that had text fields for the reader to fill in. */
const FORM_MARK = 'data-form-fields';

/** An article marker: `article, main, [role="main"], [itemprop~="articleBody"], [itemprop~="text"]`, tested without a selector (linkedom compiles one per call). */
function isArticleMarker(element: DomElement): boolean {
  const local = element.localName.toLowerCase();
  if (local === 'article' || local === 'main' || element.getAttribute('role') === 'main') return true;
  const property = element.getAttribute('itemprop');
  return property !== null && /(?:^|\s)(?:articleBody|text)(?:$|\s)/.test(property);
}

/** Whether an element below `root` is an article marker (as `root.querySelector` finds them). */
function holdsArticleMarker(root: DomElement): boolean {
  return findDescendant(root, isArticleMarker) !== null;
}

/** Whether `element` or one of its ancestors is an article marker (as `closest` finds them). */
function insideArticleMarker(element: DomElement): boolean {
  for (let at: DomElement | null = element; at !== null; at = at.parentElement) if (isArticleMarker(at)) return true;
  return false;
}

/** Class or id words of blocks inside an article that are not its text. */
const BOILERPLATE_NAME = /(^|[\s_-])(share|sharing|social|related|recommend(ed|ations)?|newsletter|subscribe|subscription|promo|advert(isement)?|ads?|sponsor(ed)?|comments?|disqus|respond|reply|tags?|tag-?list|breadcrumbs?|author-?(bio|box|info)|byline|post-?meta|entry-?meta|meta-?data|popular|trending|read-?more|more-?stories|outbrain|taboola|toolbar|pagination|pager|cookie|consent|signup|login|follow|jump-?link)($|[\s_-])/i;

/** What the widening reads of a block beside the article, in one walk over it. */
interface BlockProfile {
  length: number;
  linked: number;
  /** Ends of sentences in its text. */
  sentences: number;
  /** It holds what an article's text does not: a title, a form, site chrome, or a heading that links away or introduces related links or comments. */
  foreign: boolean;
  /** It holds a picture or a video. */
  media: boolean;
}

/** Sentence ends in running text, in the scripts most pages are written in. */
const SENTENCE_ENDS = /[.!?…][\s"'”’»)]|[。！？؟۔।]/gu;

/** The profile of `element`, in one walk over it. */
function blockProfile(element: DomElement): BlockProfile {
  const profile: BlockProfile = { length: 0, linked: 0, sentences: 0, foreign: false, media: false };
  const walk = (node: DomNode, inLink: boolean) => {
    if (node.nodeType === 3) {
      const text = node.textContent ?? '';
      const length = collapsedLength(text);
      profile.length += length;
      if (inLink) profile.linked += length;
      else if (length > 0) profile.sentences += (text + ' ').match(SENTENCE_ENDS)?.length ?? 0;
      return;
    }
    if (node.nodeType !== 1) return;
    const local = (node as DomElement).localName.toLowerCase();
    if (MEDIA.has(local)) profile.media = true;
    if (local === 'h1' || local === 'form' || local === 'nav' || local === 'aside' || local === 'footer') profile.foreign = true;
    // A heading that is a link titles another page (a listing's next entry), and a heading of
    // related stories or comments introduces what is not the article.
    else if (/^h[2-6]$/.test(local) && (linkedHeading(node as DomElement) || BOILERPLATE_HEADING.test(node.textContent ?? ''))) profile.foreign = true;
    for (let child = (node as DomElement).firstChild; child !== null; child = child.nextSibling) walk(child, inLink || local === 'a');
  };
  walk(element, false);
  return profile;
}

/** A heading whose text is mostly a link. */
function linkedHeading(heading: DomElement): boolean {
  const link = findDescendant(heading, (inner) => inner.localName.toLowerCase() === 'a');
  return link !== null && collapsedLength(link.textContent) >= collapsedLength(heading.textContent) * 0.5;
}

/** Whether a block's class or id names it as boilerplate (and not as the text itself); BEM's `__` joins words as `-` does. */
function namedAsBoilerplate(element: DomElement): boolean {
  const name = nameOf(element).replace(/__/g, '-').trim();
  return name !== '' && !CONTENT_NAME.test(name) && (BOILERPLATE_NAME.test(name) || BOILERPLATE_PART.test(name));
}

/** Class or id words of blocks that follow or precede an article without being its text: the author's box, pop-ups. */
const NOT_CONTINUATION_NAME = /(^|[\s_-])(bio|biography|about|authors?|profile|avatar|contributors?|signature|lightbox|modal|popup|overlay|dialog|sidebar|(right|left)?-?rail|widgets?)($|[\s_-])|(right|left)-?(rail|col(umn)?)/i;

/** Tags of blocks that are never the article's continuation. */
const NOT_CONTINUATION = new Set(['nav', 'aside', 'footer', 'header', 'form', 'h1', 'ul', 'ol', 'dl', 'menu', 'table', 'figure']);

/**
 * Whether a block beside Readability's choice is more of the same article: running text (a few
 * sentences, few links), not named or tagged as boilerplate, and not holding another title.
 */
function continuesArticle(element: DomElement, minLength: number): boolean {
  if (NOT_CONTINUATION.has(element.localName.toLowerCase()) || namedAsBoilerplate(element) || NOT_CONTINUATION_NAME.test(nameOf(element).replace(/__/g, '-'))) return false;
  const profile = blockProfile(element);
  // A picture with a few lines is a caption.
  if (profile.media && profile.length < 300) return false;
  return !profile.foreign && profile.length >= minLength && profile.linked < profile.length * 0.25 && profile.sentences >= 2;
}

/** A block that may stand between two parts of an article: an ad slot, a picture, a spacer (little text). */
function isInterlude(element: DomElement): boolean {
  return collapsedLength(element.textContent) < 100;
}

/** The shortest block of text the widening adds (a lead paragraph; shorter lines are left to Readability). */
const CONTINUATION_MIN = 140;

const isSubheading = (element: DomElement) => /^h[2-6]$/.test(element.localName.toLowerCase());
const holdsTitle = (element: DomElement) => element.localName.toLowerCase() === 'h1' || findDescendant(element, (inner) => inner.localName.toLowerCase() === 'h1') !== null;

/**
 * The blocks of `row` that continue the article from the part at `from` to `to` (exclusive,
 * stepping by `step`): running text, past interludes (ads, pictures) and the subheadings before
 * more text. It stops at anything else, and going back, at the title; `onStop` is told the block
 * it stopped at going back (it may hold the lead).
 */
function continuation(row: readonly DomElement[], from: number, to: number, step: 1 | -1, outer: boolean, onStop?: (block: DomElement) => void): number[] {
  const found: number[] = [];
  let headings: number[] = [];
  for (let i = from; i !== to; i += step) {
    const block = row[i];
    if (step === -1 && holdsTitle(block)) {
      onStop?.(block);
      break;
    }
    // Beside the article's parent are the page's columns: one holding a side box is a sidebar.
    if (continuesArticle(block, CONTINUATION_MIN) && !(outer && findDescendant(block, (inner) => NOT_CONTINUATION_NAME.test(nameOf(inner))) !== null)) {
      found.push(...headings, i);
      headings = [];
    } else if (isSubheading(block)) headings.push(i);
    else if (!isInterlude(block) || namedAsBoilerplate(block)) {
      if (step === -1) onStop?.(block);
      break;
    }
  }
  return found;
}

/** Whether a paragraph in the article's header stands where a lead does: not in a list, a table or a named side box, not beside a picture (a caption). */
function leadPlace(paragraph: DomElement, header: DomElement): boolean {
  for (let at = paragraph.parentElement; at !== null && at !== header.parentElement; at = at.parentElement) {
    if (/^(li|td|th|dd|table|ul|ol|aside|nav|figure)$/.test(at.localName.toLowerCase()) || NOT_CONTINUATION_NAME.test(nameOf(at))) return false;
  }
  const around = paragraph.parentElement;
  return around === null || around === header || collapsedLength(around.textContent) > 400 || findDescendant(around, (inner) => MEDIA.has(inner.localName.toLowerCase())) === null;
}

/**
 * Moves to the start of the article the lead held by the block just before it (the article's
 * header): one or two paragraphs of running text after the title, not the byline or the date.
 */
function prependLead(content: DomElement, header: DomElement): void {
  // A header, not a page region that also holds other stories.
  if (collapsedLength(header.textContent) > 1500 || namedAsBoilerplate(header)) return;
  // Readability has taken out a title that repeats the page's: the lead is then from the start.
  let afterTitle = !holdsTitle(header);
  let ended = false;
  const leads = elementsWhere(header, (element) => {
    const local = element.localName.toLowerCase();
    // A linked title is another story's (a teaser); the lead ends at the next heading.
    if (local === 'h1' && !afterTitle && !linkedHeading(element)) afterTitle = true;
    else if (afterTitle && /^h[1-6]$/.test(local)) ended = true;
    if (!afterTitle || ended || local !== 'p' || namedAsBoilerplate(element) || !leadPlace(element, header)) return false;
    const profile = blockProfile(element);
    return profile.length >= 80 && profile.linked < profile.length * 0.25 && profile.sentences >= 1 && !profile.foreign;
  });
  if (leads.length > 2) return;
  const firstPart = content.firstChild;
  for (const lead of leads) content.insertBefore(lead, firstPart);
}

/**
 * Adds to Readability's article (`content`, the blocks it joined from `siblings`, in their order)
 * the siblings that continue it and the lead in the block before it; when the article then fills
 * its parent, the parent's siblings that continue it, or the lead before the parent.
 */
function widenArticle(content: DomElement, parent: DomElement | null, siblings: readonly DomElement[], joined: ReadonlySet<DomElement>, asBlock: (node: DomElement) => DomElement): void {
  const first = siblings.findIndex((sibling) => joined.has(sibling));
  if (first === -1) return;
  let last = siblings.length - 1;
  while (!joined.has(siblings[last])) last -= 1;
  const added = new Set<number>();
  // Between joined blocks: the text and subheadings Readability's threshold left out.
  for (let i = first + 1; i < last; i += 1) {
    if (!joined.has(siblings[i]) && (isSubheading(siblings[i]) || continuesArticle(siblings[i], CONTINUATION_MIN))) added.add(i);
  }
  for (const i of continuation(siblings, last + 1, siblings.length, 1, false)) added.add(i);
  let header: DomElement | undefined;
  for (const i of continuation(siblings, first - 1, -1, -1, false, (block) => (header = block))) added.add(i);
  const fillsParent = siblings.every((sibling, i) => joined.has(sibling) || added.has(i) || isInterlude(sibling));
  if (added.size > 0) {
    const parts = [...content.children];
    let before = 0;
    for (let i = 0; i < siblings.length; i += 1) {
      if (joined.has(siblings[i])) before += 1;
      else if (added.has(i)) content.insertBefore(asBlock(siblings[i]), parts[before] ?? null);
    }
  }
  if (header !== undefined) prependLead(content, header);
  // The article fills its parent: the rest of it may be beside the parent (a story split in two
  // containers around an ad or a picture).
  const outer = parent?.parentElement;
  if (!fillsParent || parent === null || outer === null || outer === undefined || /^(body|html)$/i.test(parent.localName)) return;
  const row = [...outer.children];
  const at = row.indexOf(parent);
  const after = continuation(row, at + 1, row.length, 1, true);
  header = undefined;
  const beforeParent = continuation(row, at - 1, -1, -1, true, (block) => (header = block)).reverse();
  const firstPart = content.firstChild;
  for (const i of beforeParent) content.insertBefore(asBlock(row[i]), firstPart);
  if (header !== undefined && beforeParent.length === 0) prependLead(content, header);
  for (const i of after) content.appendChild(asBlock(row[i]));
}

/** Readability, finding elements by tag with one walk (linkedom compiles a selector per `querySelectorAll`). */
class LinkedomReadability extends Readability<DomElement> {
  /** The children of the top candidate's parent as Readability weighs them for joining, and which it joined. */
  private siblings: DomElement[] = [];
  private siblingsParent: DomElement | null = null;
  private joined = new Set<DomElement>();
  /** While `_prepArticle` runs: the tags the article holds, or may hold by then. */
  private tagsInArticle: Set<string> | null = null;
  /** The article whose markup reads as empty for Readability's log line. */
  private hidingMarkupOf: DomElement | null = null;

  constructor(document: DomDocument, options: ConstructorParameters<typeof Readability<DomElement>>[1]) {
    super(document as never, options);
    // Readability names each sibling it weighs, and each it joins, through its log hook.
    (this as unknown as { log: (...args: unknown[]) => void }).log = (message, node) => {
      if (message === 'Looking at sibling node:') {
        if (this.siblings.length === 0) this.siblingsParent = (node as DomElement).parentElement;
        this.siblings.push(node as DomElement);
      } else if (message === 'Appending node:') this.joined.add(node as DomElement);
    };
  }

  /**
   * Before Readability cleans the article, widens it to the blocks beside what it joined that
   * continue the article (its joining wants a score that a lead, or the half of a story after an
   * ad, often lacks), and to the blocks beside their parent when the article fills that parent.
   */
  _prepArticle(articleContent: DomElement): void {
    widenArticle(articleContent, this.siblingsParent, this.siblings, this.joined, (node) => this.asBlock(node));
    this.siblings = [];
    this.siblingsParent = null;
    this.joined = new Set();
    this.tagsInArticle = tagNamesUnder(articleContent);
    try {
      (Readability.prototype as unknown as { _prepArticle(this: Readability<DomElement>, content: DomElement): void })._prepArticle.call(this, articleContent);
    } finally {
      this.tagsInArticle = null;
    }
  }

  /**
   * Readability serialises the article it grabbed for its log whether it logs or not ("Grabbed:
   * …", in `parse`, right before `_postProcessContent`): the whole article as markup, thrown
   * away. The article answers an empty string until `_postProcessContent` takes the stand-in away.
   */
  _grabArticle(page?: DomElement): DomElement | null {
    const article = (Readability.prototype as unknown as { _grabArticle(this: Readability<DomElement>, page?: DomElement): DomElement | null })._grabArticle.call(this, page);
    if (article) {
      Object.defineProperty(article, 'innerHTML', { get: () => '', configurable: true, enumerable: false });
      this.hidingMarkupOf = article;
    }
    return article;
  }

  _postProcessContent(articleContent: DomElement): void {
    this.showMarkup();
    (Readability.prototype as unknown as { _postProcessContent(this: Readability<DomElement>, content: DomElement): void })._postProcessContent.call(this, articleContent);
  }

  /** Gives the article its own `innerHTML` back (also called after `parse`, whatever it did). */
  showMarkup(): void {
    if (this.hidingMarkupOf !== null) delete (this.hidingMarkupOf as { innerHTML?: string }).innerHTML;
    this.hidingMarkupOf = null;
  }

  /** A block Readability keeps as it is; others (a cell, a form) become a `div`, as its joining does. */
  private asBlock(node: DomElement): DomElement {
    if (['div', 'article', 'section', 'p'].includes(node.localName.toLowerCase())) return node;
    return (this as unknown as { _setNodeTag(node: DomElement, tag: string): DomElement })._setNodeTag(node, 'DIV');
  }

  /**
   * While Readability cleans the article it walks the whole article once per tag it removes
   * (`object`, `embed`, `footer`, `input`, `button`…) and every paragraph for embedded media:
   * a walk for tags the article does not hold finds nothing, and is skipped. The tags it can
   * make meanwhile are added as they are made (`_setNodeTag`, the `img` of `_fixLazyImages`).
   */
  _getAllNodesWithTag(root: DomElement | DomDocument, tagNames: string[]): DomElement[] {
    const present = this.tagsInArticle;
    if (present !== null && !tagNames.some((name) => present.has(name.toLowerCase()))) return [];
    return elementsByTagNames(root, tagNames);
  }

  _setNodeTag(node: DomElement, tag: string): DomElement {
    this.tagsInArticle?.add(tag.toLowerCase());
    return (Readability.prototype as unknown as { _setNodeTag(this: Readability<DomElement>, node: DomElement, tag: string): DomElement })._setNodeTag.call(this, node, tag);
  }

  _fixLazyImages(root: DomElement): void {
    (Readability.prototype as unknown as { _fixLazyImages(this: Readability<DomElement>, root: DomElement): void })._fixLazyImages.call(this, root);
    this.tagsInArticle?.add('img'); // it may have put an image in a figure
  }

  /** Readability's test, with the cheap checks first: it read the text of every node it visited. */
  _isValidByline(node: DomElement, matchString: string): boolean {
    const rel = node.getAttribute('rel');
    const itemprop = node.getAttribute('itemprop');
    const byline = (this as unknown as { REGEXPS: { byline: RegExp } }).REGEXPS.byline;
    if (!(rel === 'author' || (itemprop && itemprop.includes('author')) || byline.test(matchString))) return false;
    const length = (node.textContent ?? '').trim().length;
    return length > 0 && length < 100;
  }

  /** formats.ts has made every link and image absolute already (against `<base>` and the page URL). */
  _fixRelativeUris(): void {}

  /**
   * Readability's check, reading the `style` attribute as linkedom's `style` object does (the last
   * `display` and `visibility` declarations, compared as written) without building that object
   * for every node.
   */
  _isProbablyVisible(node: DomElement): boolean {
    const style = (node as DomElement & { getAttributeNode(name: string): { value: string } | null }).getAttributeNode('style')?.value;
    if (style !== undefined && (styleValue(style, 'display') === 'none' || styleValue(style, 'visibility') === 'hidden')) return false;
    if (node.hasAttribute('hidden')) return false;
    // Wikimedia's math images are hidden from screen readers behind a fallback image.
    if (node.getAttribute('aria-hidden') !== 'true') return true;
    const className = (node as DomElement & { className?: string }).className;
    return Boolean(className && className.includes && className.includes('fallback-image'));
  }
}

/** The value of the last declaration of `property` in a `style` attribute, split as linkedom splits it. */
function styleValue(style: string, property: string): string | undefined {
  if (!style.includes(property)) return undefined;
  let value: string | undefined;
  // Each rule is trimmed below: splitting on `;` reads as `style.split(/\s*;\s*/)` does.
  for (const rule of style.split(';')) {
    const colon = rule.indexOf(':');
    if (colon === -1 || rule.slice(0, colon).trim() !== property) continue;
    const declared = rule.slice(colon + 1).trim();
    if (declared !== '') value = declared;
  }
  return value;
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
  // A form for the reader to fill in (a comment or a search box) loses its controls here; it is
  // marked so the pruning can tell it from a form that wraps a whole page.
  for (const form of body.querySelectorAll('form')) {
    if (form.querySelector('textarea, input[type="text"], input[type="email"], input[type="search"], input[type="password"], input:not([type])') !== null) form.setAttribute(FORM_MARK, '');
  }
  const remove = options.hidden ? (element: DomElement) => NEVER_CONTENT.has(element.localName.toLowerCase()) || isHidden(element) : (element: DomElement) => NEVER_CONTENT.has(element.localName.toLowerCase());
  for (const element of elementsWhere(body, remove)) element.remove();
  for (const element of [...document.querySelectorAll('head, title')]) if (body.contains(element)) element.remove();
}

/** Comment threads, by the names blog and news engines give them. */
const COMMENTS = /(^|[\s_-])(comments?|comment-?list|commentlist|comments-?area|disqus_thread|disqus|respond|replies|discussion)($|[\s_-])/i;

/** Removes site chrome and comment threads that cannot hold the content. */
function removeChrome(body: DomElement): void {
  const pageText = collapsedLength(body.textContent);
  const chrome: DomElement[] = [];
  const comments: DomElement[] = [];
  elementsWhere(body, (element) => {
    const role = element.getAttribute('role');
    if (CHROME_TAGS.has(element.localName.toLowerCase()) || (role !== null && CHROME_ROLES.has(role))) chrome.push(element);
    if (element.localName === 'body' || element.localName === 'html' || !(element.hasAttribute('id') || element.hasAttribute('class'))) return false;
    const name = `${element.getAttribute('id') ?? ''} ${element.getAttribute('class') ?? ''}`;
    if (COMMENTS.test(name)) comments.push(element);
    return false;
  });
  chrome.push(...comments);
  for (const element of chrome) {
    if (!body.contains(element)) continue; // inside chrome removed already
    if (holdsArticleMarker(element)) continue;
    if (element.localName === 'header' && insideArticleMarker(element)) continue; // an article's own header
    if (collapsedLength(element.textContent) > pageText * 0.5) continue;
    element.remove();
  }
}

/** The page's own marker of its article body: one `articleBody`, else one `<article>`, with real text. */
function markedArticle(body: DomElement): DomElement | undefined {
  const single = (test: (element: DomElement) => boolean) => {
    const found = elementsWhere(body, test).filter((element) => collapsedLength(element.textContent) >= 250);
    return found.length === 1 ? found[0] : undefined;
  };
  // `[itemprop~="articleBody"]`, else `article`.
  return single((element) => /(?:^|\s)articleBody(?:$|\s)/.test(element.getAttribute('itemprop') ?? '')) ?? single((element) => element.localName.toLowerCase() === 'article');
}

function linkDensity(element: DomElement): number {
  const length = collapsedLength(element.textContent);
  if (length === 0) return 0;
  let links = 0;
  for (const anchor of element.querySelectorAll('a')) links += collapsedLength(anchor.textContent);
  return links / length;
}

/** Class words of picture captions and credits. */
const CAPTION_CLASS = /caption|credit|copyright/i;

/** The elements of the content the pruning looks at by name, found in one walk. */
interface Scan {
  /** Anchors and blocks whose name may start the comment section. */
  markers: DomElement[];
  /** Picture captions and credits. */
  captions: DomElement[];
  figures: DomElement[];
  /** Elements with a class or an id. */
  named: DomElement[];
}

/** One walk over the elements of `root` (linkedom compiles a selector into a matcher on every `querySelectorAll`). */
function scan(root: DomElement): Scan {
  const found: Scan = { markers: [], captions: [], figures: [], named: [] };
  let node = root.firstElementChild;
  while (node !== null) {
    const local = node.localName;
    const id = node.getAttribute('id');
    const className = node.getAttribute('class');
    if (id !== null || className !== null) found.named.push(node);
    if (id !== null || local === 'a') {
      const names = `${id ?? ''} ${local === 'a' ? (node.getAttribute('name') ?? '') : ''}`.trim();
      if (names !== '' && names.split(/\s+/).some((name) => COMMENTS_START.test(name))) found.markers.push(node);
    }
    const property = node.getAttribute('itemprop');
    if (local === 'figcaption' || (className !== null && CAPTION_CLASS.test(className)) || (id !== null && /caption/i.test(id)) || (property !== null && /(^|\s)(caption|copyrightHolder)(\s|$)/.test(property))) found.captions.push(node);
    if (local === 'figure') found.figures.push(node);
    const child = local === 'template' ? null : node.firstElementChild;
    if (child !== null) {
      node = child;
      continue;
    }
    let next: DomElement | null = null;
    for (let at: DomElement | null = node; at !== null && at !== root; at = at.parentElement) {
      next = at.nextElementSibling;
      if (next !== null) break;
    }
    node = next;
  }
  return found;
}

/**
 * Parts of compound class or id names ("storyby", "article-share-bar", "relatedLinks") that name
 * blocks around an article's text: bylines and datelines, captions, sharing, related and
 * recommended stories, newsletter and subscription prompts, comments, ratings, tag and category
 * lists. `comment` is not `commentary` (an opinion piece).
 */
const BOILERPLATE_PART = /byline|storyby|dateline|timestamp|caption|comment(?!ary)|sharing|share-?(bar|box|buttons?|links?|tools?|this|icons?)|social|related|recommend|newsletter|subscri|paywall|promo|sponsor|breadcrumb|disqus|outbrain|taboola|teaser|most-?(read|popular|viewed|shared)|read-?more|more-?(news|stories|articles|from)|author-?(bio|box|info|card|details|profile|block|meta|wrap|summary)|biography|about-?the-?author|(^|[\s-])(post-?|entry-?|article-?)?authors?($|[\s-])|rating|tag-?(list|cloud|links)|post-?tags|(^|[\s_-])tags($|[\s_-])|categor(y|ies)-?(list|links)|(^|[\s_-])(pub(lished)?-?date|post-?date|date-?(line|time|published))($|[\s_-])/i;

/** Whole class or id words of blocks that name the text itself: such a block is never boilerplate by name. */
const CONTENT_NAME = /(^|\s)(article|article-?body|articlebody|content|entry-content|post-content|post-body|story|story-?body|main)(\s|$)/i;

/** Microdata of an article's byline, dates and publisher. */
const META_PROPERTY = /^(author|creator|datePublished|dateModified|dateCreated|publisher|contributor)$/;

/** Lines that credit a picture or its source, in the languages most pages are written in. */
const CREDIT_LINE = /^\s*(foto|fotos|photo|photos|photograph|picture|bild|bilder|bildquelle|bildnachweis|titelbild|image|images|imagen|imágenes|immagine|immagini|abbildung|grafik|quelle|source|credit|credits|crédits?( photos?)?|crédito|créditos|źródło|fuente|fonte|zdjęcie|fot\.|фото|источник|写真|图片|圖片|사진|صورة|תמונה)\s*[:：/©]/i;

/** Copyright and rights notices. */
const RIGHTS_LINE = /^\s*(©|\(c\)\s|copyright\b)|all rights reserved|alle rechte vorbehalten|tous droits réservés|todos los derechos reservados|tutti i diritti riservati|todos os direitos reservados|wszelkie prawa zastrzeżone|все права защищены|版权所有|無断転載/i;

/** Headings that introduce what is not the article: related stories, further reading, comments, sharing. */
export const BOILERPLATE_HEADING = /^\s*(related|related (stories|articles|posts|content|news|links|coverage)|read more|read also|more (on|from|about|news|stories)|see also|you (may|might) (also )?(like|be interested)|recommended|most (read|popular|viewed)|popular|trending|latest news|top stories|comments?|no comments( yet)?|leave a (comment|reply)|share( this)?( article| story| post)?|tags|about the author|auch interessant|mehr zum thema|das könnte (dich|sie) (auch )?interessieren|lesen sie auch|weitere (artikel|beiträge|nachrichten|themen)|empfohlene beiträge|neueste artikel|kommentare|keine kommentare|kommentieren|über den autor|zum autor|à lire aussi|à lire également|lire aussi|voir aussi|sur le même sujet|articles similaires|commentaires|le puede interesar|te puede interesar|lee también|leer más|noticias relacionadas|relacionad[oa]s|comentarios|leia também|veja também|notícias relacionadas|leggi anche|potrebbe interessarti|articoli correlati|commenti|czytaj (też|także|również)|zobacz (też|także|również)|komentarze|читайте также|комментарии|похожие (статьи|новости)|関連記事|相关(文章|阅读|新闻)|相關(文章|新聞)|관련 ?기사|مقالات ذات صلة|اقرأ أيضا)\s*(?:[:：.!?]\s*)?$/i;

/** A line that sends the reader to another story ("Read also: …", "Lea: …", "Czytaj też: …"). */
const TEASER_LINE = /^\s*(read (more|also)|see also|also read|related|more on this|lesen sie (auch|mehr)|mehr (dazu|zum thema)|auch interessant|lire (aussi|également)|à lire( aussi| également)?|voir aussi|lea( también)?|lee( también)?|mira|vea( también)?|le puede interesar|te puede interesar|leia( também| mais)?|veja( também)?|leggi anche|czytaj (też|także|również|więcej)|zobacz (też|także|również)|читайте (также|ещё|еще)|смотрите также)\s*[:：]/i;

/**
 * A line that asks the reader to do something other than read on: subscribe or log in for the
 * rest, download the app, join a channel, donate, share, sign up for the newsletter. Each phrase
 * is a prompt's own wording, not a topic: an article about subscriptions keeps its sentences.
 */
const CALL_TO_ACTION = new RegExp(
  [
    // English
    String.raw`\bsubscribe (now|today|here|to (our|read|continue|get|access|view))\b`,
    String.raw`\balready (a )?(subscriber|member)\b`,
    String.raw`\b(log|sign) ?in (for|to) (immediate access|read|continue|access|view)\b`,
    String.raw`\bto (view|read|continue reading|access) (the|this) (full|entire|complete|rest of)\b`,
    String.raw`\bfor the full (story|article)\b`,
    String.raw`\bdownload (the|our) [\p{L}\p{N} ]{0,40}apps?\b`,
    String.raw`\bsupport (our|independent|quality) (journalism|reporting|work)\b`,
    String.raw`\benjoyed (reading )?this (article|post|story)\b`,
    String.raw`\bsign up (for|to) (our|the) [\p{L} ]{0,20}newsletter\b`,
    String.raw`\bshare this (article|story|post)\b`,
    String.raw`(?<![-\w])donate (now|today)\b`, // not a phone number's word (1-888-2-DONATE today)
    // German
    String.raw`\bjetzt (abonnieren|spenden|unterstützen|registrieren)\b`,
    String.raw`\b(artikel|beitrag) gefallen\s*\?`,
    String.raw`\bvergiss nicht,? (ihn |es )?zu teilen\b`,
    String.raw`\bjede (kleine )?spende\b`,
    String.raw`\bunterstütze[n]? (sie )?(uns|unsere arbeit|unabhängigen journalismus)\b`,
    String.raw`\bnewsletter abonnieren\b`,
    // Spanish, Portuguese, French, Italian
    String.raw`\bsuscr[ií]bete\b`,
    String.raw`\bcancela cuando quieras\b`,
    String.raw`\bapoya (nuestro|el) periodismo\b`,
    String.raw`\bassine (já|agora)\b`,
    String.raw`\babonnez-vous\b`,
    String.raw`\bsoutenez[- ]nous\b`,
    String.raw`\babbonati (ora|subito)\b`,
    // Messaging channels, any language
    String.raw`\b(telegram|whatsapp)[- ](channel|kanal|canal|group|gruppe|grupo)\b`,
    String.raw`\b(channel|kanal|canal|grupo) (on|auf|de|en|em) (telegram|whatsapp)\b`,
  ].join('|'),
  'iu',
);

/** A line that is only an ad's label or a note that the story goes on after it ("Advertisement", "Story continues below", "Anzeige"). */
const AD_LABEL = /^(advertisements?|advertising|advert|ad|ads|sponsored( content)?|paid (content|post)|(the )?(story|article|text) continues (below|after (the )?(advertisement|ad))( advertisement)?|continue reading (below|the main story)|scroll to continue( with content)?|anzeige|werbung|publicité|publicidad|pubblicità|publicidade|reklama|реклама|広告|广告|廣告|광고|إعلان|פרסומת)$/iu;

/**
 * A line that is only the label of a control or a reading aid beside the text: an audio player,
 * the reading time, share and save buttons written as text, a gallery's counter ("Image 2 of 9").
 */
const CONTROL_LABEL = /^(listen( to)?( this)? (article|story)( \d+ min(utes?)?)?|\d+ ?min(ute)?s? read|(estimated )?reading time:? \d+ ?min(ute)?s?|lesezeit:? \d+ ?min(uten|\.)?|temps de lecture:? \d+ ?min(utes)?|tiempo de lectura:? \d+ ?min(utos)?|copy link|link (copied|kopiert)|gift (this )?article|save (this )?(article|story)|print (this )?(article|story|page)|share (this )?(article|story|on (facebook|twitter|x|linkedin|whatsapp|e-?mail))|follow (us )?on (twitter|x|facebook|instagram|linkedin|google news)|(show|read) (more|less)|image \d+ (of|von|de|sur) \d+)$/iu;

/** What makes a table one of data rather than of layout (Readability's own first signs, in `_markDataTables`). */
const DATA_TABLE_PARTS = new Set(['caption', 'th', 'thead', 'tfoot', 'colgroup', 'col']);

/**
 * Whether an element is (in) a table of data: one Readability marked so (`_markDataTables`), or
 * one with a caption or header cells (the marks are gone when the page's own article marker was
 * parsed again). A table of links there is content (a Wikipedia table of cities), where a layout
 * table's cell of links is a menu.
 */
function inDataTable(element: DomElement): boolean {
  const table = element.localName === 'table' ? element : element.closest('table');
  if (table === null) return false;
  if ((table as DomElement & { _readabilityDataTable?: boolean })._readabilityDataTable) return true;
  return findDescendant(table, (inner) => DATA_TABLE_PARTS.has(inner.localName.toLowerCase())) !== null;
}

/** Whether a block holds other blocks (a prompt is one line; a header with a share line also holds the title). */
const holdsBlock = (element: DomElement) => findDescendant(element, (inner) => TEXT_BLOCKS.has(inner.localName.toLowerCase()) && inner.localName.toLowerCase() !== 'span') !== null;

/** Names of the anchors and blocks that start a page's comment section. */
const COMMENTS_START = /^(comments?|comment-?section|commentsection|comments?-?(area|list|wrapper|block|container|title)|respond|reply|replies|reactions|discussion|disqus_thread|talkback|reader-?comments|leave-?a-?(comment|reply))$/i;

const nameOf = (element: DomElement) => `${element.getAttribute('class') ?? ''} ${element.getAttribute('id') ?? ''}`;

/** Length of the text that comes before `element` inside `root`. */
function textBefore(root: DomElement, element: DomElement): number {
  let length = 0;
  const walk = (node: DomNode): boolean => {
    if (node === element) return true;
    if (node.nodeType === 3) length += collapsedLength(node.textContent);
    else if (node.nodeType === 1) for (let child = (node as DomElement).firstChild; child !== null; child = child.nextSibling) if (walk(child)) return true;
    return false;
  };
  walk(root);
  return length;
}

/**
 * The comment section of an article page, found by its anchor or block name (`<a name="comments">`,
 * `id="respond"`): it and all that follows it go, when the article's text comes first.
 */
function removeCommentSection(root: DomElement, markers: readonly DomElement[], total: number): void {
  for (const element of markers) {
    if (!root.contains(element)) continue;
    const before = textBefore(root, element);
    if (before < 500 && before < total * 0.3) continue;
    // Everything after the marker, up to the end of the content, is the thread (Readability may
    // have wrapped the marker and the first comments in a paragraph of their own).
    for (let at: DomElement | null = element; at !== null && at !== root; at = at.parentElement) {
      let after = false;
      for (const node of [...at.parentElement?.childNodes ?? []]) {
        if (node === at) after = true;
        else if (after) (node as DomElement).remove();
      }
    }
    element.remove();
  }
}

/** Whether a short block is a credit, a rights notice, a byline or a date line, by its text or markup. */
function isMetaLine(element: DomElement, text: string): boolean {
  if (text.length > 300) return false;
  if (RIGHTS_LINE.test(text) || CREDIT_LINE.test(text)) return true;
  const property = element.getAttribute('itemprop');
  if (property !== null && META_PROPERTY.test(property)) return true;
  // A line that is a date and little else (`<time>` with a label or a byline around it).
  if (text.length >= 120) return false;
  // By a walk: linkedom compiles a selector on every call, and this runs for every short block.
  const time = element.localName === 'time' ? element : (elementsByTagNames(element, ['time'])[0] ?? null);
  return time !== null && collapsedLength(time.textContent) > 0 && (element.localName === 'time' || collapsedLength(time.textContent) >= text.length * 0.3);
}

/** Marks a block named as boilerplate while its name's blocks are counted. */
const BOILERPLATE_MARK = 'data-boilerplate';

/** Whether `element` or one of its ancestors is marked as boilerplate (`closest('[data-boilerplate]')`). */
function markedAsBoilerplate(element: DomElement): boolean {
  for (let at: DomElement | null = element; at !== null; at = at.parentElement) if (at.hasAttribute(BOILERPLATE_MARK)) return true;
  return false;
}

/** Class words that are a post's labels (WordPress's `category-news`, `tag-social`), not the block's role. */
const LABEL_CLASS = /^(tag|tags|category|categories|format|type|status|author)[-_]/i;

/** Letters and digits only, lower case: an id compared with the heading it was made from. */
const slug = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

/**
 * A section whose id is made from its own heading ("sharing-with-a-single-developer" under
 * "Sharing with a single developer", as documentation and Markdown renderers name them): the id
 * says what the text is about, not what the block is.
 */
function namedAfterHeading(element: DomElement): boolean {
  const id = element.getAttribute('id');
  const heading = element.firstElementChild;
  if (id === null || heading === null || !/^h[1-6]$/.test(heading.localName.toLowerCase())) return false;
  const idSlug = slug(id);
  return idSlug.length >= 6 && slug(heading.textContent ?? '').startsWith(idSlug);
}

/**
 * Removes the blocks named as boilerplate. Blocks of one name that together hold a large share of
 * the text stay: they are the page's content (a listing's teasers, a blog's entries).
 */
function removeNamedBoilerplate(root: DomElement, named: readonly DomElement[], total: number): void {
  const groups = new Map<string, { elements: DomElement[]; length: number }>();
  for (const element of named) {
    if (element.localName === 'body' || element.localName === 'html' || !root.contains(element)) continue;
    const id = element.getAttribute('id') ?? '';
    const classes = (element.getAttribute('class') ?? '').split(/\s+/).filter((word) => word !== '' && !LABEL_CLASS.test(word));
    const name = `${classes.join(' ')} ${id}`;
    if (name.trim() === '' || CONTENT_NAME.test(name) || !(BOILERPLATE_NAME.test(name) || BOILERPLATE_PART.test(name)) || namedAfterHeading(element)) continue;
    // Only the outermost named block counts: what is inside it goes with it.
    if (markedAsBoilerplate(element)) continue;
    element.setAttribute(BOILERPLATE_MARK, '');
    const key = name.replace(/\d+/g, '').trim();
    const group = groups.get(key) ?? { elements: [], length: 0 };
    group.elements.push(element);
    group.length += collapsedLength(element.textContent);
    groups.set(key, group);
  }
  for (const group of groups.values()) {
    for (const element of group.elements) {
      if (group.length <= total * 0.4) element.remove();
      else element.removeAttribute(BOILERPLATE_MARK);
    }
  }
}

/** Blocks that hold text of their own, for the trimming of an article's ends. */
const TEXT_BLOCKS = new Set(['p', 'div', 'section', 'li', 'dd', 'dt', 'td', 'th', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'span', 'font', 'center', 'address', 'small', 'table', 'tr', 'ul', 'ol', 'dl', 'footer', 'header', 'figure']);

interface TextBlock {
  element: DomElement;
  length: number;
  linked: number;
  /** The element holds other blocks with text: removing it would take them along. */
  nested: boolean;
}

/** The innermost blocks holding the text of `root`, in reading order, with their text and link lengths. */
function textBlocks(root: DomElement): TextBlock[] {
  const blocks: TextBlock[] = [];
  const byElement = new Map<DomElement, TextBlock>();
  const walk = (node: DomNode, block: DomElement, inLink: boolean) => {
    if (node.nodeType === 3) {
      const length = collapsedLength(node.textContent);
      if (length === 0) return;
      let entry = byElement.get(block);
      if (entry === undefined) {
        entry = { element: block, length: 0, linked: 0, nested: false };
        byElement.set(block, entry);
        blocks.push(entry);
      }
      entry.length += length;
      if (inLink) entry.linked += length;
      return;
    }
    if (node.nodeType !== 1) return;
    const element = node as DomElement;
    const local = element.localName;
    const inner = TEXT_BLOCKS.has(local) ? element : block;
    const before = blocks.length;
    for (let child = element.firstChild; child !== null; child = child.nextSibling) walk(child, inner, inLink || local === 'a');
    // A block with text of its own around blocks that hold text too (`<div>` with a line and paragraphs).
    if (inner !== block && blocks.length > before) {
      const outer = byElement.get(block);
      if (outer !== undefined) outer.nested = true;
      else nestedPending.add(block);
    }
  };
  // Blocks whose first text comes after a nested block's: marked once they are registered.
  const nestedPending = new Set<DomElement>();
  walk(root, root, false);
  for (const entry of blocks) if (nestedPending.has(entry.element)) entry.nested = true;
  return blocks;
}

/** The end of a sentence, in the scripts most pages are written in (closing quotes and brackets, or a bracketed credit, after it). */
const SENTENCE_END = /[.!?…。！？؟۔।][\s"'”’»)\]）」』】》]*$/u;

/** A block of running text: long enough, and not a link list. */
const isProse = (block: TextBlock) => block.length >= 120 && block.linked < block.length * 0.3 && !/^(li|td|th|dt|dd)$/.test(block.element.localName);

/**
 * Trims the ends of the article: after its last paragraph of running text, short lines and links
 * (bylines, notices, prompts, "more" links) go, and before its first, link lines and short date
 * lines go; headings before it stay. Items of lists and tables stay, unless they are links.
 */
function trimEnds(root: DomElement, total: number): void {
  const blocks = textBlocks(root);
  const first = blocks.findIndex(isProse);
  if (first === -1) return;
  let last = blocks.length - 1;
  while (!isProse(blocks[last])) last -= 1;
  const removable = (block: TextBlock, tail: boolean) => {
    if (block.element === root || block.element.localName === 'pre') return false;
    // A heading before the text is the article's (its title links to the article itself on blogs).
    if (/^h[1-6]$/.test(block.element.localName)) return tail;
    const linky = block.linked > block.length * 0.5;
    if (/^(li|td|th|dt|dd|tr)$/.test(block.element.localName) && !linky) return false;
    if (linky) return true;
    const text = (block.element.textContent ?? '').trim();
    // A short closing sentence ("He said the work goes on.") is the article's; a line without an
    // end of sentence is a label, a notice or a prompt.
    return tail ? block.length < 120 && !SENTENCE_END.test(text.replace(/[（(][^（()）]{1,40}[)）]$/u, '')) : block.length < 80 && /\d/.test(text);
  };
  const drop: DomElement[] = [];
  let dropped = 0;
  for (let i = blocks.length - 1; i > last; i -= 1) {
    if (blocks[i].nested) continue;
    if (!removable(blocks[i], true)) break;
    drop.push(blocks[i].element);
    dropped += blocks[i].length;
  }
  for (let i = 0; i < first; i += 1) {
    if (blocks[i].nested || !removable(blocks[i], false)) continue;
    drop.push(blocks[i].element);
    dropped += blocks[i].length;
  }
  if (dropped > Math.max(300, total * 0.15)) return;
  for (const element of drop) if (root.contains(element)) element.remove();
}

/** What a figure shows besides its caption. */
const MEDIA = new Set(['img', 'picture', 'video']);

/** The blocks and lines the pruning looks at one by one. */
const PRUNED = ['div', 'section', 'ul', 'ol', 'p', 'span', 'aside', 'nav', 'footer', 'header', 'form', 'table', 'td', 'li', 'dl', 'small', 'address', 'time', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'b'];

/**
 * Removes boilerplate blocks inside the chosen content: the comment section, blocks named as
 * boilerplate, lists of links (with the heading that introduces them), picture captions and
 * credits, bylines and date lines, rights notices, comment forms, and link-only lines. A block
 * holding a large share of the text is never removed.
 */
function pruneBoilerplate(root: DomElement): void {
  const total = collapsedLength(root.textContent);
  const found = scan(root);
  removeCommentSection(root, found.markers, total);
  for (const element of found.captions) {
    if (root.contains(element) && collapsedLength(element.textContent) < Math.max(300, total * 0.1) && !CONTENT_NAME.test(nameOf(element))) element.remove();
  }
  // A figure holds a picture and its caption: its text is the caption.
  for (const element of found.figures) {
    if (root.contains(element) && findDescendant(element, (inner) => MEDIA.has(inner.localName.toLowerCase())) !== null && collapsedLength(element.textContent) < 300) element.remove();
  }
  removeNamedBoilerplate(root, found.named, total);
  // Measured once, bottom up: an element is looked at before anything inside it or after it is
  // removed, so its measure holds when it comes.
  const measures = measure(root);
  const lengthOf = (element: DomElement) => measures.get(element)?.length ?? collapsedLength(element.textContent);
  const densityOf = (element: DomElement) => {
    const measured = measures.get(element);
    if (measured === undefined) return linkDensity(element);
    return measured.length === 0 ? 0 : measured.linked / measured.length;
  };
  for (const element of elementsByTagNames(root, PRUNED)) {
    if (!root.contains(element) || element === root) continue;
    const local = element.localName;
    // Bold text counts only as a line of its own (a heading written in bold).
    if ((local === 'strong' || local === 'b') && element.parentElement?.children.length !== 1) continue;
    const length = lengthOf(element);
    if (length > total * 0.4) continue;
    let collapsed: string | undefined;
    const text = () => (collapsed ??= (element.textContent ?? '').replace(/\s+/g, ' ').trim());
    if (local === 'form' && element.hasAttribute(FORM_MARK)) {
      element.remove();
      continue;
    }
    // A heading, or a short line of its own, that introduces related links, comments or sharing.
    const line = (local === 'p' || local === 'div' || local === 'span') && length < 60 && element.children.length <= 1;
    if (/^h[2-6]$/.test(local) || line || ((local === 'strong' || local === 'b') && element.parentElement?.children.length === 1)) {
      const heading = local === 'strong' || local === 'b' ? element.parentElement! : element;
      if (BOILERPLATE_HEADING.test(heading === element ? text() : heading.textContent ?? '')) {
        // What follows such a heading goes while it is links or short lines.
        let next = heading.nextElementSibling;
        while (next !== null && (densityOf(next) > 0.5 || lengthOf(next) < 40) && lengthOf(next) < total * 0.2) {
          const after: DomElement | null = next.nextElementSibling;
          next.remove();
          next = after;
        }
        if (heading !== root) heading.remove();
        continue;
      }
      if (!line) continue;
    }
    if (local === 'aside' || local === 'nav') {
      element.remove();
      continue;
    }
    if (length < 60) {
      const label = trimEndWhile(text(), (char) => char === ':' || char === '.' || char === '…' || char === '-' || isWhitespace(char));
      if (AD_LABEL.test(label) || CONTROL_LABEL.test(label)) {
        element.remove();
        continue;
      }
    }
    if ((local === 'p' || local === 'div' || local === 'li' || local === 'span') && length < 250 && (TEASER_LINE.test(text()) || (CALL_TO_ACTION.test(text()) && !holdsBlock(element)))) {
      element.remove();
      continue;
    }
    if (local !== 'strong' && local !== 'b' && length > 0 && length <= 300 && isMetaLine(element, text())) {
      element.remove();
      continue;
    }
    const list = local === 'ul' || local === 'ol' || local === 'dl';
    const count = list || local === 'div' || local === 'section' || ((local === 'td' || local === 'table') && !inDataTable(element)) ? (measures.get(element)?.anchors ?? elementsByTagNames(element, ['a']).length) : 0;
    if (count >= (list ? 2 : 3) && length < 1000 && densityOf(element) > (list ? 0.5 : 0.7)) {
      // The heading just before a list of links names it ("Read more", "Related").
      const before = previousElement(element);
      if (before && /^h[1-6]$/.test(before.localName)) before.remove();
      element.remove();
      continue;
    }
    // A short line that is one link ("Read more", "To the shop").
    if ((local === 'p' || local === 'div') && length < 80 && length > 0 && densityOf(element) > 0.9) element.remove();
  }
  trimEnds(root, total);
}

/** The text of an element as runs of collapsed text: its collapsed length, and whether it starts or ends with whitespace. */
interface Span {
  length: number;
  lead: boolean;
  trail: boolean;
}

function textSpan(text: string): Span {
  const length = collapsedLength(text);
  if (text === '') return { length, lead: false, trail: false };
  return { length, lead: isSpaceCode(text.charCodeAt(0)), trail: isSpaceCode(text.charCodeAt(text.length - 1)) };
}

/** The span of two texts one after the other (whitespace between them collapses to one space). */
function joinSpans(a: Span, b: Span): Span {
  if (a.length === 0) return { length: b.length, lead: a.lead || b.lead, trail: b.length === 0 ? a.trail || b.trail : b.trail };
  if (b.length === 0) return { length: a.length, lead: a.lead, trail: a.trail || b.lead };
  return { length: a.length + b.length + (a.trail || b.lead ? 1 : 0), lead: a.lead, trail: b.trail };
}

interface Measure {
  /** Length of the collapsed `textContent`. */
  length: number;
  /** Sum of the collapsed text lengths of the anchors inside (as `linkDensity` adds them). */
  linked: number;
  /** Anchors inside. */
  anchors: number;
}

/** The measures of `root` and every element in it, in one walk. */
function measure(root: DomElement): Map<DomElement, Measure> {
  const measures = new Map<DomElement, Measure>();
  const walk = (element: DomElement): { span: Span; linked: number; anchors: number } => {
    let span: Span = { length: 0, lead: false, trail: false };
    let linked = 0;
    let anchors = 0;
    for (let child = element.firstChild; child !== null; child = child.nextSibling) {
      if (child.nodeType === 3 || child.nodeType === 4) span = joinSpans(span, textSpan(child.textContent ?? ''));
      else if (child.nodeType === 1) {
        const inner = walk(child as DomElement);
        span = joinSpans(span, inner.span);
        linked += inner.linked;
        anchors += inner.anchors;
        if ((child as DomElement).localName.toLowerCase() === 'a') {
          linked += inner.span.length;
          anchors += 1;
        }
      }
    }
    measures.set(element, { length: span.length, linked, anchors });
    return { span, linked, anchors };
  };
  walk(root);
  return measures;
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
export function findMainContent(document: DomDocument, options: { articleBody?: string; stepsHtml?: string } = {}): MainContent {
  // What the page's JSON-LD says its text is: used when the markup holds far less of it. A
  // HowTo's or Recipe's steps stand in only there (the markup of a recipe page rightly holds
  // more than its steps, so they never prune it as an article body does).
  const described = options.articleBody ?? options.stepsHtml;
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
    if (described && bodyLength(described) >= 200) return { element: paragraphs(document, described), title, wholePage: false };
    return { element: body, title, wholePage: true };
  }
  // The page's JSON-LD has the article body, and the markup holds far less of it: a page that
  // renders its text with scripts.
  if (described && bodyLength(described) > collapsedLength(element.textContent) * 2) {
    return { element: paragraphs(document, described), title, wholePage: false };
  }
  pruneBoilerplate(element);
  if (options.articleBody) keepArticleBody(element, options.articleBody);
  return { element, title, wholePage: false };
}

/**
 * Text for comparing the page's blocks with its JSON-LD: letters and digits only, lower case,
 * entities and tags dropped. Tags go first, then entities, as `/<[^>]*>|&[#\w]+;/g` takes them
 * (the space a tag leaves is in no entity).
 */
export const comparable = (text: string) => replaceTags(text, ' ').replace(/&[#\w]+;/g, ' ').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

/**
 * The page's JSON-LD `articleBody` is the publisher's own article text: when the content holds it
 * (most of it, in blocks found in it), blocks of the content that it lacks (captions, bylines,
 * teasers, prompts between paragraphs) go; headings stay, as the article body leaves out its
 * title, and its lead. A body that is a summary or a teaser of the article changes nothing.
 */
function keepArticleBody(root: DomElement, articleBody: string): void {
  const body = comparable(articleBody);
  if (body.length < 500) return;
  const blocks = textBlocks(root);
  let found = 0;
  let rootLength = 0;
  const missing: TextBlock[] = [];
  for (const block of blocks) {
    const text = comparable(block.element.localName === 'pre' ? block.element.textContent ?? '' : ownText(block.element));
    rootLength += text.length;
    if (text === '') continue;
    if (body.includes(text.slice(0, 100))) found += text.length;
    // Before the body's first block comes the article's lead, which the body often leaves out.
    else if (found > 0 && !/^h[1-6]$/.test(block.element.localName)) missing.push(block);
  }
  // Most of the body must be in the content, and most of the content in blocks found in the body.
  if (found < body.length * 0.8 || found < rootLength * 0.5) return;
  for (const block of missing) {
    if (!block.nested && block.element !== root && root.contains(block.element)) block.element.remove();
  }
}

/** The text directly inside `element` and its inline descendants, not inside nested blocks. */
function ownText(element: DomElement): string {
  let text = '';
  const walk = (node: DomNode) => {
    if (node.nodeType === 3) text += node.textContent ?? '';
    else if (node.nodeType === 1 && (node === element || !TEXT_BLOCKS.has((node as DomElement).localName))) for (let child = (node as DomElement).firstChild; child !== null; child = child.nextSibling) walk(child);
  };
  walk(element);
  return text;
}

interface ReadArticle {
  content: DomElement | null;
  title?: string | null;
}

/** Readability's article, or null when it finds none (or fails on odd markup). */
function readArticle(document: DomDocument): ReadArticle | null {
  try {
    const reader = new LinkedomReadability(document, { keepClasses: true, serializer: (element) => element as DomElement });
    try {
      return reader.parse() as ReadArticle | null;
    } finally {
      reader.showMarkup();
    }
  } catch {
    return null;
  }
}

/** A tag, in text. */
const MARKUP = /<\/?[a-z][a-z0-9-]*(\s[^<>]*)?\/?>/i;

/** The length of a JSON-LD body's text (its tags, when written as HTML, do not count). */
const bodyLength = (body: string) => collapsedLength(MARKUP.test(body) ? body.replace(/<[^<>]*>/g, ' ') : body);

/** Text as an element of paragraphs (one per line of the text). */
function paragraphs(document: DomDocument, text: string): DomElement {
  const root = document.createElement('div');
  // Some publishers write the JSON-LD body as HTML: it is read as markup, so that the writers
  // render it and no tag is left as text (lines without a block tag are paragraphs first).
  if (MARKUP.test(text)) {
    root.innerHTML = BLOCK_TAG.test(text) ? text : text.split(/\n+/).filter((line) => line.trim() !== '').map((line) => `<p>${line.trim()}</p>`).join('');
    for (const element of elementsWhere(root, (element) => NEVER_CONTENT.has(element.localName.toLowerCase()))) element.remove();
    return root;
  }
  for (const line of text.split(/\n+/)) {
    if (line.trim() === '') continue;
    const paragraph = document.createElement('p');
    paragraph.textContent = line.trim();
    root.appendChild(paragraph);
  }
  return root;
}
