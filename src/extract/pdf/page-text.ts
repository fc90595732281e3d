/**
 * Turns pdf.js text-content items into a page's plain text. pdf.js already emits the spaces that
 * separate words within a line and flags the item that ends a line (`hasEOL`), so items are joined
 * as given, in the order pdf.js reports them (the content stream's reading order).
 */

/** The part of a pdf.js TextItem we read; marked-content items have no `str` and are skipped. */
export interface TextPiece {
  str: string;
  hasEOL: boolean;
}

export function isTextPiece(item: unknown): item is TextPiece {
  return typeof item === 'object' && item !== null && typeof (item as { str?: unknown }).str === 'string';
}

/**
 * Lines lose their trailing whitespace (justification and glyph-positioning spaces carry no
 * meaning), blank lines at the top and bottom of the page are dropped, and inner blank lines stay
 * because they usually separate paragraphs. Leading indentation is kept.
 */
export function pageTextFromItems(items: Iterable<unknown>): string {
  const lines: string[] = [];
  let current = '';
  for (const item of items) {
    if (!isTextPiece(item)) continue;
    current += item.str;
    if (item.hasEOL) {
      lines.push(current);
      current = '';
    }
  }
  lines.push(current);
  return lines
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/^\n+/, '')
    .trimEnd();
}
