/**
 * Markdown that LLM pipelines can trust, written in one pass over the already-parsed DOM. The
 * output is turndown's (its whitespace collapsing, block joining, escaping and CommonMark rules,
 * with the GFM strikethrough), with rules of ours:
 *
 * - no raw HTML: every table becomes a GFM table (a headerless one gets an empty generated header
 *   row; colspan and rowspan are spread over the grid) or, for layout tables of one row or one
 *   column, plain paragraphs; a table inside a table cell is flattened into the cell's text;
 * - fenced code blocks carry their language when the page names it (`language-*`, `lang-*`,
 *   `highlight-*` classes, `data-lang`);
 * - no empty headings, no empty links, no `data:` images;
 * - `linksInline: false` keeps the text of links and drops images.
 *
 * Links and images must already be absolute (formats.ts resolves them on the document).
 *
 * Why not turndown itself: it asks each node for its `textContent` (whether it is blank, its
 * flanking whitespace), which on a large page walks the same subtrees again and again, and it
 * collapses whitespace by editing the document. Here the document is read once into a light tree
 * of collapsed text, and everything is computed on that tree, each subtree's text at most once.
 */
import type { DomElement, DomNode } from './dom.ts';
import { lazySpans, replaceSpans, trimTrailing } from '../../../core/text.ts';

// Markers that carry table cells and rows from the inner rules up to the table rule. Control
// characters never kept in the output.
const CELL = '\u0002';
const CELL_TEXT = '\u0003';
const CELL_END = '\u0004';
const ROW = '\u0005';
const ROW_END = '\u0006';
/** A line break inside a cell: a space in a GFM table, a paragraph break where the table is only layout. */
const CELL_BREAK = '\u0007';
const MARKERS = /[\u0002-\u0007]/g;

/** `text` with each run of whitespace that holds a line break replaced, as the regular expression `\s*\n[\s\n]*` (global) replaces it. */
export const replaceLineBreakRuns = (text: string, replacement: string) => text.replace(/\s+/g, (run) => (run.includes('\n') ? replacement : run));

/** `text` without CELL_BREAKs at either end: `text.replace(/^\u0007+|\u0007+$/g, '')`. */
function trimCellBreaks(text: string): string {
  let start = 0;
  while (start < text.length && text[start] === CELL_BREAK) start += 1;
  return trimTrailing(text.slice(start), CELL_BREAK);
}

/** A cell's text: markers gone, each run of whitespace with a line break a CELL_BREAK, pipes escaped. */
export function cellText(content: string): string {
  return trimCellBreaks(replaceLineBreakRuns(content.replace(MARKERS, ' '), CELL_BREAK).replace(/\|/g, '\\|')).trim();
}

/**
 * `text` with each CELL_BREAK and the whitespace around it replaced, as the regular expression
 * `\s*\u0007\s*` (global) replaces them: a run of whitespace and breaks becomes one replacement per break.
 */
export const replaceCellBreaks = (text: string, replacement: string) =>
  text.replace(/[\s\u0007]+/g, (run) => (run.includes(CELL_BREAK) ? replacement.repeat(run.split(CELL_BREAK).length - 1) : run));

/** A cell's text on one line (in a GFM table, or flattened into the cell of another table), or as paragraphs (a layout table's). */
const oneLine = (text: string) => replaceCellBreaks(text, ' ');
const asParagraphs = (text: string) => replaceCellBreaks(text, '\n\n');

function span(node: DomElement, attribute: string): number {
  const value = Number.parseInt(node.getAttribute(attribute) ?? '1', 10);
  return Number.isFinite(value) && value > 1 ? Math.min(value, 50) : 1;
}

/** Whether `node` is inside a cell of another table (a cell whose own table is gone, as Readability leaves some, does not count). */
function insideCell(node: DomElement): boolean {
  let cell = false;
  for (let at = node.parentElement; at !== null; at = at.parentElement) {
    if (at.localName === 'td' || at.localName === 'th') cell = true;
    else if (cell && at.localName === 'table') return true;
  }
  return false;
}

/** Whether a row or a cell is in a table: Readability turns some tables into a `div` and leaves their rows in it. */
const inTable = (node: DomElement) => node.closest('table') !== null;

