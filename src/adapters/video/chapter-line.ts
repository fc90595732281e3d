/**
 * One line of a video description read as a chapter: a timestamp then the title (`0:00 Intro`,
 * `▶ (1:02:03) - Outro`), or the title then the timestamp (`Intro - 1:02:03`). These were two
 * regular expressions that backtracked in cubic time on lines of whitespace (issue 33):
 *
 *     leading:  /^\s*(?:[-*•▶►]\s*)?[([]?((?:\d{1,2}:)?\d{1,2}:\d{2})[)\]]?\s*(?:[-–—:|]\s*)?(.*?)\s*$/u
 *     trailing: /^\s*(.+?)\s*(?:[-–—:|]\s*)?[([]?((?:\d{1,2}:)?\d{1,2}:\d{2})[)\]]?\s*$/u
 *
 * Here each is a scan in linear time that reads a line as they did: the same stamp and title for
 * every line the leading form matches, and for every line the trailing one matches with a title
 * that is not blank (a blank title is no chapter either way).
 */
import { isWhitespace } from '../../core/text.ts';

/** The leading form up to the end of its stamp: anchored, every quantifier bounded or followed by a character it cannot match. */
const LEADING_STAMP = /^\s*(?:[-*•▶►]\s*)?[([]?((?:\d{1,2}:)?\d{1,2}:\d{2})[)\]]?/u;
const SEPARATORS = '-–—:|';
const isDigit = (char: string | undefined) => char !== undefined && char >= '0' && char <= '9';
const isLineTerminator = (char: string) => char === '\n' || char === '\r' || char === '\u2028' || char === '\u2029';

/** The chapter a line announces, `title` untrimmed as the regular expressions captured it; null when neither form reads it. */
export function chapterLine(line: string): { stamp: string; title: string } | null {
  return leadingChapter(line) ?? trailingChapter(line);
}

/**
 * The leading form. After its stamp come whitespace, a separator and whitespace (each taken whole
 * when there), then the title up to the trailing whitespace. Giving back any of what came before
 * the title only puts it in the title, so the title must hold no line terminator (`.` matches
 * none) in this reading or in any.
 */
function leadingChapter(line: string): { stamp: string; title: string } | null {
  const head = LEADING_STAMP.exec(line);
  if (head === null) return null;
  let at = head[0].length;
  while (at < line.length && isWhitespace(line[at])) at += 1;
  if (at < line.length && SEPARATORS.includes(line[at])) {
    at += 1;
    while (at < line.length && isWhitespace(line[at])) at += 1;
  }
  const title = line.slice(at).trimEnd();
  for (let i = 0; i < title.length; i += 1) if (isLineTerminator(title[i])) return null;
  return { stamp: head[1], title };
}

/**
 * The trailing form: the shortest title after the leading whitespace such that the rest is
 * whitespace, a separator, whitespace, an opening bracket, the stamp, a closing bracket and
 * whitespace (each but the stamp optional). The stamp ends where the line's text does (before a
 * closing bracket there), and can start at a few places only; from each, the title can end
 * anywhere back to the start of the whitespace, separator and whitespace before it.
 */
function trailingChapter(line: string): { stamp: string; title: string } | null {
  let titleStart = 0;
  while (titleStart < line.length && isWhitespace(line[titleStart])) titleStart += 1;
  let stampEnd = line.trimEnd().length;
  if (line[stampEnd - 1] === ')' || line[stampEnd - 1] === ']') stampEnd -= 1;
  // The title holds no line terminator.
  let titleLimit = titleStart;
  while (titleLimit < line.length && !isLineTerminator(line[titleLimit])) titleLimit += 1;
  let best: { titleEnd: number; stampStart: number } | undefined;
  for (const stampStart of stampStarts(line, stampEnd)) {
    let before = stampStart;
    if (line[before - 1] === '(' || line[before - 1] === '[') before -= 1;
    while (before > 0 && isWhitespace(line[before - 1])) before -= 1;
    if (before > 0 && SEPARATORS.includes(line[before - 1])) {
      before -= 1;
      while (before > 0 && isWhitespace(line[before - 1])) before -= 1;
    }
    // A title of at least one character (a blank one, taken from the leading whitespace, is no chapter).
    const titleEnd = Math.max(before, titleStart + 1);
    if (titleEnd > stampStart || titleEnd > titleLimit) continue;
    if (best === undefined || titleEnd < best.titleEnd) best = { titleEnd, stampStart };
  }
  return best === undefined ? null : { stamp: line.slice(best.stampStart, stampEnd), title: line.slice(titleStart, best.titleEnd) };
}

/** Where a stamp (`(?:\d{1,2}:)?\d{1,2}:\d{2}`) ending at `end` can start. */
function stampStarts(line: string, end: number): number[] {
  if (!isDigit(line[end - 1]) || !isDigit(line[end - 2]) || line[end - 3] !== ':' || !isDigit(line[end - 4])) return [];
  const minutes = isDigit(line[end - 5]) ? [end - 4, end - 5] : [end - 4];
  const starts: number[] = [];
  for (const start of minutes) {
    starts.push(start);
    if (line[start - 1] !== ':' || !isDigit(line[start - 2])) continue;
    starts.push(start - 2);
    if (isDigit(line[start - 3])) starts.push(start - 3);
  }
  return starts;
}
