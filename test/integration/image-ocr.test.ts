import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import sharp from 'sharp';
import { createImageOcr, imageOcrOptionsFromEnv, OcrBusyError } from '../../src/extract/image/index.ts';
import type { ImageOcr, OcrOutcome } from '../../src/extract/image/index.ts';
import { bundledModel, engineCoreFile, hasLstmModel, modelDirectory, spawnEngine } from '../../src/extract/image/engine.ts';
import {
  blankImage,
  canRenderText,
  characterErrorRate,
  COLUMN_ONE,
  COLUMN_TWO,
  corruptBytes,
  INVOICE_LINES,
  photographed,
  pngClaimingSize,
  renderPage,
  renderTextImage,
  rotatedPixels,
  SAMPLE_LINES,
  sidewaysPhoto,
  truncated,
} from '../support/image-fixtures.ts';

/**
 * createImageOcr end to end on images generated in code. OCR output may carry a little noise; it
 * is compared through the character error rate (CER), whitespace normalised.
 */

const fontsMissing = !(await canRenderText());
const skip = fontsMissing ? 'no font renders text here (install fonts-dejavu-core)' : false;
const expected = SAMPLE_LINES.join('\n');
const MAX_CER = 0.02;

function textOf(outcome: OcrOutcome): string {
  assert.equal(outcome.kind, 'ok', JSON.stringify(outcome));
  return (outcome as Extract<OcrOutcome, { kind: 'ok' }>).text;
}

function assertReads(outcome: OcrOutcome, truth: string, label: string): void {
  const cer = characterErrorRate(textOf(outcome), truth);
  console.log(`${label}: CER ${cer.toFixed(4)}`);
  assert.ok(cer <= MAX_CER, `${label}: CER ${cer} for ${JSON.stringify(textOf(outcome))}`);
}

