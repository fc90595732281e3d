import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { cleanOcrText, medianLineHeight } from '../../src/extract/image/text.ts';
import { smallTextUpscaleFactor } from '../../src/extract/image/small-text.ts';
import { createImageOcr, imageOcrOptionsFromEnv } from '../../src/extract/image/index.ts';
import { characterErrorRate } from '../support/image-fixtures.ts';

/** A TSV row as Tesseract writes it: level, page, block, paragraph, line, word, left, top, width, height, conf, text. */
function tsvLine(height: number): string {
  return ['4', '1', '1', '1', '1', '0', '10', '10', '300', String(height), '-1', ''].join('\t');
}

describe('cleanOcrText', () => {
  test('trims the edges and trailing spaces, keeps line breaks and blank lines between blocks', () => {
    assert.equal(cleanOcrText('\n  First line   \nsecond\t\n\nThird block \n\n'), 'First line\nsecond\n\nThird block');
  });

  test('keeps spaces inside a line', () => {
    assert.equal(cleanOcrText('Date      Description   \n'), 'Date      Description');
  });

  test('carriage returns become line feeds', () => {
    assert.equal(cleanOcrText('a\r\nb\rc'), 'a\nb\nc');
  });

  test('no text is the empty string', () => {
    assert.equal(cleanOcrText(' \n \n'), '');
  });
});

describe('medianLineHeight', () => {
  test('reads the height of line rows only', () => {
    const word = ['5', '1', '1', '1', '1', '1', '10', '10', '40', '99', '95', 'word'].join('\t');
    const tsv = [tsvLine(14), word, tsvLine(30), tsvLine(12), ''].join('\n');
    assert.equal(medianLineHeight(tsv), 14);
  });

  test('is null without lines', () => {
    assert.equal(medianLineHeight(''), null);
    assert.equal(medianLineHeight(['1', '1', '0', '0', '0', '0', '0', '0', '640', '480', '-1', ''].join('\t')), null);
  });
});

describe('smallTextUpscaleFactor', () => {
  const image = { width: 400, height: 100 };

  test('text of ordinary size is read once', () => {
    assert.equal(smallTextUpscaleFactor({ confidence: 90, tsv: tsvLine(20) }, image, 4000), null);
    assert.equal(smallTextUpscaleFactor({ confidence: 90, tsv: tsvLine(12) }, image, 4000), null);
  });

  test('small text is read again twice as large, tiny text three times', () => {
    assert.equal(smallTextUpscaleFactor({ confidence: 85, tsv: tsvLine(10) }, image, 4000), 2);
    assert.equal(smallTextUpscaleFactor({ confidence: 70, tsv: tsvLine(8) }, image, 4000), 3);
  });

  test('short lines read with low confidence are likely garbled tiny text', () => {
    assert.equal(smallTextUpscaleFactor({ confidence: 30, tsv: tsvLine(15) }, image, 4000), 3);
  });

  test('no text found: retried only on small images', () => {
    assert.equal(smallTextUpscaleFactor({ confidence: 0, tsv: '' }, image, 4000), 3);
    assert.equal(smallTextUpscaleFactor({ confidence: 0, tsv: '' }, { width: 1000, height: 800 }, 4000), null);
  });

  test('the enlargement stays within the size bound, and is skipped when too little room is left', () => {
    assert.equal(smallTextUpscaleFactor({ confidence: 70, tsv: tsvLine(8) }, { width: 1600, height: 100 }, 4000), 2.5);
    assert.equal(smallTextUpscaleFactor({ confidence: 70, tsv: tsvLine(8) }, { width: 3000, height: 100 }, 4000), null);
  });
});

describe('options', () => {
  test('environment variables map to options; unset ones keep the defaults', () => {
    assert.deepEqual(
      imageOcrOptionsFromEnv({ OCR_WORKERS: '3', OCR_TIMEOUT_MS: '5000', OCR_MAX_PIXELS: ' 1000000 ', OCR_RECYCLE_AFTER: '' }),
      { workers: 3, timeoutMs: 5000, maxPixels: 1_000_000, recycleAfter: undefined, maxQueue: undefined, model: undefined },
    );
  });

  test('malformed environment values are refused at startup', () => {
    assert.throws(() => imageOcrOptionsFromEnv({ OCR_WORKERS: 'two' }), /OCR_WORKERS must be a positive integer/);
    assert.throws(() => imageOcrOptionsFromEnv({ OCR_TIMEOUT_MS: '0' }), /OCR_TIMEOUT_MS must be a positive integer/);
    assert.throws(() => imageOcrOptionsFromEnv({ OCR_MAX_QUEUE: '-4' }), /OCR_MAX_QUEUE must be a positive integer/);
  });

  test('invalid options are refused before any engine starts', () => {
    assert.throws(() => createImageOcr({ workers: 0 }), /workers must be a positive integer/);
    assert.throws(() => createImageOcr({ timeoutMs: 1.5 }), /timeoutMs must be a positive integer/);
  });
});

describe('characterErrorRate (test support)', () => {
  test('ignores whitespace layout and counts edits against the expected length', () => {
    assert.equal(characterErrorRate('Hello\n  world ', 'Hello world'), 0);
    assert.equal(characterErrorRate('Hallo world', 'Hello world'), 1 / 11);
    assert.equal(characterErrorRate('', 'abcd'), 1);
  });
});
