/**
 * How the command line shows a result to a person: lists as aligned tables (no index column, no
 * quotes, long cells cut), records as aligned `name  value` lines with their lists as tables
 * below. `--json` prints the result itself, as one line, for scripts.
 */

/** Longest cell before it is cut with "…" (a URL, a parameters object). */
export const MAX_CELL = 40;
const GAP = '  ';

type Row = Record<string, unknown>;

const isRow = (value: unknown): value is Row => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A value as one line: text as is, nothing as empty, lists and objects as compact JSON. */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  // A run of white space holding a line break becomes one space (`/\s*\n\s*/` is quadratic on long runs).
  if (typeof value === 'string') return value.replace(/\s+/g, (run) => (run.includes('\n') ? ' ' : run));
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value);
}

function cut(text: string, width: number): string {
  const characters = [...text];
  return characters.length <= width ? text : characters.slice(0, width - 1).join('') + '…';
}

const widthOf = (text: string) => [...text].length;
const pad = (text: string, width: number) => text + ' '.repeat(Math.max(0, width - widthOf(text)));

/** Narrowest a column is cut to when the table must fit a terminal. */
const MIN_COLUMN = 10;

/**
 * Rows as an aligned table: a header of the keys, one line per row. With `width` (a terminal's),
 * the widest columns are cut further until a line fits, none below MIN_COLUMN characters.
 */
export function table(rows: readonly Row[], maxCell = MAX_CELL, width?: number): string {
  if (rows.length === 0) return '(none)';
  // Columns in first-seen order; one that is empty in every row says nothing and is left out.
  const columns: string[] = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!columns.includes(key) && rows.some((each) => cellText(each[key]) !== '')) columns.push(key);
  const full = rows.map((row) => columns.map((column) => cellText(row[column])));
  const limits = columns.map(() => maxCell);
  const measure = () => columns.map((column, index) => Math.min(limits[index]!, Math.max(widthOf(column), ...full.map((line) => widthOf(line[index]!)))));
  let widths = measure();
  const total = () => widths.reduce((sum, each) => sum + each, 0) + GAP.length * (columns.length - 1);
  while (width !== undefined && total() > width) {
    const widest = widths.indexOf(Math.max(...widths));
    if (widths[widest]! <= MIN_COLUMN) break;
    limits[widest] = widths[widest]! - 1;
    widths = measure();
  }
  const cells = full.map((line) => line.map((text, index) => cut(text, widths[index]!)));
  const header = columns.map((column, index) => cut(column, widths[index]!));
  const line = (values: string[]) => values.map((value, index) => (index === values.length - 1 ? value : pad(value, widths[index]!))).join(GAP).trimEnd();
  return [line(header), ...cells.map(line)].join('\n');
}

/** A record: its plain fields as aligned lines, then each list of records as a titled table. */
function record(value: Row, maxCell: number, width?: number): string {
  const plain: Array<[string, string]> = [];
  const lists: string[] = [];
  const flatten = (prefix: string, object: Row) => {
    for (const [key, item] of Object.entries(object)) {
      const name = prefix ? `${prefix}.${key}` : key;
      if (Array.isArray(item) && item.length > 0 && item.every(isRow)) lists.push(`${name}:\n${indent(table(item, maxCell, width === undefined ? undefined : width - 2))}`);
      else if (isRow(item) && Object.keys(item).length > 0) flatten(name, item);
      else plain.push([name, cut(cellText(item), maxCell * 2)]);
    }
  };
  flatten('', value);
  const names = Math.max(0, ...plain.map(([name]) => widthOf(name)));
  const lines = plain.map(([name, text]) => `${pad(name, names)}${GAP}${text}`.trimEnd());
  return [lines.join('\n'), ...lists].filter((part) => part !== '').join('\n\n');
}

const indent = (text: string) =>
  text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');

/** The result for a person; `width`: the terminal's, which tables are cut to fit. */
export function renderHuman(result: unknown, options: { maxCell?: number; width?: number } = {}): string {
  const maxCell = options.maxCell ?? MAX_CELL;
  if (Array.isArray(result)) {
    if (result.every(isRow)) return table(result, maxCell, options.width);
    return result.map((item) => cellText(item)).join('\n');
  }
  if (isRow(result)) return record(result, maxCell, options.width);
  return cellText(result);
}

/** The result as printed: one JSON line with `--json`, else for a person (fitted to `width`, a terminal's). */
export function render(result: unknown, json: boolean, width?: number): string {
  return json ? JSON.stringify(result) : renderHuman(result, { width });
}
