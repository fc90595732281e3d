import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { engineImage, maximumFilter, normalizeImage, turnedUpsideDown } from '../../src/extract/image/normalize.ts';
import type { NormalizeLimits, NormalizeOutcome } from '../../src/extract/image/normalize.ts';
import {
  blankImage,
  COLUMN_ONE,
  corruptBytes,
  INVOICE_LINES,
  photographed,
  renderPage,
  pngClaimingSize,
  renderTextImage,
  SAMPLE_LINES,
  sidewaysPhoto,
  truncated,
} from '../support/image-fixtures.ts';

const limits: NormalizeLimits = { maxInputPixels: 50_000_000, maxSide: 4000, timeoutMs: 10_000 };

function assertOk(outcome: NormalizeOutcome): asserts outcome is Extract<NormalizeOutcome, { kind: 'ok' }> {
  assert.equal(outcome.kind, 'ok', JSON.stringify(outcome));
}

describe('normalizeImage', () => {
  for (const format of ['png', 'jpeg', 'webp'] as const) {
    test(`${format} becomes 8-bit greyscale pixels of the same size, handed to the engine as a PGM`, async () => {
      const input = await renderTextImage(SAMPLE_LINES, { format });
      const source = await sharp(input).metadata();
      const outcome = await normalizeImage(input, limits);
      assertOk(outcome);
      assert.equal(outcome.format, format);
      assert.deepEqual([outcome.width, outcome.height], [source.width, source.height]);
      assert.equal(outcome.pixels.length, outcome.width * outcome.height);
      // Binary PGM: magic, width and height, largest value, then the pixels as they are.
      const pgm = engineImage(outcome);
      const header = `P5\n${outcome.width} ${outcome.height}\n255\n`;
      assert.equal(pgm.subarray(0, header.length).toString('latin1'), header);
      assert.ok(pgm.subarray(header.length).equals(outcome.pixels));
    });
  }

  for (const orientation of [6, 8] as const) {
    test(`EXIF orientation ${orientation} is applied: stored portrait pixels come out landscape`, async () => {
      const input = await sidewaysPhoto(SAMPLE_LINES, orientation);
      const stored = await sharp(input).metadata();
      assert.equal(stored.orientation, orientation);
      assert.ok(stored.height! > stored.width!, 'the fixture stores the text sideways');

      const outcome = await normalizeImage(input, limits);
      assertOk(outcome);
      assert.deepEqual([outcome.width, outcome.height], [stored.height, stored.width]);
      // Upright text: the dark pixels sit in the left part of each row (text is left aligned) rather
      // than at the top or bottom of a tall image.
      const upright = await renderTextImage(SAMPLE_LINES, { format: 'png' });
      const expected = await sharp(upright).toColourspace('b-w').normalise().raw().toBuffer();
      const actual = Buffer.from(outcome.pixels);
      assert.equal(actual.length, expected.length);
      assert.ok(meanAbsoluteDifference(actual, expected) < 8, 'normalised pixels match the upright rendering');
    });
  }

  test('a header claiming 60000x60000 pixels is refused as too_large without decoding', async () => {
    const rssBefore = process.memoryUsage().rss;
    const outcome = await normalizeImage(pngClaimingSize(60_000, 60_000), limits);
    assert.deepEqual(outcome, { kind: 'too_large', reason: '60000x60000 exceeds the limit of 50000000 pixels' });
    // Decoding it would need 3.6 GB; refusing it from the header needs nothing noticeable.
    assert.ok(process.memoryUsage().rss - rssBefore < 200 * 1024 * 1024);
  });

  test('the pixel limit is configurable and applies to real images', async () => {
    const input = await blankImage(1200, 1000);
    const outcome = await normalizeImage(input, { ...limits, maxInputPixels: 1_000_000 });
    assert.equal(outcome.kind, 'too_large');
    assertOk(await normalizeImage(input, { ...limits, maxInputPixels: 1_200_000 }));
  });

  test('images longer than the size bound are scaled down, aspect kept', async () => {
    const input = await blankImage(5000, 200);
    const outcome = await normalizeImage(input, { ...limits, maxSide: 4000 });
    assertOk(outcome);
    assert.deepEqual([outcome.width, outcome.height], [4000, 160]);
  });

  test('transparent backgrounds become white, so dark text stays dark on light', async () => {
    const input = await renderTextImage(SAMPLE_LINES, { format: 'png', transparent: true });
    const outcome = await normalizeImage(input, limits);
    assertOk(outcome);
    const [grey] = (await statsOf(outcome)).channels;
    assert.ok(grey.mean > 200, `mostly white, mean ${grey.mean}`);
    assert.ok(grey.min < 50, 'text is dark');
  });

  test('bytes that are no image are invalid_image', async () => {
    const outcome = await normalizeImage(corruptBytes(), limits);
    assert.equal(outcome.kind, 'invalid_image');
  });

  test('an empty body is invalid_image', async () => {
    assert.deepEqual(await normalizeImage(new Uint8Array(0), limits), {
      kind: 'invalid_image',
      reason: 'the image is empty',
    });
  });

  for (const format of ['png', 'jpeg'] as const) {
    test(`a truncated ${format} is invalid_image`, async () => {
      const outcome = await normalizeImage(truncated(await renderTextImage(SAMPLE_LINES, { format })), limits);
      assert.equal(outcome.kind, 'invalid_image');
    });
  }

  test('a raw RGB bitmap is read like the same image encoded', async () => {
    const encoded = await renderTextImage(SAMPLE_LINES);
    const { data, info } = await sharp(encoded).removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const fromRaw = await normalizeImage({ pixels: new Uint8Array(data), width: info.width, height: info.height, channels: 3 }, limits);
    const fromFile = await normalizeImage(encoded, limits);
    assertOk(fromRaw);
    assertOk(fromFile);
    assert.equal(fromRaw.format, 'raw');
    assert.ok(meanAbsoluteDifference(Buffer.from(fromRaw.pixels), Buffer.from(fromFile.pixels)) < 1);
  });

  test('unevenly lit paper comes out white on both its bright and its dark side, the ink dark', async () => {
    const page = await renderPage({ columns: [INVOICE_LINES], fontFamily: 'DejaVu Sans' });
    const photo = await photographed(page, { darkest: 35, noise: 10 });
    const outcome = await normalizeImage(photo, limits);
    assertOk(outcome);
    const { pixels: data, width } = outcome;
    const info = { width, height: outcome.height };
    // Bottom right: the photo's dark corner, below the text (the input's paper there is about 40).
    const corner = (x0: number, y0: number): number => {
      let total = 0;
      for (let y = y0; y < y0 + 10; y += 1) for (let x = x0; x < x0 + 10; x += 1) total += data[y * info.width + x];
      return total / 100;
    };
    assert.ok(corner(5, 5) > 200, `bright corner ${corner(5, 5)}`);
    assert.ok(corner(info.width - 15, info.height - 15) > 200, `dark corner ${corner(info.width - 15, info.height - 15)}`);
    const histogram = await statsOf(outcome);
    assert.ok(histogram.channels[0].min < 60, 'ink stays dark');
  });

  test('light text on a dark ground is turned into dark text on light', async () => {
    const page = await renderPage({ columns: [COLUMN_ONE], ink: '#f4f4f4', paper: '#1d2b4a' });
    const outcome = await normalizeImage(page, limits);
    assertOk(outcome);
    const { channels } = await statsOf(outcome);
    assert.ok(channels[0].mean > 200, `mostly light: mean ${channels[0].mean}`);
  });
});

