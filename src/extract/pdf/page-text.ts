/**
 * Turns PDFium's character list for one page into the page's plain text. No PDFium here: the
 * characters and their boxes come in as plain data, so the rules are cheap to test.
 *
 * PDFium orders the characters (content-stream order, right-to-left runs put in logical order)
 * and inserts "generated" spaces and line breaks where it sees gaps and line changes. Two of its
 * guesses are corrected with the characters' boxes, for horizontal text only:
 * - a superscript or subscript (R², xᵢ) shifts the baseline, and PDFium starts a new line there;
 *   when the next character continues on the same line, the break becomes a space or nothing;
 * - a thin gap (TeX's thin space after a comma in formulas, between the dots of an ellipsis) gets
 *   a generated space; a gap narrower than SPACE_GAP × the line height is no word break.
 */
import type { CharGeometry, PageText } from './engine.ts';

/** Horizontal gaps below this share of the characters' line height do not separate words. */
export const SPACE_GAP = 0.08;

const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;
const SPACE = 0x20;

function isBreak(code: number): boolean {
  return code === LINE_FEED || code === CARRIAGE_RETURN;
}

/** What stands between two characters PDFium put on different lines or apart by a space. */
function joinerBetween(before: CharGeometry, after: CharGeometry): string | null {
  // The loose boxes span the fonts' ascent to descent, about 1.2 em: the line height stands for the
  // font size (PDFium's own font size ignores the text matrix, so a scaled font reads wrong).
  const size = Math.max(before.top - before.bottom, after.top - after.bottom, 1e-3);
  const gap = after.left - before.right;
  const overlap = Math.min(before.top, after.top) - Math.max(before.bottom, after.bottom);
  const shorter = Math.min(before.top - before.bottom, after.top - after.bottom);
  // Same horizontal line: the boxes share at least a third of the shorter one's height, and the
  // text moves on to the right without a jump (a new line starts back at the left margin).
  const sameLine = shorter > 0 && overlap > shorter / 3 && gap > -0.25 * size && gap < 1.5 * size;
  if (!sameLine) return null; // keep PDFium's choice
  return gap >= SPACE_GAP * size ? ' ' : '';
}

/** The nearest character the document itself drew, if it is a visible one; otherwise -1. */
function neighbour(text: PageText, from: number, step: 1 | -1): number {
  for (let i = from; i >= 0 && i < text.chars.length; i += step) {
    const { code, generated } = text.chars[i];
    if (generated) continue;
    return code > SPACE ? i : -1; // a real space or line break: nothing to correct
  }
  return -1;
}

/** The page's text before normalisation: PDFium's characters with the two corrections above. */
export function layoutText(text: PageText): string {
  const { chars } = text;
  let out = '';
  for (let i = 0; i < chars.length; i++) {
    const { code, generated } = chars[i];
    if (generated && (code === SPACE || isBreak(code))) {
      // One decision per run of generated spaces and breaks (PDFium writes "\r\n" as two).
      let end = i;
      while (end + 1 < chars.length && chars[end + 1].generated && (chars[end + 1].code === SPACE || isBreak(chars[end + 1].code))) end++;
      const wasBreak = chars.slice(i, end + 1).some((c) => isBreak(c.code));
      const before = neighbour(text, i - 1, -1);
      const after = neighbour(text, end + 1, 1);
      const joiner = before >= 0 && after >= 0 ? joinerBetween(text.geometry(before), text.geometry(after)) : null;
      out += joiner ?? (wasBreak ? '\n' : ' ');
      i = end;
      continue;
    }
    if (code > 0) out += String.fromCodePoint(code);
  }
  return out;
}

/** PDFium's mark for a hyphen that ends a line (its text output writes U+FFFE there). */
const LINE_END_HYPHEN = '\uFFFE';

/**
 * Cleans a page's text the way `pdftotext` reads:
 * - line breaks are "\n";
 * - a word hyphenated at the end of a line is joined with its end on the next line, hyphen
 *   removed (PDFium's U+FFFE mark, or a hyphen or soft hyphen right before a line break);
 * - other soft hyphens are invisible and removed;
 * - tabs become spaces; NUL, other control characters and non-characters are removed;
 * - trailing whitespace of every line, and blank lines at the top and bottom, are dropped.
 */
export function normalizePageText(raw: string): string {
  return raw
    .replace(/\r\n?/g, '\n')
    .replaceAll(LINE_END_HYPHEN, '')
    .replace(/(?<=\p{L})[-\u00AD\u2010]\n(?=\p{Ll})/gu, '')
    .replaceAll('\u00AD', '')
    .replaceAll('\t', ' ')
    .replace(/[\u0000-\u0009\u000B-\u001F\u007F-\u009F\uFFFE\uFFFF]/g, '')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/^\n+/, '')
    .trimEnd();
}

export function pageText(text: PageText): string {
  return normalizePageText(layoutText(text));
}
