import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPdfExtractor, PdfBusyError } from '../../src/extract/pdf/index.ts';
import type { PdfExtractor, PdfOutcome } from '../../src/extract/pdf/index.ts';
import {
  ARABIC_TEXT,
  CJK_TEXT,
  SCANNED_LINES,
  arabicPdf,
  nonEmbeddedCjkPdf,
  scannedTextPdf,
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
    const outcome = await extractor.extract(bytes);
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
    await extractor.extract(bytes);
    assert.equal(bytes.byteLength, 0, 'the caller buffer is detached after a transfer');
  });

  test('a small pooled Buffer is copied instead, so the shared slab stays usable', async () => {
    const neighbour = Buffer.from('neighbour');
    const pooled = Buffer.from(await pdfWithoutCreationDate());
    const view = pooled.subarray(0, pooled.length);
    assert.equal(okResult(await extractor.extract(view)).pages[0].text, 'Undated document');
    assert.ok(pooled.byteLength > 0);
    assert.equal(neighbour.toString(), 'neighbour');
  });

  test('a creation date with an offset is converted to UTC; a missing one is omitted', async () => {
    const dated = okResult(await extractor.extract(await pdfWithCreationDate("D:20230101120000+02'00'")));
    assert.equal(dated.metadata.creation_date, 'D:20230101100000Z');
    const local = okResult(await extractor.extract(await pdfWithCreationDate('D:20230101120000')));
    assert.equal(local.metadata.creation_date, 'D:20230101120000Z');
    const garbled = okResult(await extractor.extract(await pdfWithCreationDate('last Tuesday')));
    assert.equal('creation_date' in garbled.metadata, false);
    const undated = okResult(await extractor.extract(await pdfWithoutCreationDate()));
    assert.equal('creation_date' in undated.metadata, false);
  });

  test('more than 30 pages: too_many_pages with the count, nothing extracted', async () => {
    assert.deepEqual(await extractor.extract(await numberedPagesPdf(31)), { kind: 'too_many_pages', pageCount: 31 });
  });

  test('exactly 30 pages is allowed', async () => {
    const result = okResult(await extractor.extract(await numberedPagesPdf(30)));
    assert.equal(result.metadata.page_count, 30);
    assert.equal(result.pages[29].text, 'Page 30 of 30');
  });

  test('count: the page count only, without moving the caller\'s bytes', async () => {
    const bytes = await multiPagePdf();
    assert.deepEqual(await extractor.count(bytes), { kind: 'ok', pageCount: 3 });
    assert.ok(bytes.byteLength > 0, 'count copies; the same bytes go to extract afterwards');
    assert.equal(okResult(await extractor.extract(bytes)).pages.length, 3);
    assert.deepEqual(await extractor.count(await numberedPagesPdf(31)), { kind: 'ok', pageCount: 31 });
    assert.deepEqual(await extractor.count(await encryptedPdf('secret')), { kind: 'encrypted' });
    assert.equal((await extractor.count(corruptPdfBytes())).kind, 'invalid');
  });

  test('Arabic drawn in visual order comes out in logical order', async () => {
    assert.equal(okResult(await extractor.extract(arabicPdf())).pages[0].text, ARABIC_TEXT);
  });

  test('a non-embedded CJK font with a predefined CMap (HeiseiMin-W3, UniJIS-UCS2-H)', async () => {
    const result = okResult(await extractor.extract(nonEmbeddedCjkPdf()));
    assert.equal(result.pages[0].text, CJK_TEXT);
    assert.equal(result.metadata.character_count, [...CJK_TEXT].length);
  });

  test('image-only pages: no_text', async () => {
    const outcome = await extractor.extract(await imageOnlyPdf());
    assert.deepEqual(outcome.kind === 'no_text' && { pageCount: outcome.pageCount, texts: outcome.result.pages.map((page) => page.text) }, { pageCount: 1, texts: [''] });
  });

  test('a document with some text and an image page is ok, the image page empty', async () => {
    const { buildPdf } = await import('../support/pdf-fixtures.ts');
    const outcome = await extractor.extract(await buildPdf({ pages: [{ image: true }, ['caption'], { image: true }] }));
    const result = okResult(outcome);
    assert.deepEqual(result.pages, [{ page: 1, text: '' }, { page: 2, text: 'caption' }, { page: 3, text: '' }]);
    assert.deepEqual(outcome.kind === 'ok' && outcome.pagesWithoutText, [1, 3], 'pages for OCR');
  });

  test('renderPages: pictures of text come back as grey bitmaps, the page rotation applied', async () => {
    const bytes = await scannedTextPdf();
    const outcome = await extractor.extract(bytes.slice());
    assert.deepEqual(outcome.kind === 'no_text' && outcome.pageCount, 2);
    const [upright, turned] = await extractor.renderPages(bytes, [1, 2], { dpi: 300 });
    assert.deepEqual([upright.page, upright.width, upright.height, upright.channels], [1, 2550, 3300, 1]);
    // /Rotate 90 turns the portrait page into a landscape one.
    assert.deepEqual([turned.page, turned.width, turned.height, turned.channels], [2, 3300, 2550, 1]);
    assert.equal(upright.pixels.length, 2550 * 3300);
    const darkShare = (page: typeof upright, x0: number, y0: number, x1: number, y1: number) => {
      let dark = 0;
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) if (page.pixels[y * page.width + x] < 128) dark++;
      return dark / ((x1 - x0) * (y1 - y0));
    };
    // The picture sits at x 72-472 pt, y 600-700 pt from the bottom: ink there, none elsewhere.
    assert.ok(darkShare(upright, 300, 385, 1966, 800) > 0.02, 'text inside the picture');
    assert.equal(darkShare(upright, 0, 1200, 2550, 3300), 0, 'blank below it');
    // Turned upright, the second page's picture lies horizontally across the lower middle.
    assert.ok(darkShare(turned, 400, 1450, 1750, 1850) > 0.02, 'text reads horizontally after rotation');
    assert.equal(darkShare(turned, 0, 0, 3300, 1300), 0, 'blank above it');
    assert.ok(bytes.byteLength > 0, 'renderPages copies the bytes');
  });

  test('renderPages: the text in the rendered page is readable by OCR', async () => {
    const { createImageOcr } = await import('../../src/extract/image/index.ts');
    const sharp = (await import('sharp')).default;
    const [page] = await extractor.renderPages(await scannedTextPdf(), [2]);
    const png = await sharp(page.pixels, { raw: { width: page.width, height: page.height, channels: 1 } })
      .extract({ left: 350, top: 1400, width: 1500, height: 550 })
      .png()
      .toBuffer();
    const ocr = createImageOcr({ workers: 1 });
    try {
      const outcome = await ocr.recognize(png);
      assert.equal(outcome.kind, 'ok');
      const text = outcome.kind === 'ok' ? outcome.text : '';
      for (const line of SCANNED_LINES) assert.match(text, new RegExp(line.replace(/ /g, '\\s+')));
    } finally {
      await ocr.close();
    }
  });

  test('renderPages: a page outside the document or a locked file is refused', async () => {
    await assert.rejects(extractor.renderPages(await multiPagePdf(), [4]), { name: 'PdfRenderError', kind: 'invalid' });
    await assert.rejects(extractor.renderPages(await encryptedPdf('secret'), [1]), { name: 'PdfRenderError', kind: 'encrypted' });
  });

  test('encrypted with an empty user password: read like any other file', async () => {
    const result = okResult(await extractor.extract(await encryptedPdf('')));
    assert.equal(result.pages[0].text, ENCRYPTED_TEXT);
    assert.equal(result.metadata.creation_date, 'D:20200301052959Z'); // Info strings were decrypted too
  });

  test('encrypted with a user password: encrypted', async () => {
    assert.deepEqual(await extractor.extract(await encryptedPdf('secret')), { kind: 'encrypted' });
  });

  test('corrupt bytes and non-PDF input: invalid', async () => {
    for (const bytes of [corruptPdfBytes(), new Uint8Array(0), new TextEncoder().encode('<html>not a pdf</html>')]) {
      const outcome = await extractor.extract(bytes);
      assert.equal(outcome.kind, 'invalid');
      assert.ok(outcome.kind === 'invalid' && outcome.reason.length > 0);
    }
  });

  test('a caller abort rejects with the caller reason', async () => {
    const controller = new AbortController();
    const pending = extractor.extract(await nestedFormBombPdf(), { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('client went away')), 50);
    await assert.rejects(pending, /client went away/);
    const already = AbortSignal.abort(new Error('too late'));
    await assert.rejects(extractor.extract(await multiPagePdf(), { signal: already }), /too late/);
  });

  test('options are validated', () => {
    assert.throws(() => createPdfExtractor({ threads: 0 }), RangeError);
    assert.throws(() => createPdfExtractor({ timeoutMs: 0 }), RangeError);
    assert.throws(() => createPdfExtractor({ maxQueue: 0 }), /maxQueue/);
    // Below the minimum V8 aborts the whole process when the thread starts: refused up front.
    assert.throws(() => createPdfExtractor({ maxHeapMb: 8 }), /maxHeapMb must be ≥ 64/);
    assert.throws(() => createPdfExtractor({ maxMemoryMb: 16 }), /maxMemoryMb must be between 64 and 2048/);
    assert.throws(() => createPdfExtractor({ maxMemoryMb: 128, memoryHighWaterMb: 256 }), /memoryHighWaterMb/);
  });
});