const ROW_START = /\u0005([hd])\u0003/g;
const CELL_START = /\u0002([hd]),(\d+),(\d+)\u0003/g;

/** `content` with each row replaced by a space: `content.replace(/\u0005[hd]\u0003[\s\S]*?\u0006/g, ' ')`. */
export const outsideRows = (content: string) => replaceSpans(content, ROW_START, ROW_END, ' ');

interface Cell {
  header: boolean;
  colspan: number;
  rowspan: number;
  text: string;
}

export function parseRows(content: string): Array<{ head: boolean; cells: Cell[] }> {
  const rows: Array<{ head: boolean; cells: Cell[] }> = [];
  // What `/\u0005([hd])\u0003([\s\S]*?)\u0006/g` and `/\u0002([hd]),(\d+),(\d+)\u0003([\s\S]*?)\u0004/g` match.
  for (const row of lazySpans(content, ROW_START, ROW_END)) {
    const cells: Cell[] = [];
    for (const { header: cell, content: text } of lazySpans(row.content, CELL_START, CELL_END)) {
      cells.push({ header: cell[1] === 'h', colspan: Number(cell[2]), rowspan: Number(cell[3]), text });
    }
    rows.push({ head: row.header[1] === 'h', cells });
  }
  return rows;
}

/** The rows laid on a grid: a spanned cell's text in its first slot, empty slots for the rest. */
function grid(rows: Array<{ cells: Cell[] }>): string[][] {
  const lines: string[][] = [];
  const carried: number[] = []; // rows still covered by a rowspan, per column
  for (const row of rows) {
    const line: string[] = [];
    let column = 0;
    const skipCarried = () => {
      while ((carried[column] ?? 0) > 0) {
        carried[column] -= 1;
        line[column] = '';
        column += 1;
      }
    };
    for (const cell of row.cells) {
      skipCarried();
      for (let i = 0; i < cell.colspan && column < 100; i += 1) {
        line[column] = i === 0 ? cell.text : '';
        if (cell.rowspan > 1) carried[column] = cell.rowspan - 1;
        column += 1;
      }
    }
    skipCarried();
    for (let rest = column; rest < carried.length; rest += 1) {
      if ((carried[rest] ?? 0) > 0) {
        carried[rest] -= 1;
        line[rest] = '';
      }
    }
    lines.push(Array.from(line, (text) => text ?? ''));
  }
  return lines;
}

/** Spaces before a `|` made one: `text.replace(/ {2,}\|/g, ' |')`, each run of spaces read once. */
export const oneSpaceBeforePipes = (text: string) => text.replace(/ +\|?/g, (run) => (run.endsWith('|') ? ' |' : run));

function renderTable(content: string, node: DomElement): string {
  const rows = parseRows(content);
  const outside = outsideRows(content).replace(MARKERS, ' ').trim();
  const caption = outside === '' ? '' : `${outside}\n\n`;
  if (insideCell(node)) {
    const flat = rows.map((row) => row.cells.map((cell) => oneLine(cell.text)).filter((text) => text !== '').join(', ')).filter((text) => text !== '');
    return ` ${[outside, ...flat].filter((text) => text !== '').join('; ')} `;
  }
  let lines = grid(rows).filter((line) => line.some((text) => text !== ''));
  const width = Math.max(0, ...lines.map((line) => line.length));
  // Columns empty in every row are spacers.
  const used = Array.from({ length: width }, (_, column) => lines.some((line) => (line[column] ?? '') !== ''));
  lines = lines.map((line) => Array.from({ length: width }, (_, column) => line[column] ?? '').filter((_, column) => used[column]));
  const columns = used.filter(Boolean).length;
  if (lines.length === 0) return outside === '' ? '' : `\n\n${outside}\n\n`;
  // A layout table (one row or one column) is its cells, one paragraph each.
  if (columns === 1 || lines.length === 1) {
    return `\n\n${caption}${lines.flat().filter((text) => text !== '').map(asParagraphs).join('\n\n')}\n\n`;
  }
  const firstRow = rows.find((row) => row.cells.some((cell) => cell.text !== ''));
  const hasHeader = firstRow !== undefined && (firstRow.head || firstRow.cells.every((cell) => cell.header));
  const header = hasHeader ? lines[0] : Array.from({ length: columns }, () => '');
  const body = hasHeader ? lines.slice(1) : lines;
  const format = (line: string[]) => oneSpaceBeforePipes(`| ${line.map(oneLine).join(' | ')} |`);
  const table = [format(header), `| ${Array.from({ length: columns }, () => '---').join(' | ')} |`, ...body.map(format)].join('\n');
  return `\n\n${caption}${table}\n\n`;
}

