import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createImageOcr } from '../../src/extract/image/index.ts';
import type { ImageOcr } from '../../src/extract/image/index.ts';
import { corpusDir } from '../support/corpus.ts';
import { characterErrorRate } from '../support/image-fixtures.ts';

/**
 * OCR accuracy on the recorded corpus images (tesseract.js's own test images): ground-truth.json
 * maps each file to its expected text. The bill's truth keeps column spacing
 * (preserve_interword_spaces=1); whitespace is normalised before comparing, so layout spacing
 * does not count as error.
 *
 * Measured: CER 0 on all six images. The ceiling leaves room for engine builds that differ in
 * floating-point detail (SIMD variants) without hiding a real regression.
 */
const MAX_CER_PER_IMAGE = 0.02;
const MAX_MEAN_CER = 0.01;

const corpus = corpusDir('ocr');

describe('OCR corpus', { skip: corpus.skip }, () => {
  const dir = corpus.dir;
  const truth: Record<string, string> = corpus.skip ? {} : JSON.parse(readFileSync(path.join(dir, 'ground-truth.json'), 'utf8'));
  const rates: number[] = [];
  let ocr: ImageOcr;

  before(async () => {
    ocr = createImageOcr({ workers: 1 });
    await ocr.warm();
  });

  after(async () => {
    await ocr?.close();
  });

  for (const [file, expected] of Object.entries(truth)) {
    test(file, async () => {
      const outcome = await ocr.recognize(readFileSync(path.join(dir, file)));
      assert.equal(outcome.kind, 'ok', JSON.stringify(outcome));
      const cer = characterErrorRate(outcome.kind === 'ok' ? outcome.text : '', expected);
      rates.push(cer);
      console.log(`${file}: CER ${cer.toFixed(4)}`);
      assert.ok(cer <= MAX_CER_PER_IMAGE, `${file}: CER ${cer.toFixed(4)} above ${MAX_CER_PER_IMAGE}`);
    });
  }

  test('mean CER over the corpus', () => {
    assert.equal(rates.length, Object.keys(truth).length, 'every image was read');
    const mean = rates.reduce((sum, rate) => sum + rate, 0) / rates.length;
    console.log(`mean CER ${mean.toFixed(4)} over ${rates.length} images`);
    assert.ok(mean <= MAX_MEAN_CER);
  });
});
