import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPdfExtractor } from '../../src/extract/pdf/index.ts';
import type { PdfExtractor, PdfOutcome } from '../../src/extract/pdf/index.ts';
import {
  ENCRYPTED_TEXT,
  MULTI_PAGE_LINES,
  corruptPdfBytes,
  encryptedPdf,
  imageOnlyPdf,
  multiPagePdf,
  nestedFormBombPdf,
  numberedPagesPdf,
  pdfWithCreationDate,
  pdfWithoutCreationDate,
} from '../support/pdf-fixtures.ts';

const ENOUGH = 1000;

function okResult(outcome: PdfOutcome) {
  assert.equal(outcome.kind, 'ok', `expected ok, got ${JSON.stringify(outcome)}`);
  return outcome.kind === 'ok' ? outcome.result : assert.fail();
}

describe('PDF extractor', () => {
  let extractor: PdfExtractor;
  before(() => {
    extractor = createPdfExtractor({ threads: 2 });
  });
  after(() => extractor.close());

  test('extracts every page with exact text, counts and metadata in wire order', async () => {
    const bytes = await multiPagePdf();
    const size = bytes.byteLength;
    const outcome = await extractor.extract(bytes, ENOUGH);
    const result = okResult(outcome);
    assert.equal(outcome.kind === 'ok' && outcome.pageCount, 3);
    const expectedTexts = MULTI_PAGE_LINES.map((lines) => lines.join('\n'));
    assert.deepEqual(result.pages, expectedTexts.map((text, i) => ({ page: i + 1, text })));
    const allText = expectedTexts.join(' ');
    assert.deepEqual(result.metadata, {
      word_count: allText.split(/\s+/).length,
      character_count: [...expectedTexts.join('')].length,
      page_count: 3,
      file_size: `${(size / 1024).toFixed(2)} KB`,
      creation_date: 'D:20240315093000Z',
    });
    assert.deepEqual(Object.keys(result), ['metadata', 'pages']);
    assert.deepEqual(Object.keys(result.metadata), ['word_count', 'character_count', 'page_count', 'file_size', 'creation_date']);
  });

  test('the input buffer is moved to the thread, not copied', async () => {
    const bytes = await multiPagePdf();
    assert.ok(bytes.byteLength > 0);
    await extractor.extract(bytes, ENOUGH);
    assert.equal(bytes.byteLength, 0, 'the caller buffer is detached after a transfer');
  });

  test('a small pooled Buffer is copied instead, so the shared slab stays usable', async () => {
    const neighbour = Buffer.from('neighbour');
    const pooled = Buffer.from(await pdfWithoutCreationDate());
    const view = pooled.subarray(0, pooled.length);
    assert.equal(okResult(await extractor.extract(view, ENOUGH)).pages[0].text, 'Undated document');
    assert.ok(pooled.byteLength > 0);
    assert.equal(neighbour.toString(), 'neighbour');
  });

  test('a creation date with an offset is converted to UTC; a missing one is omitted', async () => {
    const dated = okResult(await extractor.extract(await pdfWithCreationDate("D:20230101120000+02'00'"), ENOUGH));
    assert.equal(dated.metadata.creation_date, 'D:20230101100000Z');
    const local = okResult(await extractor.extract(await pdfWithCreationDate('D:20230101120000'), ENOUGH));
    assert.equal(local.metadata.creation_date, 'D:20230101120000Z');
    const garbled = okResult(await extractor.extract(await pdfWithCreationDate('last Tuesday'), ENOUGH));
    assert.equal('creation_date' in garbled.metadata, false);
    const undated = okResult(await extractor.extract(await pdfWithoutCreationDate(), ENOUGH));
    assert.equal('creation_date' in undated.metadata, false);
  });

  test('more than 30 pages: too_many_pages with the count, nothing extracted', async () => {
    assert.deepEqual(await extractor.extract(await numberedPagesPdf(31), ENOUGH), { kind: 'too_many_pages', pageCount: 31 });
  });

  test('exactly 30 pages is allowed', async () => {
    const result = okResult(await extractor.extract(await numberedPagesPdf(30), ENOUGH));
    assert.equal(result.metadata.page_count, 30);
    assert.equal(result.pages[29].text, 'Page 30 of 30');
  });

  test('a budget below the page count: over_budget with the count', async () => {
    assert.deepEqual(await extractor.extract(await multiPagePdf(), 2), { kind: 'over_budget', pageCount: 3 });
    assert.deepEqual(await extractor.extract(await multiPagePdf(), 0), { kind: 'over_budget', pageCount: 3 });
    assert.equal((await extractor.extract(await multiPagePdf(), 3)).kind, 'ok');
  });

  test('too_many_pages is decided before the budget', async () => {
    assert.deepEqual(await extractor.extract(await numberedPagesPdf(31), 1), { kind: 'too_many_pages', pageCount: 31 });
  });

  test('image-only pages: no_text', async () => {
    assert.deepEqual(await extractor.extract(await imageOnlyPdf(), ENOUGH), { kind: 'no_text', pageCount: 1 });
  });

  test('a document with some text and an image page is ok, the image page empty', async () => {
    const { buildPdf } = await import('../support/pdf-fixtures.ts');
    const result = okResult(await extractor.extract(await buildPdf({ pages: [{ image: true }, ['caption']] }), ENOUGH));
    assert.deepEqual(result.pages, [{ page: 1, text: '' }, { page: 2, text: 'caption' }]);
  });

  test('encrypted with an empty user password: read like any other file', async () => {
    const result = okResult(await extractor.extract(await encryptedPdf(''), ENOUGH));
    assert.equal(result.pages[0].text, ENCRYPTED_TEXT);
    assert.equal(result.metadata.creation_date, 'D:20200301052959Z'); // Info strings were decrypted too
  });

  test('encrypted with a user password: encrypted', async () => {
    assert.deepEqual(await extractor.extract(await encryptedPdf('secret'), ENOUGH), { kind: 'encrypted' });
  });

  test('corrupt bytes and non-PDF input: invalid', async () => {
    for (const bytes of [corruptPdfBytes(), new Uint8Array(0), new TextEncoder().encode('<html>not a pdf</html>')]) {
      const outcome = await extractor.extract(bytes, ENOUGH);
      assert.equal(outcome.kind, 'invalid');
      assert.ok(outcome.kind === 'invalid' && outcome.reason.length > 0);
    }
  });

  test('a caller abort rejects with the caller reason', async () => {
    const controller = new AbortController();
    const pending = extractor.extract(await nestedFormBombPdf(), ENOUGH, controller.signal);
    setTimeout(() => controller.abort(new Error('client went away')), 50);
    await assert.rejects(pending, /client went away/);
    const already = AbortSignal.abort(new Error('too late'));
    await assert.rejects(extractor.extract(await multiPagePdf(), ENOUGH, already), /too late/);
  });

  test('options are validated', () => {
    assert.throws(() => createPdfExtractor({ threads: 0 }), RangeError);
    assert.throws(() => createPdfExtractor({ timeoutMs: 0 }), RangeError);
    // Below the minimum V8 aborts the whole process when the thread starts: refused up front.
    assert.throws(() => createPdfExtractor({ maxHeapMb: 8 }), /maxHeapMb must be ≥ 64/);
  });
});