describe('image OCR', { skip }, () => {
  let ocr: ImageOcr;

  before(async () => {
    ocr = createImageOcr({ workers: 1 });
    await ocr.warm();
  });

  after(async () => {
    await ocr?.close();
  });

  for (const format of ['png', 'jpeg', 'webp'] as const) {
    test(`reads text from ${format}`, async () => {
      const outcome = await ocr.recognize(await renderTextImage(SAMPLE_LINES, { format }));
      assertReads(outcome, expected, format);
      assert.equal(textOf(outcome).split('\n').length, 2, 'one line of output per line of text');
    });
  }

  for (const orientation of [6, 8] as const) {
    test(`reads a photo stored sideways with EXIF orientation ${orientation}`, async () => {
      assertReads(await ocr.recognize(await sidewaysPhoto(SAMPLE_LINES, orientation)), expected, `EXIF ${orientation}`);
    });
  }

  test('the sideways fixture carries no orientation once re-encoded (control for the tests below)', async () => {
    const pixelsOnly = await sharp(await sidewaysPhoto(SAMPLE_LINES, 6)).png().toBuffer();
    const { orientation } = await sharp(pixelsOnly).metadata();
    assert.equal(orientation, undefined);
  });

  for (const degrees of [90, 180, 270] as const) {
    test(`reads a page whose pixels are rotated ${degrees}° (no EXIF tag)`, async () => {
      const page = await renderPage({ columns: [INVOICE_LINES.slice(0, 4)], fontFamily: 'DejaVu Sans', fontSize: 22 });
      const outcome = await ocr.recognize(await rotatedPixels(page, degrees));
      assertReads(outcome, INVOICE_LINES.slice(0, 4).join('\n'), `rotated ${degrees}°`);
    });
  }

  test('reads a two-column page column by column, lines not interleaved', async () => {
    // Five lines each: with three, Tesseract (the command line too) does not see columns at all.
    const columnOne = COLUMN_ONE;
    const columnTwo = COLUMN_TWO;
    const text = textOf(await ocr.recognize(await renderPage({ columns: [columnOne, columnTwo], fontSize: 20 })));
    assertReads({ kind: 'ok', text }, [...columnOne, ...columnTwo].join('\n'), 'two columns');
    // Every output line belongs to one column: none joins the two (the reading-across failure).
    const lines = text.split('\n').filter((line) => line.trim());
    assert.equal(lines.length, 10, JSON.stringify(lines));
    const lastOfFirst = text.indexOf('reached the coast');
    const firstOfSecond = text.indexOf('Farmers learned');
    assert.ok(lastOfFirst >= 0 && firstOfSecond > lastOfFirst, `column 1 before column 2: ${JSON.stringify(text)}`);
  });

  test('reads a photographed page lit unevenly (dark corner, noise, JPEG quality 40)', async () => {
    const page = await renderPage({ columns: [INVOICE_LINES.slice(0, 4)], fontFamily: 'DejaVu Sans', fontSize: 22 });
    const outcome = await ocr.recognize(await photographed(page, { darkest: 35, noise: 10 }));
    assertReads(outcome, INVOICE_LINES.slice(0, 4).join('\n'), 'photographed');
  });

  for (const channels of [1, 3, 4] as const) {
    test(`reads a raw ${channels}-channel bitmap`, async () => {
      const { data, info } = await sharp(await renderTextImage(SAMPLE_LINES))
        .toColourspace(channels === 1 ? 'b-w' : 'srgb')
        [channels === 4 ? 'ensureAlpha' : 'removeAlpha']()
        .raw()
        .toBuffer({ resolveWithObject: true });
      assert.equal(info.channels, channels);
      const outcome = await ocr.recognize({ pixels: new Uint8Array(data), width: info.width, height: info.height, channels });
      assertReads(outcome, expected, `raw ${channels} channels`);
    });
  }

  test('a raw bitmap with inconsistent dimensions is invalid_image, one over the pixel limit too_large', async () => {
    const pixels = new Uint8Array(100 * 50 * 3);
    assert.equal((await ocr.recognize({ pixels, width: 100, height: 51, channels: 3 })).kind, 'invalid_image');
    assert.equal((await ocr.recognize({ pixels, width: 0, height: 50, channels: 3 })).kind, 'invalid_image');
    assert.equal((await ocr.recognize({ pixels, width: 100, height: 50, channels: 2 as 3 })).kind, 'invalid_image');
    const tooLarge = await ocr.recognize({ pixels: new Uint8Array(3), width: 60_000, height: 60_000, channels: 1 });
    assert.equal(tooLarge.kind, 'too_large', 'refused from the declared size, before the buffer is looked at');
  });

  test('reads small text (10 px) through the enlarged second pass', async () => {
    const outcome = await ocr.recognize(await renderTextImage(SAMPLE_LINES, { fontSize: 10 }));
    assertReads(outcome, expected, '10 px text');
  });

  test('reads tiny text (7 px) that a single pass at native size does not find', async () => {
    const outcome = await ocr.recognize(await renderTextImage(SAMPLE_LINES, { fontSize: 7 }));
    assertReads(outcome, expected, '7 px text');
  });

  test('a blank image is processed: ok with empty text', async () => {
    assert.deepEqual(await ocr.recognize(await blankImage()), { kind: 'ok', text: '' });
  });

  test('corrupt, truncated and empty inputs are invalid_image', async () => {
    assert.equal((await ocr.recognize(corruptBytes())).kind, 'invalid_image');
    assert.equal((await ocr.recognize(truncated(await renderTextImage(SAMPLE_LINES)))).kind, 'invalid_image');
    assert.equal((await ocr.recognize(new Uint8Array(0))).kind, 'invalid_image');
  });

  test('a header claiming 60000x60000 pixels is too_large', async () => {
    const outcome = await ocr.recognize(pngClaimingSize(60_000, 60_000));
    assert.equal(outcome.kind, 'too_large');
  });

  test('the engine is still serving after the bad inputs', async () => {
    assertReads(await ocr.recognize(await renderTextImage(SAMPLE_LINES)), expected, 'after bad inputs');
    assert.equal(ocr.stats().replaced, 0, 'bad inputs were refused before reaching an engine');
  });

  test('an aborted signal rejects with its reason', async () => {
    await assert.rejects(ocr.recognize(await blankImage(), AbortSignal.abort()), { name: 'AbortError' });
  });

  test('a tiny time limit gives timeout, and the engine is replaced', async () => {
    const hurried = createImageOcr({ workers: 1, timeoutMs: 1 });
    try {
      assert.deepEqual(await hurried.recognize(await renderTextImage(SAMPLE_LINES)), { kind: 'timeout' });
      assert.equal(hurried.stats().replaced, 1);
    } finally {
      await hurried.close();
    }
  });

  test('refuses with OcrBusyError before decoding when the queue is full', async () => {
    const busy = createImageOcr({ workers: 1, maxQueue: 1 });
    try {
      const image = await renderTextImage(SAMPLE_LINES);
      await busy.warm();
      const accepted = [busy.recognize(image), busy.recognize(image)];
      // Both are admitted (the queue was empty when they arrived); wait until one waits.
      for (let waited = 0; busy.stats().queued < 1 && waited < 20_000; waited += 10) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await assert.rejects(busy.recognize(image), OcrBusyError);
      const outcomes = await Promise.all(accepted);
      assert.deepEqual(outcomes.map((outcome) => outcome.kind), ['ok', 'ok']);
    } finally {
      await busy.close();
    }
  });
});

