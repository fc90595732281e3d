/**
 * The part of the DOM the extraction uses, on `linkedom` documents (a fast DOM without a
 * browser). The project compiles without the DOM library, so the shapes are declared here.
 */
import { parseHTML } from 'linkedom';

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

/**
 * The page as a document with an `<html>` root, as a browser's parser always builds one. linkedom
 * keeps only what the markup has: a page without any element (an empty body, bare text, a doctype
 * or a comment alone) gives a document without a root, on which `body` throws, and a fragment
 * (`<p>…</p>`) makes its first element the root, under which `body` comes out empty. Such a page
 * is parsed again inside `<html><body>`, so its text is the body's.
 */
export function parseDocument(html: string): DomDocument {
  const parsed = parseHTML(html).document as unknown as { documentElement: DomElement | null; head: DomElement | null; body: DomElement | null };
  if (parsed.documentElement?.localName !== 'html') return parseHTML(`<!DOCTYPE html><html><body>${html}</body></html>`).document as unknown as DomDocument;
  if (parsed.head && parsed.body) moveBodyOutOfHead(parsed.head, parsed.body);
  if (parsed.body) moveStrayIntoBody(parsed.documentElement, parsed.body);
  return parsed as unknown as DomDocument;
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

/** The descendants of `root` that pass `test`, in document order, as `querySelectorAll` finds them (the inside of `<template>` skipped), by one walk. */
export function elementsWhere(root: DomElement, test: (element: DomElement) => boolean): DomElement[] {
  const found: DomElement[] = [];
  findDescendant(root, (element) => {
    if (test(element)) found.push(element);
    return false;
  });
  return found;
}

/** The first descendant of `root` (in document order, the inside of `<template>` skipped) that passes `test`, found as `elementsByTagNames` walks. */
export function findDescendant(root: DomElement, test: (element: DomElement) => boolean): DomElement | null {
  let node = root.firstElementChild;
  while (node !== null) {
    if (test(node)) return node;
    const child = node.localName === 'template' ? null : node.firstElementChild;
    if (child !== null) {
      node = child;
      continue;
    }
    let next: DomElement | null = null;
    for (let at: DomElement | null = node; at !== root && at !== null; at = at.parentElement) {
      next = at.nextElementSibling;
      if (next !== null) break;
    }
    node = next;
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