describe('the normalised image', () => {
  test('turned upside down: the last pixel comes first, and two turns give the image back', async () => {
    const image = { kind: 'ok' as const, pixels: new Uint8Array([1, 2, 3, 4, 5, 6]), width: 3, height: 2, format: 'raw' };
    const turned = turnedUpsideDown(image);
    assert.deepEqual([...turned.pixels], [6, 5, 4, 3, 2, 1]);
    assert.deepEqual([turned.width, turned.height], [3, 2]);
    assert.deepEqual([...image.pixels], [1, 2, 3, 4, 5, 6], 'the original is left as it was');
    assert.deepEqual([...turnedUpsideDown(turned).pixels], [...image.pixels]);
  });

  test('a page near the size bound is prepared without holding the event loop for long', async () => {
    const page = await renderPage({ columns: [COLUMN_ONE, COLUMN_ONE], fontSize: 120 });
    const large = await sharp(page).resize({ width: 4000, height: 3000, fit: 'fill' }).png().toBuffer();
    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 0);
    try {
      assertOk(await normalizeImage(large, limits));
    } finally {
      clearInterval(ticker);
    }
    // 12 million pixels go through the plain loops in slices of about a million, with a turn of the
    // event loop between slices: timers run meanwhile.
    assert.ok(ticks >= 5, `timers ran ${ticks} times during the preparation`);
  });
});

describe('maximumFilter', () => {
  test('each pixel becomes the brightest of its window, edges clipped', () => {
    const pixels = new Uint8Array([0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 5]);
    assert.deepEqual([...maximumFilter(pixels, 4, 3, 1)], [9, 9, 0, 0, 9, 9, 5, 5, 9, 9, 5, 5]);
  });
});

function statsOf(image: { pixels: Uint8Array; width: number; height: number }) {
  return sharp(image.pixels, { raw: { width: image.width, height: image.height, channels: 1 } }).stats();
}

function meanAbsoluteDifference(a: Buffer, b: Buffer): number {
  let total = 0;
  for (let i = 0; i < a.length; i += 1) total += Math.abs(a[i] - b[i]);
  return total / a.length;
}
