/**
 * /v1/web's conversion functions (src/adapters/web/formats.ts) on generated documents: random mixes
 * of text, comments, doctypes, stray and unclosed tags, entities, NULs and lone surrogates, decoded
 * from bytes under odd charsets as a fetched page is. Whatever the page, Markdown and text come
 * back as strings, never an exception (a page without any element used to throw, answered 500:
 * issue 19 item 2). Seeded: FORMATS_FUZZ_SEED to try another.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { convertPage, type OutputFormat } from '../../src/adapters/web/formats.ts';
import { decodePage } from '../../src/adapters/web/charset.ts';

const SEED = Number(process.env.FORMATS_FUZZ_SEED ?? 1919);
const PAGE_URL = 'https://site.example/dir/page';

const TAGS = ['html', 'head', 'body', 'title', 'p', 'div', 'a', 'img', 'br', 'pre', 'table', 'tr', 'td', 'ul', 'li', 'script', 'style', 'nav', 'template', 'svg', 'article', 'h1', 'base', 'math', 'frameset', 'noscript', 'x-custom'];

const fragment = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('hello world', 'Not Found', ' ', '\n\t', '\u0000', '\ud800', '\udfff', '\ufeff', '\u2028', '\ufffd'),
  fc.constantFrom('<!doctype html>', '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0//EN">', '<!doctype>', '<?xml version="1.0" encoding="utf-16"?>', '<![CDATA[x]]>'),
  fc.string({ maxLength: 20 }).map((text) => `<!--${text}-->`),
  fc.constantFrom('<!--', '-->', '<!-- unclosed', '<', '>', '</', '<>', '</>', '<<p>>', '&', '&amp;', '&lt;p&gt;', '&#0;', '&#xD800;', '&#1114112;', '&nbsp;', '&bogus;', '&#x1F600;'),
  fc.tuple(fc.constantFrom(...TAGS), fc.boolean(), fc.string({ maxLength: 12 })).map(([tag, close, attribute]) => (close ? `</${tag}>` : `<${tag} href="${attribute}" src='${attribute}'>`)),
  fc.constantFrom('<meta charset="shift_jis">', '<meta http-equiv="Content-Type" content="text/html; charset=utf-16">', '<base href="javascript:alert(1)">', '<a href="//[::1">x</a>', '<a href="http://%zz">y</a>'),
);

const documentText = fc.array(fragment, { maxLength: 30 }).map((parts) => parts.join(''));

/** Labels a page may come with: real ones, UTF-16 (which turns ASCII bytes into other characters), and nonsense. */
const charset = fc.constantFrom(undefined, 'utf-8', 'utf-16', 'utf-16be', 'utf-16le', 'shift_jis', 'windows-1252', 'iso-2022-jp', 'gbk', 'x-user-defined', 'replacement', 'nonsense', '');

/** The page as the scraper hands it over: bytes decoded under the answer's charset (or sniffed). */
const fetchedPage = fc.oneof(
  documentText,
  fc.tuple(documentText, charset, fc.boolean()).map(([text, label, withBom]) => {
    const bytes = Buffer.concat([withBom ? Buffer.from([0xff, 0xfe]) : Buffer.alloc(0), Buffer.from(text, 'utf8')]);
    return decodePage(bytes, label === undefined ? 'text/html' : `text/html; charset=${label}`).text;
  }),
  fc.tuple(fc.uint8Array({ maxLength: 200 }), charset).map(([bytes, label]) => decodePage(bytes, label === undefined ? undefined : `text/html; charset=${label}`).text),
);

describe('conversion of generated documents', () => {
  test(`never throws, and gives a string for markdown and text (seed ${SEED})`, () => {
    fc.assert(
      fc.property(fetchedPage, fc.constantFrom<OutputFormat>('markdown', 'text', 'raw'), fc.boolean(), (html, format, links) => {
        const page = convertPage(html, PAGE_URL, { format, links });
        if (format === 'raw') assert.equal(page.content, undefined);
        else assert.equal(typeof page.content, 'string');
        if (links) assert.ok(Array.isArray(page.links) && page.links.every((link) => /^https?:\/\//.test(link)));
      }),
      { seed: SEED, numRuns: 3000 },
    );
  });

  test('a page without any element is its text, or nothing', () => {
    const cases: Array<[string, string]> = [
      ['', ''],
      ['hello world', 'hello world'],
      ['<!doctype html>', ''],
      ['<!-- a comment alone -->', ''],
      ['Not Found', 'Not Found'],
      ['<!DOCTYPE html>\n<!-- c -->\nNot &amp; Found', 'Not & Found'],
      [decodePage(Buffer.from('hello'), 'text/html; charset=utf-16').text, decodePage(Buffer.from('hello'), 'text/html; charset=utf-16').text],
    ];
    for (const [html, text] of cases) {
      const { metadata, ...page } = convertPage(html, PAGE_URL, { format: 'text', links: true });
      assert.deepEqual(page, { links: [], content: text }, JSON.stringify(html));
      assert.equal(metadata?.title, null);
      assert.equal(convertPage(html, PAGE_URL, { format: 'markdown', links: false }).content, text, JSON.stringify(html));
    }
  });

  test('a page without <html> keeps its text and title, as a browser shows them', () => {
    assert.equal(convertPage('<p>first</p><p>second <a href="/x">link</a></p>', PAGE_URL, { format: 'text', links: false }).content, 'first\nsecond link');
    assert.equal(convertPage('<!doctype html><title>Title</title><p>Body text</p>', PAGE_URL, { format: 'markdown', links: false }).content, '# Title\n\nBody text');
  });

  test('a table without rows, and a frameset, are no longer fatal to Markdown (both found by the generator)', () => {
    assert.equal(convertPage('<p>a</p><table></table><table>stray</table><p>b</p>', PAGE_URL, { format: 'markdown', links: false }).content, 'a\n\nstray\n\nb');
    assert.equal(convertPage('<title>T</title><frameset><frame src="a.html"></frameset>', PAGE_URL, { format: 'markdown', links: false }).content, '# T');
  });
});
