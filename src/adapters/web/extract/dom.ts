/**
 * The part of the DOM the extraction uses, on `linkedom` documents (a fast DOM without a
 * browser). The project compiles without the DOM library, so the shapes are declared here.
 */
import { EventTarget, Node, parseHTML } from 'linkedom';

export interface DomNode {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  childNodes: ArrayLike<DomNode> & Iterable<DomNode>;
  parentNode: DomElement | DomDocument | null;
  nextSibling: DomNode | null;
}
export interface DomElement extends DomNode {
  tagName: string;
  localName: string;
  innerHTML: string;
  outerHTML: string;
  parentNode: DomElement | DomDocument | null;
  parentElement: DomElement | null;
  children: ArrayLike<DomElement> & Iterable<DomElement>;
  firstElementChild: DomElement | null;
  nextElementSibling: DomElement | null;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  hasAttribute(name: string): boolean;
  removeAttribute(name: string): void;
  remove(): void;
  contains(other: DomNode): boolean;
  closest(selector: string): DomElement | null;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): Iterable<DomElement>;
  appendChild(node: DomNode): DomNode;
  cloneNode(deep: boolean): DomElement;
  insertBefore(node: DomNode, before: DomNode | null): DomNode;
  firstChild: DomNode | null;
  nextSibling: DomNode | null;
}
export interface DomDocument {
  nodeType: number;
  body: DomElement | null;
  documentElement: DomElement;
  firstElementChild: DomElement | null;
  createElement(tag: string): DomElement;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): Iterable<DomElement>;
}

// ---- linkedom's per-node costs ----------------------------------------------------------------

/** An event as linkedom's `Event` has it (its `dispatchEvent` records the path on the event). */
interface LinkedomEvent {
  type: string;
  bubbles: boolean;
  cancelBubble: boolean;
  defaultPrevented: boolean;
  eventPhase: number;
  _stopImmediatePropagationFlag: boolean;
  _path: Array<{ currentTarget: ListenerTarget; target: ListenerTarget }>;
  currentTarget?: ListenerTarget;
  target?: ListenerTarget;
}
interface ListenerTarget {
  dispatchEvent?: unknown;
  _getParent?: () => ListenerTarget | null;
}
type Listener = ((event: LinkedomEvent) => void) | { handleEvent(event: LinkedomEvent): void };
type ListenerOptions = { once?: boolean } | boolean | null | undefined;

const NONE = 0;
const CAPTURING_PHASE = 1;
const AT_TARGET = 2;
const BUBBLING_PHASE = 3;

/** Listeners by target and event type; a target has an entry once it gets a listener. */
const listenersOf = new WeakMap<object, Map<string, Map<Listener, ListenerOptions>>>();

function invokeListeners(event: LinkedomEvent, { currentTarget, target }: { currentTarget: ListenerTarget; target: ListenerTarget }): boolean {
  const listeners = listenersOf.get(currentTarget)?.get(event.type);
  if (listeners === undefined) return false;
  event.eventPhase = currentTarget === target ? AT_TARGET : BUBBLING_PHASE;
  event.currentTarget = currentTarget;
  event.target = target;
  for (const [listener, options] of listeners) {
    if (options && (options as { once?: boolean }).once) listeners.delete(listener);
    if (typeof listener === 'function') listener.call(target, event);
    else listener.handleEvent(event);
    if (event._stopImmediatePropagationFlag) break;
  }
  delete event.currentTarget;
  delete event.target;
  return event.cancelBubble;
}

/**
 * linkedom's `EventTarget` constructor gives every node (attributes and text included) its own
 * map of listeners, kept in a `WeakMap`: for a 1 MB page, hundreds of thousands of maps a
 * conversion never uses, and weak entries the collector has to trace, about a fifth of the
 * conversion's CPU. Node constructors skip it here, and a target gets its map with its first
 * listener. `addEventListener`, `removeEventListener` and `dispatchEvent` behave as linkedom's
 * (same order, `once`, bubbling up to the window, `stopImmediatePropagation`), on that map.
 */
