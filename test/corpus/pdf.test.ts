/**
 * Corpus tier: real PDFs from pdf.js, pypdf, OCRmyPDF and py-pdf/sample-files (see the corpus's
 * SOURCES.md), read in place from CORPUS_DIR/pdf through the worker pool.
 */
import { after, before, describe, test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createPdfExtractor } from '../../src/extract/pdf/index.ts';
import type { PdfExtractor, PdfOutcome, PdfResult } from '../../src/extract/pdf/index.ts';
import { pdfDateToUtc } from '../../src/extract/pdf/result.ts';
import { corpusDir } from '../support/corpus.ts';

const corpus = corpusDir('pdf');

/** Bag-of-words F1 over whitespace tokens, after NFKC (ground truths keep ligatures such as ﬁ). */
function wordF1(extracted: string, truth: string): number {
  const tokens = (text: string) => text.normalize('NFKC').split(/\s+/u).filter(Boolean);
  const remaining = new Map<string, number>();
  const truthTokens = tokens(truth);
  for (const token of truthTokens) remaining.set(token, (remaining.get(token) ?? 0) + 1);
  const extractedTokens = tokens(extracted);
  let matched = 0;
  for (const token of extractedTokens) {
    const left = remaining.get(token) ?? 0;
    if (left > 0) {
      matched++;
      remaining.set(token, left - 1);
    }
  }
  if (matched === 0) return 0;
  const precision = matched / extractedTokens.length;
  const recall = matched / truthTokens.length;
  return (2 * precision * recall) / (precision + recall);
}

function okResult(outcome: PdfOutcome): PdfResult {
  if (outcome.kind !== 'ok') assert.fail(`expected ok, got ${JSON.stringify(outcome)}`);
  return outcome.result;
}

const allText = (result: PdfResult) => result.pages.map((page) => page.text).join('\n');

