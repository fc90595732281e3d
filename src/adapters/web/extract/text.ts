/** Plain text of an element: one line per block (paragraph, heading, list item, table row). */
import type { DomElement, DomNode } from './dom.ts';

const BLOCK_ELEMENTS = new Set([
  'ADDRESS', 'ARTICLE', 'ASIDE', 'BLOCKQUOTE', 'CAPTION', 'DD', 'DIV', 'DL', 'DT', 'FIELDSET', 'FIGCAPTION', 'FIGURE', 'FOOTER', 'FORM',
  'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'HEADER', 'HR', 'LI', 'MAIN', 'NAV', 'OL', 'P', 'SECTION', 'TABLE', 'TR', 'UL', 'DETAILS', 'SUMMARY',
]);

/** Text with one line per block, whitespace collapsed inside lines, `<pre>` kept as is, table cells split by tabs. */
export function blockText(root: DomElement): string {
  const lines: string[] = [];
  let current = '';
  const flush = () => {
    // A lone space is left as it is (replacing it with itself would copy most lines).
    const line = current.replace(/[ \t\r\n\f]{2,}|[\t\r\n\f]/g, ' ').trim();
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
      const text = (element.textContent ?? '').trimEnd();
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