function makeListenerMapsLazy(): void {
  const nodeClass = (Node as unknown as { prototype: { constructor: object } }).prototype.constructor;
  if (Object.getPrototypeOf(nodeClass) !== EventTarget) throw new Error('linkedom: Node no longer extends EventTarget directly');
  // `super()` in Node's constructor calls Node's prototype: an empty base class makes no map.
  Object.setPrototypeOf(nodeClass, class ListenerlessTarget {});
  const methods = {
    addEventListener(this: object, type: string, listener: Listener, options?: ListenerOptions): void {
      let byType = listenersOf.get(this);
      if (byType === undefined) listenersOf.set(this, (byType = new Map()));
      let listeners = byType.get(type);
      if (listeners === undefined) byType.set(type, (listeners = new Map()));
      listeners.set(listener, options);
    },
    removeEventListener(this: object, type: string, listener: Listener): void {
      const byType = listenersOf.get(this);
      const listeners = byType?.get(type);
      if (listeners !== undefined && listeners.delete(listener) && listeners.size === 0) byType!.delete(type);
    },
    dispatchEvent(this: ListenerTarget, event: LinkedomEvent): boolean {
      event.eventPhase = CAPTURING_PHASE;
      for (let node: ListenerTarget | null | false | undefined = this; node; node = event.bubbles && node._getParent && node._getParent()) {
        if (node.dispatchEvent) event._path.push({ currentTarget: node, target: this });
      }
      event._path.some((step) => invokeListeners(event, step));
      event._path = [];
      event.eventPhase = NONE;
      return !event.defaultPrevented;
    },
  };
  // As class methods are: not enumerable.
  for (const [name, method] of Object.entries(methods)) Object.defineProperty((EventTarget as unknown as { prototype: object }).prototype, name, { value: method, writable: true, configurable: true, enumerable: false });
}
makeListenerMapsLazy();

/** A node of linkedom's list: an element, text, comment, attribute, or an element's end marker (type -1). */
interface Linked {
  nodeType: number;
  localName?: string;
}

/**
 * linkedom keeps a document as one list in document order: each node links to the next, an
 * element's attributes follow it, and its children run up to its end marker. Walking that list
 * finds descendants without the sibling and child getters, which each walk the list themselves.
 * The two links are linkedom's private symbols, found by their names on a parsed element.
 */
const [NEXT, END] = (() => {
  const probe = parseHTML('<html><body><p></p></body></html>').document.body.firstElementChild as unknown as Record<symbol, unknown>;
  const byName = (name: string) => Object.getOwnPropertySymbols(probe).find((symbol) => symbol.description === name);
  const next = byName('next');
  const end = byName('end');
  if (next === undefined || end === undefined || probe[next] !== probe[end] || (probe[end] as Linked).nodeType !== -1) throw new Error("linkedom: the nodes' next and end links were not found");
  return [next, end];
})();

const nextInDocument = (node: Linked): Linked => (node as unknown as Record<symbol, Linked>)[NEXT]!;
const endOf = (node: Linked | DomElement | DomDocument): Linked => (node as unknown as Record<symbol, Linked>)[END]!;

/**
 * The page as a document with an `<html>` root, as a browser's parser always builds one. linkedom
 * keeps only what the markup has: a page without any element (an empty body, bare text, a doctype
 * or a comment alone) gives a document without a root, on which `body` throws, and a fragment
 * (`<p>…</p>`) makes its first element the root, under which `body` comes out empty. Such a page
 * is parsed again inside `<html><body>`, so its text is the body's. A page whose `<title>` is
 * never closed is parsed again with it closed.
 */