const LANGUAGE_CLASS = /(?:^|\s)(?:language|lang|highlight-source|highlight|brush:?\s*|sourceCode)-?([a-z0-9_+#.-]+)/i;

function codeLanguage(pre: DomElement): string {
  const candidates = [pre.firstElementChild?.localName === 'code' ? pre.firstElementChild : null, pre, pre.parentElement, pre.parentElement?.parentElement ?? null];
  for (const element of candidates) {
    if (!element) continue;
    const declared = element.getAttribute('data-lang') ?? element.getAttribute('data-language');
    if (declared && /^[\w+#.-]{1,30}$/.test(declared)) return declared.toLowerCase();
    const match = LANGUAGE_CLASS.exec(element.getAttribute('class') ?? '');
    if (match && !/^(source|none|plaintext|text|nohighlight|default|code|js-|block)$/i.test(match[1]) && match[1].length <= 30) return match[1].toLowerCase();
  }
  return '';
}

// ---- turndown's element classes and escapes -----------------------------------------------

const BLOCK = new Set(['ADDRESS', 'ARTICLE', 'ASIDE', 'AUDIO', 'BLOCKQUOTE', 'BODY', 'CANVAS', 'CENTER', 'DD', 'DIR', 'DIV', 'DL', 'DT', 'FIELDSET', 'FIGCAPTION', 'FIGURE', 'FOOTER', 'FORM', 'FRAMESET', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'HEADER', 'HGROUP', 'HR', 'HTML', 'ISINDEX', 'LI', 'MAIN', 'MENU', 'NAV', 'NOFRAMES', 'NOSCRIPT', 'OL', 'OUTPUT', 'P', 'PRE', 'SECTION', 'TABLE', 'TBODY', 'TD', 'TFOOT', 'TH', 'THEAD', 'TR', 'UL']);
const VOID = new Set(['AREA', 'BASE', 'BR', 'COL', 'COMMAND', 'EMBED', 'HR', 'IMG', 'INPUT', 'KEYGEN', 'LINK', 'META', 'PARAM', 'SOURCE', 'TRACK', 'WBR']);
/** Elements kept even without text (a blank element is written as nothing, or a paragraph break). */
const MEANINGFUL_WHEN_BLANK = new Set(['A', 'TABLE', 'THEAD', 'TBODY', 'TFOOT', 'TH', 'TD', 'IFRAME', 'SCRIPT', 'AUDIO', 'VIDEO']);
const HEADINGS = new Set(['H1', 'H2', 'H3', 'H4', 'H5', 'H6']);

const ESCAPES: Array<[RegExp, string]> = [
  [/\\/g, '\\\\'], [/\*/g, '\\*'], [/^-/g, '\\-'], [/^\+ /g, '\\+ '], [/^(=+)/g, '\\$1'], [/^(#{1,6}) /g, '\\$1 '], [/`/g, '\\`'],
  [/^~~~/g, '\\~~~'], [/\[/g, '\\['], [/\]/g, '\\]'], [/^>/g, '\\>'], [/_/g, '\\_'], [/^(\d+)\. /g, '$1\\. '],
];
/** Text none of the escapes touch: most of a page's text nodes. */
const NOTHING_TO_ESCAPE = /^(?![-+=#~>\d])[^\\*`[\]_]*$/;

function escapeText(text: string): string {
  if (NOTHING_TO_ESCAPE.test(text)) return text;
  let escaped = text;
  for (const [pattern, replacement] of ESCAPES) escaped = escaped.replace(pattern, replacement);
  return escaped;
}

const WHITESPACE = /\s/;
const isSpace = (character: string) => WHITESPACE.test(character);
const isAsciiSpace = (character: string) => character === ' ' || character === '\t' || character === '\r' || character === '\n';

function trimLeadingNewlines(text: string): string {
  let start = 0;
  while (start < text.length && text.charCodeAt(start) === 10) start += 1;
  return start === 0 ? text : text.slice(start);
}

function trimTrailingNewlines(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 10) end -= 1;
  return end === text.length ? text : text.slice(0, end);
}

// ---- the light tree ------------------------------------------------------------------------

/** A text node once its whitespace is collapsed (it may have become empty, and still counts as a sibling). */
interface TextItem {
  kind: 'text';
  text: string;
}

/** A comment, kept only where whitespace is not collapsed (a `<pre>` converted as the root). */
interface OtherItem {
  kind: 'other';
}

interface ElementItem {
  kind: 'element';
  element: DomElement;
  /** The element's `nodeName` (upper case for HTML elements). */
  name: string;
  children: Item[];
  /** `<pre>`: its text as written (its children are not read). */
  raw?: string;
  blank?: boolean;
  text?: string;
}

type Item = TextItem | OtherItem | ElementItem;

/**
 * The runs of ASCII whitespace that collapsing to one space changes: longer than one, or a
 * lone tab or line break. A lone space is left alone, so most text nodes come out as they are,
 * without a copy.
 */
const WHITESPACE_TO_COLLAPSE = /[ \r\n\t]{2,}|[\r\n\t]/g;

const nextSibling = (node: DomNode): DomNode | null => (node as DomNode & { nextSibling: DomNode | null }).nextSibling;

/**
 * The children of `root` as a light tree, with turndown's whitespace collapsing (runs of ASCII
 * whitespace become one space; spaces at the edges of blocks and repeated across inline
 * boundaries go; `<pre>` is left as it is). Comments and other nodes are dropped.
 */
function readTree(root: DomElement): Item[] {
  const items: Item[] = [];
  if (root.firstChild === null) return items;
  if (root.nodeName === 'PRE') {
    for (let node: DomNode | null = root.firstChild; node !== null; node = nextSibling(node)) {
      if (node.nodeType === 3 || node.nodeType === 4) items.push({ kind: 'text', text: node.textContent ?? '' });
      else if (node.nodeType === 1) items.push(readElement(node as DomElement));
      else items.push({ kind: 'other' });
    }
    return items;
  }
  let previousText: TextItem | null = null;
  let keepLeadingSpace = false;
  const visit = (name: string) => {
    if (BLOCK.has(name) || name === 'BR') {
      if (previousText !== null && previousText.text.endsWith(' ')) previousText.text = previousText.text.slice(0, -1);
      previousText = null;
      keepLeadingSpace = false;
    } else if (VOID.has(name) || name === 'PRE') {
      previousText = null;
      keepLeadingSpace = true;
    } else if (previousText !== null) {
      keepLeadingSpace = false;
    }
  };
  const read = (parent: DomElement, into: Item[]) => {
    for (let node: DomNode | null = parent.firstChild; node !== null; node = nextSibling(node)) {
      if (node.nodeType === 3 || node.nodeType === 4) {
        let text = (node.textContent ?? '').replace(WHITESPACE_TO_COLLAPSE, ' ');
        if ((previousText === null || previousText.text.endsWith(' ')) && !keepLeadingSpace && text.charCodeAt(0) === 32) text = text.slice(1);
        if (text === '') continue;
        const item: TextItem = { kind: 'text', text };
        into.push(item);
        previousText = item;
      } else if (node.nodeType === 1) {
        const element = node as DomElement;
        const item: ElementItem = { kind: 'element', element, name: element.nodeName, children: [] };
        into.push(item);
        visit(item.name);
        if (item.name === 'PRE') {
          item.raw = element.textContent ?? '';
        } else if (element.firstChild !== null) {
          read(element, item.children);
          // turndown's walk comes back to an element after its children, and judges it again.
          visit(item.name);
        }
      }
    }
  };
  read(root, items);
  const last = previousText as TextItem | null;
  if (last !== null && last.text.endsWith(' ')) last.text = last.text.slice(0, -1);
  return items;
}

/** An element read without collapsing its whitespace (inside a `<pre>` root). */
function readElement(element: DomElement): ElementItem {
  const item: ElementItem = { kind: 'element', element, name: element.nodeName, children: [] };
  if (item.name === 'PRE') {
    item.raw = element.textContent ?? '';
    return item;
  }
  for (let node: DomNode | null = element.firstChild; node !== null; node = nextSibling(node)) {
    if (node.nodeType === 3 || node.nodeType === 4) item.children.push({ kind: 'text', text: node.textContent ?? '' });
    else if (node.nodeType === 1) item.children.push(readElement(node as DomElement));
    else item.children.push({ kind: 'other' });
  }
  return item;
}

/** The element's text content, as the collapsed document has it. */
function textOf(item: Item): string {
  if (item.kind === 'text') return item.text;
  if (item.kind === 'other') return '';
  if (item.text !== undefined) return item.text;
  item.text = item.raw ?? item.children.map(textOf).join('');
  return item.text;
}

/** No text but whitespace, and no void or meaningful-when-blank element, itself or inside. */
function isBlank(item: ElementItem): boolean {
  if (item.blank !== undefined) return item.blank;
  let blank: boolean;
  if (VOID.has(item.name) || MEANINGFUL_WHEN_BLANK.has(item.name)) blank = false;
  else if (item.raw !== undefined) blank = /^\s*$/.test(item.raw) && !holdsKept(item.element);
  else blank = item.children.every((child) => (child.kind === 'element' ? isBlank(child) : child.kind === 'other' || /^\s*$/.test(child.text)));
  item.blank = blank;
  return blank;
}

/** Whether a void or meaningful-when-blank element is inside `element` (read from the document: a `<pre>`'s children are not in the tree). */
function holdsKept(element: DomElement): boolean {
  for (const child of element.children) {
    const name = child.nodeName.toUpperCase();
    if (VOID.has(name) || MEANINGFUL_WHEN_BLANK.has(name) || holdsKept(child)) return true;
  }
  return false;
}

const NO_SPACE = { leading: '', trailing: '' };

/**
 * turndown's flanking whitespace of an inline element: the whitespace at the edges of its text
 * is moved outside its Markdown (`**bold **` would not be bold), unless the text beside it
 * already ends (or starts) with a space.
 */
function flankingSpace(item: ElementItem, siblings: readonly Item[], index: number): { leading: string; trailing: string } {
  const text = textOf(item);
  if (text === '' || (!isSpace(text[0]!) && !isSpace(text[text.length - 1]!))) return NO_SPACE;
  let lead = 0;
  while (lead < text.length && isSpace(text[lead]!)) lead += 1;
  let leading = text.slice(0, lead);
  let trailing = '';
  if (lead < text.length) {
    let end = text.length;
    while (end > 0 && isSpace(text[end - 1]!)) end -= 1;
    trailing = text.slice(end);
  }
  let asciiLead = 0;
  while (asciiLead < leading.length && isAsciiSpace(leading[asciiLead]!)) asciiLead += 1;
  let asciiTrail = 0;
  while (asciiTrail < trailing.length && isAsciiSpace(trailing[trailing.length - 1 - asciiTrail]!)) asciiTrail += 1;
  if (asciiLead > 0 && flankedBySpace(siblings[index - 1], 'left')) leading = leading.slice(asciiLead);
  if (asciiTrail > 0 && flankedBySpace(siblings[index + 1], 'right')) trailing = trailing.slice(0, trailing.length - asciiTrail);
  return { leading, trailing };
}

function flankedBySpace(sibling: Item | undefined, side: 'left' | 'right'): boolean {
  if (sibling === undefined || sibling.kind === 'other') return false;
  if (sibling.kind === 'element' && BLOCK.has(sibling.name)) return false;
  const text = textOf(sibling);
  return side === 'left' ? text.endsWith(' ') : text.startsWith(' ');
}

// ---- writing -------------------------------------------------------------------------------

/**
 * Appends `replacement` to `output` as turndown joins blocks: the newlines where they meet
 * become the larger of the two runs, at most two. Only the last part is ever trimmed, so a large
 * output is never copied.
 */
function join(output: string[], replacement: string): void {
  const tail = output.pop() ?? '';
  const before = trimTrailingNewlines(tail);
  const after = trimLeadingNewlines(replacement);
  const newlines = Math.max(tail.length - before.length, replacement.length - after.length);
  const separator = '\n\n'.slice(0, newlines);
  if (before !== '') output.push(before);
  if (separator !== '') output.push(separator);
  if (after !== '') output.push(after);
}

interface Writer {
  linksInline: boolean;
}

function writeChildren(items: readonly Item[], inCode: boolean, writer: Writer): string {
  const output: string[] = [];
  let elementIndex = 0;
  for (let index = 0; index < items.length; index += 1) {
    const item = items[index]!;
    if (item.kind === 'text') join(output, inCode ? item.text : escapeText(item.text));
    else if (item.kind === 'element') join(output, writeElement(item, items, index, elementIndex++, inCode, writer));
    else join(output, '');
  }
  return output.join('');
}

/**
 * One element as Markdown. `elementIndex` is its place among its parent's element children (a
 * numbered list item's number).
 */
function writeElement(item: ElementItem, siblings: readonly Item[], index: number, elementIndex: number, inCode: boolean, writer: Writer): string {
  const block = BLOCK.has(item.name);
  const space = block ? NO_SPACE : flankingSpace(item, siblings, index);
  if (isBlank(item)) return space.leading + (block ? '\n\n' : '') + space.trailing;
  const rule = item.name.toUpperCase();
  let content = rule === 'PRE' ? '' : writeChildren(item.children, inCode || item.name === 'CODE', writer);
  if (space.leading !== '' || space.trailing !== '') content = content.trim();
  return space.leading + replacement(rule, content, item, siblings, index, elementIndex, writer) + space.trailing;
}

/**
 * Whether inline code needs a space inside its delimiters: `/^`|^ .*?[^ ].* $|`$/.test(code)` in
 * linear time. It starts or ends with a backtick, or it is wrapped in spaces around a character
 * other than a space, with no line terminator between them but that character (`.` matches none).
 */
export function needsCodePadding(code: string): boolean {
  if (code.startsWith('`') || code.endsWith('`')) return true;
  if (code.length < 3 || code[0] !== ' ' || code[code.length - 1] !== ' ') return false;
  let terminators = 0;
  let nonSpace = false;
  for (let i = 1; i < code.length - 1; i += 1) {
    if (code[i] === '\n' || code[i] === '\r' || code[i] === '\u2028' || code[i] === '\u2029') terminators += 1;
    if (code[i] !== ' ') nonSpace = true;
  }
  return terminators === 0 ? nonSpace : terminators === 1;
}

function replacement(rule: string, content: string, item: ElementItem, siblings: readonly Item[], index: number, elementIndex: number, writer: Writer): string {
  const node = item.element;
  switch (rule) {
    case 'IMG': {
      const src = node.getAttribute('src') ?? '';
      if (!writer.linksInline || !/^https?:/i.test(src)) return '';
      const alt = (node.getAttribute('alt') ?? '').replace(/\s+/g, ' ').replace(/[[\]]/g, '\\$&').trim();
      return `![${alt}](${src.replace(/[()\s]/g, (character: string) => encodeURIComponent(character))})`;
    }
    case 'A': {
      const text = content.trim();
      if (text === '') return '';
      const href = node.getAttribute('href') ?? '';
      if (!writer.linksInline || !/^(https?|mailto|ftp):/i.test(href)) return content;
      const title = node.getAttribute('title');
      const quoted = title ? ` "${title.replace(/"/g, '\\"').replace(/\s+/g, ' ')}"` : '';
      return `[${text}](${href.replace(/[()\s]/g, (character: string) => encodeURIComponent(character))}${quoted})`;
    }
    case 'PRE': {
      const code = trimLeadingNewlines(item.raw ?? '').trimEnd();
      if (code.trim() === '') return '';
      let longest = 2;
      for (const run of code.matchAll(/`+/g)) longest = Math.max(longest, run[0].length);
      const fence = '`'.repeat(longest + 1);
      return `\n\n${fence}${codeLanguage(node)}\n${code}\n${fence}\n\n`;
    }
    case 'TABLE':
      return renderTable(content, node);
    case 'TR':
      if (!inTable(node)) return `\n\n${content}\n\n`;
      return `${ROW}${node.parentElement?.localName === 'thead' ? 'h' : 'd'}${CELL_TEXT}${content}${ROW_END}`;
    case 'TH':
    case 'TD':
      if (!inTable(node)) return `\n\n${content}\n\n`;
      return `${CELL}${rule === 'TH' ? 'h' : 'd'},${span(node, 'colspan')},${span(node, 'rowspan')}${CELL_TEXT}${cellText(content)}${CELL_END}`;
    case 'DEL':
    case 'S':
    case 'STRIKE':
      return `~${content}~`;
    case 'P':
      return `\n\n${content}\n\n`;
    case 'BR':
      return '  \n';
    case 'BLOCKQUOTE':
      return `\n\n${trimTrailingNewlines(trimLeadingNewlines(content)).replace(/^/gm, '> ')}\n\n`;
    case 'UL':
    case 'OL': {
      const parent = node.parentNode as (DomElement & { lastElementChild: DomElement | null }) | null;
      if (parent !== null && parent.nodeName === 'LI' && parent.lastElementChild === node) return `\n${content}`;
      return `\n\n${content}\n\n`;
    }
    case 'LI': {
      let prefix = '-   ';
      const parent = node.parentNode as DomElement | null;
      if (parent !== null && parent.nodeName === 'OL') {
        const start = parent.getAttribute('start');
        prefix = `${start ? Number(start) + elementIndex : elementIndex + 1}.  `;
      }
      const paragraph = content.endsWith('\n');
      const text = trimTrailingNewlines(trimLeadingNewlines(content)) + (paragraph ? '\n' : '');
      return prefix + text.replace(/\n/g, `\n${' '.repeat(prefix.length)}`) + (index + 1 < siblings.length ? '\n' : '');
    }
    case 'HR':
      return '\n\n---\n\n';
    case 'EM':
    case 'I':
      return content.trim() === '' ? '' : `_${content}_`;
    case 'STRONG':
    case 'B':
      return content.trim() === '' ? '' : `**${content}**`;
    case 'CODE': {
      // A `<pre>`'s only child is its code block, written by the `<pre>`.
      if ((node.parentNode as DomNode | null)?.nodeName === 'PRE' && siblings.length === 1) return content;
      if (content === '') return '';
      const code = content.replace(/\r?\n|\r/g, ' ');
      const extraSpace = needsCodePadding(code) ? ' ' : '';
      const runs: string[] = code.match(/`+/gm) ?? [];
      let delimiter = '`';
      while (runs.includes(delimiter)) delimiter += '`';
      return delimiter + extraSpace + code + extraSpace + delimiter;
    }
    default:
      if (HEADINGS.has(rule)) {
        const text = replaceLineBreakRuns(content, ' ').trim();
        if (text === '' || /^[\s#*_`~\\-]*$/.test(text)) return '';
        return `\n\n${'#'.repeat(Number(rule.charAt(1)))} ${text}\n\n`;
      }
      return BLOCK.has(item.name) ? `\n\n${content}\n\n` : content;
  }
}

/** `root` (its children) as Markdown. The document is only read. */
export function toMarkdown(root: DomElement, options: { linksInline: boolean }): string {
  let output = writeChildren(readTree(root), false, { linksInline: options.linksInline });
  let start = 0;
  while (start < output.length && (output[start] === '\t' || output[start] === '\r' || output[start] === '\n')) start += 1;
  output = output.slice(start).trimEnd();
  return tidy(output.replace(/\u0002[hd],\d+,\d+\u0003|\u0005[hd]\u0003/g, '').replace(MARKERS, ' '));
}

/** Trailing spaces, runs of spaces between words (left by dropped links and images) and runs of blank lines go; code blocks stay as they are. */
function tidy(markdown: string): string {
  let fence: string | undefined;
  const lines = markdown.split('\n').map((line) => {
    const opening = /^(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (opening !== undefined && line.trim() === fence) fence = undefined;
      return line;
    }
    if (opening !== undefined) {
      fence = opening;
      return line;
    }
    return trimTrailing(line.replace(/(\S) {2,}(?=\S)/g, '$1 '), ' \t');
  });
  return lines.join('\n').replace(/\n{3,}/g, '\n\n').trim();
}
