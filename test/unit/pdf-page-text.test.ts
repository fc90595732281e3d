import { test } from 'node:test';
import assert from 'node:assert/strict';
import { layoutText, normalizePageText, pageText } from '../../src/extract/pdf/page-text.ts';
import type { CharGeometry, PageText } from '../../src/extract/pdf/engine.ts';

/**
 * A page as PDFium would report it: `text` with "·" for a generated space and "¶" for a generated
 * line break ("\r\n"), each character placed at the box given by `boxes` (or 6 units wide on one
 * 10-unit line, one after the other).
 */
function page(text: string, boxes: Record<number, Partial<CharGeometry>> = {}): PageText {
  const codes: number[] = [];
  const generated: number[] = [];
  const add = (code: number, inferred: boolean) => {
    codes.push(code);
    generated.push(inferred ? 1 : 0);
  };
  for (const c of text) {
    if (c === '·') add(0x20, true);
    else if (c === '¶') (add(0x0d, true), add(0x0a, true));
    else add(c.codePointAt(0)!, false);
  }
  return {
    codes,
    generated,
    geometry: (index) => ({ left: index * 6, right: index * 6 + 6, bottom: 0, top: 10, ...boxes[index] }),
  };
}

test('real characters come out as given; generated breaks become line breaks', () => {
  // "b" on a new line: its box starts back at the left margin.
  const text = page('Hello world¶Next', { 13: { left: 0, right: 6, bottom: -14, top: -4 } });
  assert.equal(pageText(text), 'Hello world\nNext');
});

test('a superscript that PDFium put on its own line joins its base (R², no space)', () => {
  // R at index 0; PDFium broke the line (indices 1-2); "2" is raised and smaller, right after R.
  const text = page('R¶2 und', { 3: { left: 6, right: 10, bottom: 4, top: 11 } });
  assert.equal(layoutText(text), 'R2 und');
});

test('a generated space over a thin gap is dropped, over a word gap kept', () => {
  // "d(P,·Q)": the gap after the comma is 0.05 line height; "a·b": 0.5.
  const thin = page('d(P,·Q)', { 5: { left: 24.5, right: 30.5 } });
  assert.equal(layoutText(thin), 'd(P,Q)');
  const wide = page('a·b', { 2: { left: 11, right: 17 } });
  assert.equal(layoutText(wide), 'a b');
});

test('text that is not on one horizontal line keeps PDFium\'s choice', () => {
  // Vertical writing: the next character is below, not to the right.
  const text = page('日¶本', { 3: { left: 0, right: 10, bottom: -12, top: -2 } });
  assert.equal(layoutText(text), '日\n本');
});

test('normalisation: line breaks, end-of-line hyphenation, soft hyphens, control characters', () => {
  assert.equal(normalizePageText('one\r\ntwo\rthree'), 'one\ntwo\nthree');
  assert.equal(normalizePageText('Übungsauf\uFFFEgaben'), 'Übungsaufgaben'); // PDFium's line-end hyphen
  assert.equal(normalizePageText('Wider-\nspruch und Schwarz-\nWeiß'), 'Widerspruch und Schwarz-\nWeiß');
  assert.equal(normalizePageText('hyphen\u00AD\nation, in\u00ADvisible'), 'hyphenation, invisible');
  assert.equal(normalizePageText('a\u0000b\u0004c\td\u007Fe\u0085f\uFFFF'), 'abc def');
  assert.equal(normalizePageText('lone \uD800 surrogate, pair 𠮷 kept'), 'lone  surrogate, pair 𠮷 kept');
});

test('trailing whitespace goes, indentation and inner blank lines stay', () => {
  assert.equal(normalizePageText('\n   \n  indented   \n\nafter a gap  \t\n  '), '  indented\n\nafter a gap');
});

test('a page without characters is the empty string', () => {
  assert.equal(pageText(page('')), '');
  assert.equal(pageText(page('··¶')), '');
});