export function parseDocument(html: string): DomDocument {
  let parsed = parseHTML(html).document as unknown as { documentElement: DomElement | null; head: DomElement | null; body: DomElement | null };
  // (linkedom's `head` and `body` throw on a document without a root.)
  if (parsed.documentElement?.localName === 'html' && swallowedByTitle(parsed.head, parsed.body)) parsed = parseHTML(closeTitle(html)).document as unknown as typeof parsed;
  if (parsed.documentElement?.localName !== 'html') return parseHTML(`<!DOCTYPE html><html><body>${html}</body></html>`).document as unknown as DomDocument;
  if (parsed.head && parsed.body) moveBodyOutOfHead(parsed.head, parsed.body);
  if (parsed.body) moveStrayIntoBody(parsed.documentElement, parsed.body);
  return parsed as unknown as DomDocument;
}

/**
 * A `<title>` that is never closed makes the rest of the page its text (the title's content is
 * read as text up to `</title>`): the page comes out empty. Such a title holds markup, and the
 * body holds no text.
 */
function swallowedByTitle(head: DomElement | null, body: DomElement | null): boolean {
  if (head === null) return false;
  for (const child of head.children) {
    if (child.localName !== 'title') continue;
    // The body's text is read only for such a title: reading it costs a walk of the whole page.
    return holdsTag(child.textContent ?? '') && (body === null || (body.textContent ?? '').trim() === '');
  }
  return false;
}

/** Whether `text` holds a tag: `/<\/?[a-z][^>]*>/i.test(text)`, a tag's start with a `>` after it. */
export function holdsTag(text: string): boolean {
  const start = /<\/?[a-z]/i.exec(text);
  return start !== null && text.indexOf('>', start.index + start[0].length) !== -1;
}

/** The page with its unclosed `<title>` closed at the first tag after it, as lenient parsers (libxml2's) read it. */
export function closeTitle(html: string): string {
  // Where `/<title\b[^>]*>/i` ends its first match: the first `<title` has the first `>` after it,
  // or no `<title` has one.
  const start = /<title\b/i.exec(html);
  if (start === null) return html;
  const tagEnd = html.indexOf('>', start.index + start[0].length);
  if (tagEnd === -1) return html;
  const end = tagEnd + 1;
  const nextTag = html.indexOf('<', end);
  return nextTag === -1 ? html : `${html.slice(0, nextTag)}</title>${html.slice(nextTag)}`;
}

/** Elements and text left directly under `<html>` (markup without a `<body>` tag) belong to the body, as in a browser. */
function moveStrayIntoBody(html: DomElement, body: DomElement): void {
  const stray: DomNode[] = [];
  for (const node of html.childNodes) {
    if (node === body || (node.nodeType === 1 && (node as DomElement).localName === 'head')) continue;
    if (node.nodeType === 1 || (node.nodeType === 3 && (node.textContent ?? '').trim() !== '')) stray.push(node);
  }
  for (const node of stray) body.appendChild(node);
}

/** What a browser keeps in `<head>`; anything else starts the body. */
const HEAD_ELEMENTS = new Set(['title', 'meta', 'link', 'style', 'script', 'base', 'noscript', 'template']);

/**
 * A page without a `<body>` tag: linkedom leaves everything after `<head>` in the head, where a
 * browser starts the body at the first element that cannot be in the head. So does this.
 */
function moveBodyOutOfHead(head: DomElement, body: DomElement): void {
  let start: DomNode | null = null;
  for (const child of head.children) {
    if (!HEAD_ELEMENTS.has(child.localName)) {
      start = child;
      break;
    }
  }
  if (start === null) return;
  const moving: DomNode[] = [];
  for (let node: DomNode | null = start; node !== null; node = (node as DomElement).nextSibling) moving.push(node);
  const first = body.firstChild;
  for (const node of moving) body.insertBefore(node, first);
}

/** The document's body, or its root when the markup has no body. */
export function bodyOf(document: DomDocument): DomElement {
  return document.body ?? document.documentElement;
}

