/** `include_selectors` / `exclude_selectors` of /v1/web (src/adapters/web/selectors.ts) and their validation messages. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as cheerio from 'cheerio';
import { applySelectorFilter, isValidSelector, MAX_SELECTOR_LENGTH } from '../../src/adapters/web/selectors.ts';
import { refineWebOptions } from '../../src/endpoints/web-options.ts';

const PAGE = `<html><head><title>Shop</title><meta name="description" content="A shop"></head><body>
<nav><a href="/">Home</a></nav>
<main><article class="item"><h2>One</h2><p class="ad">Buy now</p><p>First</p></article>
<article class="item"><h2>Two</h2><section class="item">Nested</section></article></main>
<footer>Footer</footer></body></html>`;

const bodyText = (html: string) => (cheerio.load(html)('body').html() ?? '').replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim();

describe('isValidSelector', () => {
  test('accepts what css-select runs', () => {
    for (const selector of ['p', 'a[href^="/"]', 'div > p.x:not(.y)', 'li:nth-child(2n+1)', 'h1, h2', 'p:contains(Price)', 'input[type=checkbox]:checked']) {
      assert.equal(isValidSelector(selector), true, selector);
    }
  });

  test('refuses broken, unsupported, empty and overlong selectors', () => {
    for (const selector of ['a[href', 'div >', 'p:unknown', '::before', '', '   ', 'a'.repeat(MAX_SELECTOR_LENGTH + 1), 5, null, '((']) {
      assert.equal(isValidSelector(selector), false, String(selector));
    }
  });
});

describe('applySelectorFilter', () => {
  test('include keeps only the outermost matches, in page order, and the head', () => {
    const out = applySelectorFilter(PAGE, { include: ['.item'] });
    const $ = cheerio.load(out);
    assert.equal($('title').text(), 'Shop');
    assert.equal($('meta[name=description]').attr('content'), 'A shop');
    assert.equal($('body > article.item').length, 2);
    assert.equal($('section.item').length, 1, 'the nested match is kept once, inside its parent');
    assert.equal(bodyText(out), 'One Buy now First Two Nested');
  });

  test('exclude removes the matches from the body, after include', () => {
    assert.equal(bodyText(applySelectorFilter(PAGE, { exclude: ['nav', 'footer', '.ad'] })), 'One First Two Nested');
    assert.equal(bodyText(applySelectorFilter(PAGE, { include: ['main'], exclude: ['.ad', 'h2'] })), 'First Nested');
    // The head is never trimmed: metadata survives an exclude that matches it.
    assert.equal(cheerio.load(applySelectorFilter(PAGE, { exclude: ['title'] }))('title').text(), 'Shop');
  });

  test('nothing included leaves an empty body; no selectors leave the page as it is', () => {
    assert.equal(bodyText(applySelectorFilter(PAGE, { include: ['.missing'] })), '');
    assert.equal(applySelectorFilter(PAGE, {}), PAGE);
    assert.equal(applySelectorFilter(PAGE, { include: [], exclude: [] }), PAGE);
  });
});

describe('validation messages', () => {
  test('each bad selector is named by its index', () => {
    const errors: Record<string, string[]> = {};
    refineWebOptions({ include_selectors: ['main', 'div >'], exclude_selectors: [7, 'nav'] }, errors);
    assert.deepEqual(errors, {
      'include_selectors.1': ['The include_selectors.1 must be a valid CSS selector: "div >".'],
      'exclude_selectors.0': ['The exclude_selectors.0 must be a valid CSS selector.'],
    });
  });
});