describe('PDF corpus', { skip: corpus.skip || false }, () => {
  let extractor: PdfExtractor;
  const file = (name: string) => readFile(path.join(corpus.dir, name));
  const extract = async (name: string) => extractor.extract(await file(name));

  before(() => {
    // A high page limit so the 117-page book can be compared with its ground truth.
    extractor = createPdfExtractor({ threads: 2, maxPages: 200, timeoutMs: 30_000 });
  });
  after(() => extractor.close());

  test('crazyones: word F1 against ground truth', async (t: TestContext) => {
    const result = okResult(await extract('pypdf-crazyones.pdf'));
    const f1 = wordF1(allText(result), await readFile(path.join(corpus.dir, 'pypdf-crazyones.txt'), 'utf8'));
    t.diagnostic(`crazyones word F1 = ${f1.toFixed(4)}`);
    assert.equal(f1, 1, `F1 ${f1}`);
    assert.equal(result.metadata.page_count, 1);
  });

  test('GeoTopo (117 pages): word F1 against ground truth, creation date against files.json', async (t: TestContext) => {
    const outcome = await extract('sample-files-GeoTopo-komprimiert.pdf');
    const result = okResult(outcome);
    assert.equal(result.metadata.page_count, 117);
    assert.equal(result.pages.length, 117);
    const f1 = wordF1(allText(result), await readFile(path.join(corpus.dir, 'benchmarks-GeoTopo-book.txt'), 'utf8'));
    t.diagnostic(`GeoTopo word F1 = ${f1.toFixed(4)}`);
    assert.ok(f1 >= 0.9, `F1 ${f1}`); // measured 0.9058 with PDFium (pdf.js: 0.9031, poppler's pdftotext: 0.838)

    const listing = JSON.parse(await readFile(path.join(corpus.dir, 'sample-files-files.json'), 'utf8')) as {
      data: Array<{ path: string; creation_date?: string }>;
    };
    const listed = listing.data.find((entry) => entry.path.endsWith('/GeoTopo-komprimiert.pdf'))?.creation_date;
    if (!listed) return t.skip('files.json lists no creation date for GeoTopo-komprimiert.pdf');
    // files.json keeps the PDF's wall-clock time (2016-12-31 18:43:23) but writes +02:00, while the
    // file's Info says D:20161231184323+01'00' (CET on 31 December; pdfinfo reads 17:43:23 UTC too).
    // So the listed wall clock is checked with the offset the PDF itself declares.
    const wallClock = listed.slice(0, 19).replace(/\D/g, '');
    t.diagnostic(`files.json: ${listed}; extracted: ${result.metadata.creation_date}`);
    assert.equal(result.metadata.creation_date, pdfDateToUtc(`D:${wallClock}+01'00'`));
    assert.equal(result.metadata.creation_date, 'D:20161231174323Z');
  });

  test('GeoTopo under the default 30-page limit: counted, then too_many_pages', async () => {
    const strict = createPdfExtractor({ threads: 1 });
    try {
      const bytes = await file('sample-files-GeoTopo-komprimiert.pdf');
      assert.deepEqual(await strict.count(bytes), { kind: 'ok', pageCount: 117 });
      assert.deepEqual(await strict.extract(bytes), { kind: 'too_many_pages', pageCount: 117 });
    } finally {
      await strict.close();
    }
  });

  test('AES-256 (R6) with an empty user password: ok', async () => {
    const result = okResult(await extract('pypdf-r6-empty-password.pdf'));
    assert.match(allText(result), /pdf encryption test/);
  });

  test('AES-256 (R6) with a user password: encrypted', async () => {
    assert.deepEqual(await extract('pypdf-r6-user-password.pdf'), { kind: 'encrypted' });
  });

  test('invalid.NEGATIVE (header and EOF marker only): invalid', async () => {
    assert.equal((await extract('ocrmypdf-invalid.NEGATIVE.pdf')).kind, 'invalid');
  });

  test('xref keyword missing: the cross-reference table is rebuilt and the text extracted', async () => {
    const result = okResult(await extract('pdfjs-xref_command_missing.pdf'));
    assert.equal(result.pages[0].text, 'Reduced test-case');
  });

  test('scanned page without a text layer: no_text', async () => {
    const outcome = await extract('ocrmypdf-c02-22.pdf');
    assert.deepEqual(outcome.kind === 'no_text' && outcome.pageCount, 1);
  });

  test('35000x35000 JBIG2 page: answers without decoding the image or blowing memory', async (t: TestContext) => {
    const before = process.memoryUsage().rss;
    const outcome = await extract('ocrmypdf-hugemono.pdf');
    const growthMb = (process.memoryUsage().rss - before) / 2 ** 20;
    t.diagnostic(`hugemono: ${outcome.kind}, RSS growth ${growthMb.toFixed(1)} MB`);
    assert.ok(outcome.kind === 'no_text' || outcome.kind === 'timeout', outcome.kind);
    assert.ok(growthMb < 512, `RSS grew by ${growthMb} MB`); // the bitmap alone would be 146 MB (1 bit per pixel)
  });

  test('tracemonkey: 14 pages of text', async () => {
    const result = okResult(await extract('pdfjs-tracemonkey.pdf'));
    assert.equal(result.metadata.page_count, 14);
    assert.ok(result.pages.every((page) => page.text.length > 500));
    assert.match(result.pages[0].text, /^Trace-based Just-in-Time Type Specialization for Dynamic\nLanguages/);
    assert.equal(result.metadata.creation_date, 'D:20090401233925Z'); // D:20090401163925-07'00'
  });

  test('vertical CJK text extracts through the CMaps', async () => {
    const result = okResult(await extract('pdfjs-vertical.pdf'));
    assert.match(result.pages[0].text, /あいうえお/);
    assert.match(result.pages[0].text, /日本語/);
  });

  test('issue16176: a CJK variant character counts as one character', async () => {
    const result = okResult(await extract('pdfjs-issue16176.pdf'));
    // The font has no ToUnicode map, so the character comes from Adobe-Japan1's CID table. PDFium's
    // copy of that table is 16-bit and gives the common form 吉 (U+5409); pdf.js gave the astral
    // variant 𠮷 (U+20BB7). Either way it is one character and one word.
    assert.match(result.pages[0].text, /^(𠮷|吉)$/u);
    assert.equal(result.metadata.character_count, 1);
    assert.equal(result.metadata.word_count, 1);
  });

  test('rotated pages, basicapi and TAMReview extract text on every page', async () => {
    const rotation = okResult(await extract('pdfjs-rotation.pdf'));
    assert.equal(rotation.pages[0].text, 'This is my first page with normal layout.\nThis is the second line on the page.');
    for (const name of ['pdfjs-basicapi.pdf', 'pdfjs-TAMReview.pdf']) {
      const result = okResult(await extract(name));
      assert.ok(result.pages.every((page) => page.text.trim() !== ''), name);
    }
  });
});
