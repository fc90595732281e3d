import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pageTextFromItems } from '../../src/extract/pdf/page-text.ts';

const item = (str: string, hasEOL = false) => ({ str, hasEOL, dir: 'ltr', width: 1, height: 1, transform: [], fontName: 'f' });

test('items without hasEOL join as given; hasEOL ends the line', () => {
  const items = [item('Hello'), item(' '), item('world', true), item('Second'), item(' line')];
  assert.equal(pageTextFromItems(items), 'Hello world\nSecond line');
});

test('an empty item carrying hasEOL still breaks the line (pdf.js emits these)', () => {
  const items = [item('Title'), item('', true), item('Body', true)];
  assert.equal(pageTextFromItems(items), 'Title\nBody');
});

test('trailing whitespace goes, indentation and inner blank lines stay', () => {
  const items = [item('', true), item('   ', true), item('  indented   ', true), item('', true), item('after a gap  \t', true), item('  ', true)];
  assert.equal(pageTextFromItems(items), '  indented\n\nafter a gap');
});

test('marked-content items (no str) are skipped', () => {
  const items = [{ type: 'beginMarkedContent', id: 'x' }, item('kept', true), { type: 'endMarkedContent' }];
  assert.equal(pageTextFromItems(items), 'kept');
});

test('a page without text items is the empty string', () => {
  assert.equal(pageTextFromItems([]), '');
  assert.equal(pageTextFromItems([item('  ', true), item('\t')]), '');
});
