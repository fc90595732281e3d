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
  const { codes, generated } = text;
  for (let i = from; i >= 0 && i < codes.length; i += step) {
    if (generated[i]) continue;
    return codes[i] > SPACE ? i : -1; // a real space or line break: nothing to correct
  }
  return -1;
}

/** Code points turned into a string per slice of this many (an argument list has a size limit). */
const DECODE_SLICE = 4096;

/** The page's text before normalisation: PDFium's characters with the two corrections above. */
export function layoutText(text: PageText): string {
  const { codes, generated } = text;
  const isInferredGap = (i: number) => generated[i] === 1 && (codes[i] === SPACE || isBreak(codes[i]));
  const parts: string[] = [];
  let pending: number[] = []; // code points not yet turned into a string
  const flush = () => {
    if (pending.length) parts.push(String.fromCodePoint(...pending));
    pending = [];
  };
  for (let i = 0; i < codes.length; i++) {
    if (isInferredGap(i)) {
      // One decision per run of generated spaces and breaks (PDFium writes "\r\n" as two).
      let end = i;
      let wasBreak = isBreak(codes[i]);
      while (end + 1 < codes.length && isInferredGap(end + 1)) {
        end++;
        if (isBreak(codes[end])) wasBreak = true;
      }
      const before = neighbour(text, i - 1, -1);
      const after = neighbour(text, end + 1, 1);
      const joiner = before >= 0 && after >= 0 ? joinerBetween(text.geometry(before), text.geometry(after)) : null;
      flush();
      parts.push(joiner ?? (wasBreak ? '\n' : ' '));
      i = end;
      continue;
    }
    const code = codes[i];
    // 0 is PDFium's "no character"; beyond U+10FFFF is not a code point at all.
    if (code > 0 && code <= 0x10ffff) {
      pending.push(code);
      if (pending.length === DECODE_SLICE) flush();
    }
  }
  flush();
  return parts.join('');
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