/**
 * The descendants of `root` whose tag is one of `tagNames`, as `querySelectorAll(tagNames.join(','))`
 * finds them on linkedom (document order, names compared without case, the inside of `<template>`
 * skipped), by one walk: linkedom compiles a selector into a matcher on every call.
 */
export function elementsByTagNames(root: DomElement | DomDocument, tagNames: readonly string[]): DomElement[] {
  const names = new Set(tagNames.map((name) => name.toLowerCase()));
  // Readability asks for one tag at a time, many times over the whole article: that case compares strings.
  const single = names.size === 1 ? [...names][0] : undefined;
  const found: DomElement[] = [];
  const end = endOf(root);
  for (let node = nextInDocument(root as unknown as Linked); node !== end; node = nextInDocument(node)) {
    if (node.nodeType !== 1) continue;
    const name = node.localName!;
    if (single !== undefined ? name === single || name.toLowerCase() === single : names.has(name) || names.has(name.toLowerCase())) found.push(node as unknown as DomElement);
    if (name === 'template') node = endOf(node);
  }
  return found;
}

/** A tag that makes a block of its own, in markup kept as text (JSON-LD bodies written as HTML). */
export const BLOCK_TAG = /<\/?(p|div|br|li|ul|ol|h[1-6]|blockquote|table|pre|figure|section)(\s[^<>]*)?\/?>/i;

/** The tag names (lower case) of the descendants of `root`, the inside of `<template>` included, by one walk. */
export function tagNamesUnder(root: DomElement | DomDocument): Set<string> {
  const names = new Set<string>();
  const end = endOf(root);
  for (let node = nextInDocument(root as unknown as Linked); node !== end; node = nextInDocument(node)) {
    if (node.nodeType === 1) names.add(node.localName!.toLowerCase());
  }
  return names;
}

/** The descendants of `root` that pass `test`, in document order, as `querySelectorAll` finds them (the inside of `<template>` skipped), by one walk. */
export function elementsWhere(root: DomElement | DomDocument, test: (element: DomElement) => boolean): DomElement[] {
  const found: DomElement[] = [];
  const end = endOf(root);
  for (let node = nextInDocument(root as unknown as Linked); node !== end; node = nextInDocument(node)) {
    if (node.nodeType !== 1) continue;
    if (test(node as unknown as DomElement)) found.push(node as unknown as DomElement);
    if (node.localName === 'template') node = endOf(node);
  }
  return found;
}

/** The first descendant of `root` (in document order, the inside of `<template>` skipped) that passes `test`, found as `elementsWhere` walks. */
export function findDescendant(root: DomElement, test: (element: DomElement) => boolean): DomElement | null {
  const end = endOf(root);
  for (let node = nextInDocument(root as unknown as Linked); node !== end; node = nextInDocument(node)) {
    if (node.nodeType !== 1) continue;
    if (test(node as unknown as DomElement)) return node as unknown as DomElement;
    if (node.localName === 'template') node = endOf(node);
  }
  return null;
}

/** Whether a UTF-16 code unit is whitespace as `\s` and `trim()` see it. */
export function isSpaceCode(code: number): boolean {
  if (code <= 32) return code === 32 || (code >= 9 && code <= 13);
  if (code < 160) return false;
  return code === 160 || code === 0x1680 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029 || code === 0x202f || code === 0x205f || code === 0x3000 || code === 0xfeff;
}

/**
 * Length of `text` with whitespace runs collapsed to one space and the ends trimmed, counted
 * without building the collapsed string (this runs on the text of most blocks of a page).
 */
export function collapsedLength(text: string | null | undefined): number {
  if (!text) return 0;
  let length = 0;
  let space = false;
  for (let i = 0; i < text.length; i += 1) {
    if (isSpaceCode(text.charCodeAt(i))) {
      if (length > 0) space = true;
    } else {
      if (space) length += 1;
      space = false;
      length += 1;
    }
  }
  return length;
}
