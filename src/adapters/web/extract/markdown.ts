/**
 * Markdown that LLM pipelines can trust, written by turndown with rules of ours:
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
 */
import TurndownService from 'turndown';
import { strikethrough } from 'turndown-plugin-gfm';
import type { DomElement } from './dom.ts';

// Markers that carry table cells and rows from the inner rules up to the table rule. Control
// characters never kept in the output.
const CELL = '\u0002';
const CELL_TEXT = '\u0003';
const CELL_END = '\u0004';
const ROW = '\u0005';
const ROW_END = '\u0006';
const MARKERS = /[\u0002-\u0006]/g;

type TurndownNode = TurndownService.Node & DomElement;

function cellText(content: string): string {
  return content.replace(MARKERS, ' ').replace(/\s*\n+\s*/g, ' ').replace(/\|/g, '\\|').trim();
}

function span(node: DomElement, attribute: string): number {
  const value = Number.parseInt(node.getAttribute(attribute) ?? '1', 10);
  return Number.isFinite(value) && value > 1 ? Math.min(value, 50) : 1;
}

function insideCell(node: DomElement): boolean {
  for (let at = node.parentElement; at !== null; at = at.parentElement) {
    if (at.localName === 'td' || at.localName === 'th') return true;
  }
  return false;
}

interface Cell {
  header: boolean;
  colspan: number;
  rowspan: number;
  text: string;
}

function parseRows(content: string): Array<{ head: boolean; cells: Cell[] }> {
  const rows: Array<{ head: boolean; cells: Cell[] }> = [];
  for (const row of content.matchAll(/\u0005([hd])\u0003([\s\S]*?)\u0006/g)) {
    const cells: Cell[] = [];
    for (const cell of row[2].matchAll(/\u0002([hd]),(\d+),(\d+)\u0003([\s\S]*?)\u0004/g)) {
      cells.push({ header: cell[1] === 'h', colspan: Number(cell[2]), rowspan: Number(cell[3]), text: cell[4] });
    }
    rows.push({ head: row[1] === 'h', cells });
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

function renderTable(content: string, node: DomElement): string {
  const rows = parseRows(content);
  const outside = content.replace(/\u0005[hd]\u0003[\s\S]*?\u0006/g, ' ').replace(MARKERS, ' ').trim();
  const caption = outside === '' ? '' : `${outside}\n\n`;
  if (insideCell(node)) {
    const flat = rows.map((row) => row.cells.map((cell) => cell.text).filter((text) => text !== '').join(', ')).filter((text) => text !== '');
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
    return `\n\n${caption}${lines.flat().filter((text) => text !== '').join('\n\n')}\n\n`;
  }
  const firstRow = rows.find((row) => row.cells.some((cell) => cell.text !== ''));
  const hasHeader = firstRow !== undefined && (firstRow.head || firstRow.cells.every((cell) => cell.header));
  const header = hasHeader ? lines[0] : Array.from({ length: columns }, () => '');
  const body = hasHeader ? lines.slice(1) : lines;
  const format = (line: string[]) => `| ${line.join(' | ')} |`.replace(/ {2,}\|/g, ' |');
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

function createService(linksInline: boolean): TurndownService {
  const service = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_', hr: '---',
    // Nothing is kept as HTML; an element turndown would keep is written as its content.
    keepReplacement: (content) => content,
  });
  service.use(strikethrough);
  service.addRule('cell', {
    filter: ['th', 'td'],
    replacement: (content, node) => {
      const element = node as TurndownNode;
      return `${CELL}${element.nodeName === 'TH' ? 'h' : 'd'},${span(element, 'colspan')},${span(element, 'rowspan')}${CELL_TEXT}${cellText(content)}${CELL_END}`;
    },
  });
  service.addRule('row', {
    filter: 'tr',
    replacement: (content, node) => `${ROW}${(node as TurndownNode).parentElement?.localName === 'thead' ? 'h' : 'd'}${CELL_TEXT}${content}${ROW_END}`,
  });
  service.addRule('table', { filter: 'table', replacement: (content, node) => renderTable(content, node as TurndownNode) });
  service.addRule('heading', {
    filter: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'],
    replacement: (content, node) => {
      const text = content.replace(/\s*\n+\s*/g, ' ').trim();
      if (text === '' || /^[\s#*_`~\\-]*$/.test(text)) return '';
      return `\n\n${'#'.repeat(Number(node.nodeName.charAt(1)))} ${text}\n\n`;
    },
  });
  service.addRule('codeBlock', {
    filter: 'pre',
    replacement: (_content, node) => {
      const code = ((node as TurndownNode).textContent ?? '').replace(/^\n+|\s+$/g, '');
      if (code.trim() === '') return '';
      const longest = Math.max(2, ...[...code.matchAll(/`+/g)].map((run) => run[0].length));
      const fence = '`'.repeat(longest + 1);
      return `\n\n${fence}${codeLanguage(node as TurndownNode)}\n${code}\n${fence}\n\n`;
    },
  });
  service.addRule('link', {
    filter: (node) => node.nodeName === 'A',
    replacement: (content, node) => {
      const text = content.trim();
      if (text === '') return '';
      const href = (node as TurndownNode).getAttribute('href') ?? '';
      if (!linksInline || !/^(https?|mailto|ftp):/i.test(href)) return content;
      const title = (node as TurndownNode).getAttribute('title');
      const quoted = title ? ` "${title.replace(/"/g, '\\"').replace(/\s+/g, ' ')}"` : '';
      return `[${text}](${href.replace(/[()\s]/g, (character: string) => encodeURIComponent(character))}${quoted})`;
    },
  });
  service.addRule('image', {
    filter: 'img',
    replacement: (_content, node) => {
      const src = (node as TurndownNode).getAttribute('src') ?? '';
      if (!linksInline || !/^https?:/i.test(src)) return '';
      const alt = ((node as TurndownNode).getAttribute('alt') ?? '').replace(/\s+/g, ' ').replace(/[[\]]/g, '\\$&').trim();
      return `![${alt}](${src.replace(/[()\s]/g, (character: string) => encodeURIComponent(character))})`;
    },
  });
  return service;
}

const services = { inline: createService(true), plain: createService(false) };

/**
 * `root` as Markdown. turndown edits the whitespace of what it converts, so it copies its input
 * first; the content here is thrown away afterwards, so it works on `root` itself (copying a
 * large article costs as much as converting it).
 */
export function toMarkdown(root: DomElement, options: { linksInline: boolean }): string {
  const service = options.linksInline ? services.inline : services.plain;
  const input = Object.assign(root, { cloneNode: () => root });
  const raw = service
    .turndown(input as unknown as TurndownService.Node)
    .replace(/\u0002[hd],\d+,\d+\u0003/g, '')
    .replace(MARKERS, ' ');
  return tidy(raw);
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
    return line.replace(/(\S) {2,}(?=\S)/g, '$1 ').replace(/[ \t]+$/, '');
  });
  return lines.join('\n').replace(/\n{3,}/g, '\n\n').trim();
}
