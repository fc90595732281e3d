/**
 * PDF resource bombs through the extractor (not the server): each ends with a clear outcome, the
 * extractor keeps working, and the memory the engine took is given back (its thread retires).
 * Memory bounds only; timing is for bench/pdf.ts.
 */
import { after, before, describe, test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createPdfExtractor } from '../../src/extract/pdf/index.ts';
import type { PdfExtractor, PdfOutcome } from '../../src/extract/pdf/index.ts';
import {
  MULTI_PAGE_LINES,
  chainedFlateBombPdf,
  flateBombPdf,
  lyingCountPdf,
  manyPagesPdf,
  multiPagePdf,
  pageTreeCyclePdf,
} from '../support/pdf-fixtures.ts';

/** A lower ceiling than the default 512 MB keeps the run short; the mechanism is the same. */
const CEILING_MB = 192;

async function assertStillWorks(extractor: PdfExtractor): Promise<void> {
  const outcome = await extractor.extract(await multiPagePdf());
  assert.equal(outcome.kind, 'ok', JSON.stringify(outcome));
  assert.equal(outcome.kind === 'ok' && outcome.result.pages[0].text, MULTI_PAGE_LINES[0].join('\n'));
}

function assertRefused(outcome: PdfOutcome, kinds: Array<PdfOutcome['kind']>, name: string): void {
  assert.ok(kinds.includes(outcome.kind), `${name}: ${JSON.stringify(outcome)}`);
}

describe('PDF bombs', () => {
  let extractor: PdfExtractor;
  let flate: Buffer;
  let chained: Buffer;
  before(() => {
    extractor = createPdfExtractor({ threads: 2, maxMemoryMb: CEILING_MB, timeoutMs: 60_000 });
    flate = flateBombPdf();
    chained = chainedFlateBombPdf();
  });
  after(() => extractor.close());

  test('a flate bomb (2 GiB of spaces in 2 MB) is invalid at the memory ceiling', async () => {
    assert.ok(flate.length < 4 * 2 ** 20, `${flate.length} bytes`);
    assert.equal((await extractor.count(flate)).kind, 'ok', 'opening it is cheap: the stream is only inflated for the text');
    const outcome = await extractor.extract(new Uint8Array(flate));
    assert.equal(outcome.kind, 'invalid');
    assert.match(outcome.kind === 'invalid' ? outcome.reason : '', new RegExp(`more than ${CEILING_MB} MB`));
    await assertStillWorks(extractor);
  });

  test('a chained /FlateDecode /FlateDecode bomb (a few KB) is invalid too', async () => {
    assert.ok(chained.length < 64 * 1024, `${chained.length} bytes`);
    assert.equal((await extractor.extract(new Uint8Array(chained))).kind, 'invalid');
    await assertStillWorks(extractor);
  });

  test('a page tree that lies about its /Count: too_many_pages when it claims many, invalid when the pages are missing', async () => {
    assert.deepEqual(await extractor.extract(lyingCountPdf(1_000_000)), { kind: 'too_many_pages', pageCount: 1_000_000 });
    assertRefused(await extractor.extract(lyingCountPdf(5)), ['invalid'], 'count 5, one page');
    await assertStillWorks(extractor);
  });

  test('a page tree with a cycle is invalid, without looping', async () => {
    assertRefused(await extractor.extract(pageTreeCyclePdf()), ['invalid'], 'cycle');
    await assertStillWorks(extractor);
  });

  test('a 1,000-page document is counted and refused before any page is read', async () => {
    const bytes = manyPagesPdf(1000);
    assert.deepEqual(await extractor.count(bytes), { kind: 'ok', pageCount: 1000 });
    assert.deepEqual(await extractor.extract(bytes), { kind: 'too_many_pages', pageCount: 1000 });
    await assertStillWorks(extractor);
  });

  test('20 bombs in a row: RSS comes back (≤ +200 MB) and the extractor still works', async (t: TestContext) => {
    await assertStillWorks(extractor);
    const rssBefore = process.memoryUsage().rss;
    const bombs = [flate, chained];
    // Two at a time, one per thread, as concurrent requests would arrive.
    for (let round = 0; round < 10; round++) {
      const outcomes = await Promise.all(bombs.map((bomb) => extractor.extract(new Uint8Array(bomb))));
      for (const outcome of outcomes) assert.equal(outcome.kind, 'invalid');
    }
    await assertStillWorks(extractor);
    await assertStillWorks(extractor); // both threads are fresh ones by now
    // The replaced threads' memory goes back to the system as they finish exiting, which can
    // take a moment on a busy machine: RSS is read again for up to 5 s before it is judged. A
    // leak stays.
    const growth = () => (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    let growthMb = growth();
    for (let waited = 0; growthMb > 200 && waited < 5_000; waited += 250) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      growthMb = growth();
    }
    t.diagnostic(`RSS before ${(rssBefore / 2 ** 20).toFixed(0)} MB, growth after 20 bombs ${growthMb.toFixed(0)} MB`);
    assert.ok(growthMb <= 200, `RSS grew by ${growthMb.toFixed(0)} MB`);
  });
});