describe('reads per page (the orientation hint)', { skip }, () => {
  let counted: ImageOcr;
  let reads = 0;

  before(async () => {
    // The real engine, its recognitions counted.
    counted = createImageOcr({
      workers: 1,
      spawnEngine: async (onCrash) => {
        const engine = await spawnEngine(onCrash);
        const recognize = engine.recognize.bind(engine);
        engine.recognize = (...args: Parameters<typeof recognize>) => {
          reads += 1;
          return recognize(...args);
        };
        return engine;
      },
    });
    await counted.warm();
  });

  after(async () => {
    await counted?.close();
  });

  async function readsOf(image: Buffer, truth: string, label: string): Promise<number> {
    reads = 0;
    assertReads(await counted.recognize(image), truth, label);
    return reads;
  }

  test('a page upside down or turned 270° is turned before its first read: one read, as upright and 90° pages', async () => {
    const page = await renderPage({ columns: [COLUMN_ONE, COLUMN_TWO], fontSize: 20 });
    const truth = [...COLUMN_ONE, ...COLUMN_TWO].join('\n');
    assert.equal(await readsOf(page, truth, 'upright'), 1);
    for (const degrees of [90, 180, 270] as const) {
      assert.equal(await readsOf(await rotatedPixels(page, degrees), truth, `${degrees}°`), 1, `${degrees}°`);
    }
  });

  test('a page upside down that gives the hint no verdict (all capitals) is still read, by the turned second read', async () => {
    const capitals = ['ALL GOODS REMAIN THE PROPERTY OF THE', 'SELLER UNTIL PAID IN FULL. NO RETURNS', 'WITHOUT A RECEIPT. PRICES INCLUDE VAT.'];
    const page = await renderPage({ columns: [capitals], fontFamily: 'DejaVu Sans', fontSize: 22 });
    assert.equal(await readsOf(await rotatedPixels(page, 180), capitals.join('\n'), 'capitals, upside down'), 2);
  });
});