describe('PDF extractor resilience (one thread)', () => {
  let extractor: PdfExtractor;
  before(() => {
    // The nested-form bomb also grows PDFium's memory (~600 MB/s on a fast core); with the
    // largest ceiling the time limit is reached first on any machine, which is what is tested here.
    extractor = createPdfExtractor({ threads: 1, timeoutMs: 1000, maxPages: 40, maxMemoryMb: 2048 });
  });
  after(() => extractor.close());

  test('a document that never finishes times out, and the pool keeps working', async () => {
    assert.deepEqual(await extractor.extract(await nestedFormBombPdf()), { kind: 'timeout' });
    assert.equal(okResult(await extractor.extract(await multiPagePdf())).pages.length, 3);
    assert.deepEqual(await extractor.extract(await nestedFormBombPdf()), { kind: 'timeout' });
    assert.equal(okResult(await extractor.extract(await numberedPagesPdf(31))).metadata.page_count, 31);
  });

  test('a corrupt file does not disturb the next one', async () => {
    assert.equal((await extractor.extract(corruptPdfBytes())).kind, 'invalid');
    assert.equal(okResult(await extractor.extract(await multiPagePdf())).pages[0].text, MULTI_PAGE_LINES[0].join('\n'));
  });

  test('past maxQueue documents waiting, count refuses a new one (PdfBusyError); extraction continues admitted work', async () => {
    const bounded = createPdfExtractor({ threads: 1, timeoutMs: 30_000, maxQueue: 1, maxMemoryMb: 2048 });
    try {
      assert.equal(bounded.hasCapacity(), true, 'nothing started, nothing waiting');
      const controller = new AbortController();
      // An extraction continues an admitted document: it is never refused, and it holds the thread.
      const slow = bounded.extract(await nestedFormBombPdf(), { signal: controller.signal });
      while (bounded.stats!().busy === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const waiting = bounded.count(await multiPagePdf());
      while (bounded.stats!().queued === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.equal(bounded.hasCapacity(), false);
      await assert.rejects(bounded.count(await multiPagePdf()), (error: Error) => error instanceof PdfBusyError && /1 documents waiting/.test(error.message));
      const { heldBytes, ...counts } = bounded.stats!();
      assert.deepEqual(counts, { threads: 1, busy: 1, queued: 1 });
      assert.ok(heldBytes > 0, 'the counted document holds its weight');
      controller.abort(new Error('client went away'));
      await assert.rejects(slow, /client went away/);
      assert.deepEqual(await waiting, { kind: 'ok', pageCount: 3 });
      assert.equal(bounded.hasCapacity(), true);
    } finally {
      await bounded.close();
    }
  });

  test('past maxQueueBytes, a new document is refused by its size while small ones still fit', async () => {
    const bounded = createPdfExtractor({ threads: 1, timeoutMs: 30_000, maxQueue: 100, maxQueueBytes: 4 * 2 ** 20, maxMemoryMb: 2048 });
    try {
      const controller = new AbortController();
      const small = await multiPagePdf();
      // Admitted through `approve`, and holding the thread until aborted.
      const slow = bounded.extract(await nestedFormBombPdf(), { signal: controller.signal, approve: async () => undefined });
      while (bounded.stats!().busy === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const large = new Uint8Array(3 * 2 ** 20); // weight 6 MB: more than the bound while anything is held
      assert.equal(bounded.hasCapacity(large.byteLength), false);
      assert.equal(bounded.hasCapacity(small.byteLength), true);
      await assert.rejects(bounded.count(large), PdfBusyError);
      const waiting = Array.from({ length: 10 }, () => bounded.count(small));
      controller.abort(new Error('client went away'));
      await assert.rejects(slow, /client went away/);
      for (const outcome of await Promise.all(waiting)) assert.deepEqual(outcome, { kind: 'ok', pageCount: 3 });
      assert.equal(bounded.stats!().heldBytes, 0);
      // Alone, a document larger than the bound is still served (here: found invalid).
      assert.equal((await bounded.count(large)).kind, 'invalid');
    } finally {
      await bounded.close();
    }
  });

  test('extract with approve hands over the page count before reading, and stops when refused', async () => {
    const seen: number[] = [];
    const approved = await extractor.extract(await multiPagePdf(), { approve: async (pageCount) => void seen.push(pageCount) });
    assert.deepEqual(seen, [3]);
    assert.equal(approved.kind, 'ok');
    const refusal = new Error('balance too low');
    await assert.rejects(
      extractor.extract(await multiPagePdf(), {
        approve: async () => {
          throw refusal;
        },
      }),
      (error) => error === refusal,
    );
    // The thread that was told to stop takes the next document.
    assert.equal((await extractor.extract(await multiPagePdf())).kind, 'ok');
  });

  test('documents queued behind a slow one are not charged its time', async () => {
    const [slow, ...queued] = await Promise.all([
      extractor.extract(await nestedFormBombPdf()),
      extractor.extract(await multiPagePdf()),
      extractor.extract(await pdfWithoutCreationDate()),
    ]);
    assert.equal(slow.kind, 'timeout');
    assert.deepEqual(queued.map((outcome) => outcome.kind), ['ok', 'ok']);
  });
});