describe('PDF extractor resilience (one thread)', () => {
  let extractor: PdfExtractor;
  before(() => {
    extractor = createPdfExtractor({ threads: 1, timeoutMs: 1000, maxPages: 40 });
  });
  after(() => extractor.close());

  test('a document that never finishes times out, and the pool keeps working', async () => {
    assert.deepEqual(await extractor.extract(await nestedFormBombPdf(), ENOUGH), { kind: 'timeout' });
    assert.equal(okResult(await extractor.extract(await multiPagePdf(), ENOUGH)).pages.length, 3);
    assert.deepEqual(await extractor.extract(await nestedFormBombPdf(), ENOUGH), { kind: 'timeout' });
    assert.equal(okResult(await extractor.extract(await numberedPagesPdf(31), ENOUGH)).metadata.page_count, 31);
  });

  test('a corrupt file does not disturb the next one', async () => {
    assert.equal((await extractor.extract(corruptPdfBytes(), ENOUGH)).kind, 'invalid');
    assert.equal(okResult(await extractor.extract(await multiPagePdf(), ENOUGH)).pages[0].text, MULTI_PAGE_LINES[0].join('\n'));
  });

  test('documents queued behind a slow one are not charged its time', async () => {
    const [slow, ...queued] = await Promise.all([
      extractor.extract(await nestedFormBombPdf(), ENOUGH),
      extractor.extract(await multiPagePdf(), ENOUGH),
      extractor.extract(await pdfWithoutCreationDate(), ENOUGH),
    ]);
    assert.equal(slow.kind, 'timeout');
    assert.deepEqual(queued.map((outcome) => outcome.kind), ['ok', 'ok']);
  });
});