describe('offline engine', { skip }, () => {
  test('model and engine resolve to installed packages', () => {
    const model = modelDirectory();
    assert.ok(model.includes(path.join('node_modules', '@tesseract.js-data', 'eng', '4.0.0_best_int')), model);
    const core = engineCoreFile();
    assert.ok(core.includes(path.join('node_modules', 'tesseract.js-core')), core);
  });

  test('works with all network access refused, and writes nothing to the working directory', () => {
    const scripts = mkdtempSync(path.join(tmpdir(), 'ocr-offline-scripts-'));
    const workingDirectory = mkdtempSync(path.join(tmpdir(), 'ocr-offline-cwd-'));
    try {
      // Loaded into the main thread and into every worker thread (tesseract.js runs in those).
      const refuseNetwork = path.join(scripts, 'refuse-network.mjs');
      writeFileSync(
        refuseNetwork,
        `import net from 'node:net';
        const refuse = () => { throw new Error('network access attempted'); };
        globalThis.fetch = refuse;
        net.Socket.prototype.connect = refuse;`,
      );
      // Control: a file worker thread sees the refusal too, so the check covers the engine threads.
      const probeWorker = path.join(scripts, 'probe-worker.mjs');
      writeFileSync(
        probeWorker,
        `import { parentPort } from 'node:worker_threads';
        try { await fetch('http://127.0.0.1:9/'); parentPort.postMessage('fetched'); }
        catch (error) { parentPort.postMessage(error.message); }`,
      );
      const here = path.dirname(fileURLToPath(import.meta.url));
      const ocrModule = pathToFileURL(path.resolve(here, '../../src/extract/image/index.ts')).href;
      const fixtures = pathToFileURL(path.resolve(here, '../support/image-fixtures.ts')).href;
      const main = path.join(scripts, 'main.mjs');
      writeFileSync(
        main,
        `import { Worker } from 'node:worker_threads';
        import { createImageOcr } from ${JSON.stringify(ocrModule)};
        import { renderTextImage, SAMPLE_LINES } from ${JSON.stringify(fixtures)};
        const probe = await new Promise((resolve) => new Worker(${JSON.stringify(probeWorker)}).once('message', resolve));
        const ocr = createImageOcr({ workers: 1 });
        const outcome = await ocr.recognize(await renderTextImage(SAMPLE_LINES));
        await ocr.close();
        console.log(JSON.stringify({ probe, outcome }));`,
      );
      const child = spawnSync(process.execPath, ['--import', pathToFileURL(refuseNetwork).href, main], {
        cwd: workingDirectory,
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(child.status, 0, child.stderr);
      const { probe, outcome } = JSON.parse(child.stdout.trim().split('\n').at(-1)!);
      assert.equal(probe, 'network access attempted');
      assert.ok(characterErrorRate(textOf(outcome), expected) <= MAX_CER);
      assert.deepEqual(readdirSync(workingDirectory), [], 'no traineddata cache written');
    } finally {
      rmSync(scripts, { recursive: true, force: true });
      rmSync(workingDirectory, { recursive: true, force: true });
    }
  });
});

describe("an operator's model (OCR_MODEL_DIR)", { skip }, () => {
  let folder: string;
  before(() => {
    folder = mkdtempSync(path.join(tmpdir(), 'ocr-model-'));
  });
  after(() => {
    rmSync(folder, { recursive: true, force: true });
  });

  test('a traineddata file is checked for an LSTM network in its table of components', () => {
    const bundled = gunzipSync(readFileSync(bundledModel().file));
    assert.equal(hasLstmModel(bundled), true);
    // Tesseract 3 data: fewer components, or the LSTM entry marked absent (-1).
    const table = (components: number, lstmOffset: bigint): Uint8Array => {
      const data = Buffer.alloc(4 + components * 8 + 64);
      data.writeUInt32LE(components, 0);
      for (let i = 0; i < components; i += 1) data.writeBigInt64LE(i === 17 ? lstmOffset : -1n, 4 + i * 8);
      return data;
    };
    assert.equal(hasLstmModel(table(15, 0n)), false);
    assert.equal(hasLstmModel(table(24, -1n)), false);
    assert.equal(hasLstmModel(table(24, 200n)), true);
    assert.equal(hasLstmModel(new Uint8Array(3)), false);
  });

  test('a folder without a model, or with a file that is no LSTM model, stops the start, naming the variable', () => {
    assert.throws(() => imageOcrOptionsFromEnv({ OCR_MODEL_DIR: folder }), (error: Error & { variable?: string }) => {
      assert.equal(error.variable, 'OCR_MODEL_DIR');
      assert.match(error.message, /^OCR_MODEL_DIR: no eng\.traineddata or eng\.traineddata\.gz in /);
      return true;
    });
    writeFileSync(path.join(folder, 'eng.traineddata'), Buffer.alloc(512));
    assert.throws(() => imageOcrOptionsFromEnv({ OCR_MODEL_DIR: folder }), /eng\.traineddata holds no LSTM model/);
    rmSync(path.join(folder, 'eng.traineddata'));
  });

  test('an uncompressed eng.traineddata in the folder is what the engines read', async () => {
    writeFileSync(path.join(folder, 'eng.traineddata'), gunzipSync(readFileSync(bundledModel().file)));
    const { model } = imageOcrOptionsFromEnv({ OCR_MODEL_DIR: ` ${folder} ` });
    assert.deepEqual(model, { directory: folder, file: path.join(folder, 'eng.traineddata'), gzip: false });
    const ocr = createImageOcr({ workers: 1, model });
    try {
      assertReads(await ocr.recognize(await renderTextImage(SAMPLE_LINES)), expected, 'operator model');
    } finally {
      await ocr.close();
    }
  });
});
