/**
 * String scans that replace regular expressions which backtrack polynomially on hostile input
 * (issue 33: `/\/+$/` took 41 s on a URL of 240,000 slashes). Each runs in time linear in its
 * input and gives what the regular expression named in its comment gives, on every string.
 */

/** Whether `char` (one UTF-16 unit) is in `\s`: the set `String.prototype.trim` strips. */
export const isWhitespace = (char: string): boolean => char !== '' && char.trim() === '';

/** `text` without the trailing run of the units `trims` accepts: `text.replace(/[…]+$/, '')`. */
export function trimEndWhile(text: string, trims: (char: string) => boolean): string {
  let end = text.length;
  while (end > 0 && trims(text[end - 1])) end -= 1;
  return end === text.length ? text : text.slice(0, end);
}

/** `text` without the trailing run of `characters` (UTF-16 units): `trimTrailing(path, '/')` is `path.replace(/\/+$/, '')`. */
export function trimTrailing(text: string, characters: string): string {
  return trimEndWhile(text, (char) => characters.includes(char));
}

/**
 * `text` with every tag replaced: `text.replace(/<[^>]*>/g, replacement)`, or with `nonEmpty`
 * `/<[^>]+>/g` (where `<>` is not a tag). A `<` with no `>` after it is left, as is all that follows.
 */
export function replaceTags(text: string, replacement: string, options: { nonEmpty?: boolean } = {}): string {
  let output = '';
  let copied = 0;
  let at = 0;
  for (;;) {
    const open = text.indexOf('<', at);
    if (open === -1) break;
    const close = text.indexOf('>', open + 1);
    // No `>` after this `<`: none after any later one either.
    if (close === -1) break;
    if (options.nonEmpty && close === open + 1) {
      at = close;
      continue;
    }
    output += text.slice(copied, open) + replacement;
    copied = at = close + 1;
  }
  return copied === 0 ? text : output + text.slice(copied);
}

/**
 * The elements of `text` as `/<name\b([^>]*)>([\s\S]*?)<\/name>/g` finds them, each as that
 * regular expression's match: `[whole, attributes, content]`. `open` finds `<name\b` and `close`
 * finds `</name>` (both global, with the `i` flag for a case-insensitive name).
 */
export function* elements(text: string, open: RegExp, close: RegExp): Generator<[whole: string, attributes: string, content: string]> {
  let at = 0;
  for (;;) {
    open.lastIndex = at;
    const start = open.exec(text);
    if (start === null) return;
    const tagEnd = text.indexOf('>', start.index + start[0].length);
    // An open tag with no `>`, or no end tag after it: the same for every later one.
    if (tagEnd === -1) return;
    close.lastIndex = tagEnd + 1;
    const end = close.exec(text);
    if (end === null) return;
    at = end.index + end[0].length;
    yield [text.slice(start.index, at), text.slice(start.index + start[0].length, tagEnd), text.slice(tagEnd + 1, end.index)];
  }
}

/**
 * The spans of `text` that `/header[\s\S]*?close/g` matches, for a `header` (global) that matches in
 * at most one way at a position and a `close` string: each as the header's match and the content
 * up to the first `close` after it.
 */
export function* lazySpans(text: string, header: RegExp, close: string): Generator<{ header: RegExpExecArray; content: string; index: number; end: number }> {
  let at = 0;
  for (;;) {
    header.lastIndex = at;
    const start = header.exec(text);
    if (start === null) return;
    const contentStart = start.index + start[0].length;
    const closeAt = text.indexOf(close, contentStart);
    // No `close` after this header: none after any later one either.
    if (closeAt === -1) return;
    at = closeAt + close.length;
    yield { header: start, content: text.slice(contentStart, closeAt), index: start.index, end: at };
  }
}

/** `text` with each span `lazySpans` finds replaced: `text.replace(/header[\s\S]*?close/g, replacement)`. */
export function replaceSpans(text: string, header: RegExp, close: string, replacement: string): string {
  let output = '';
  let copied = 0;
  for (const span of lazySpans(text, header, close)) {
    output += text.slice(copied, span.index) + replacement;
    copied = span.end;
  }
  return copied === 0 ? text : output + text.slice(copied);
}
