import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { normalizeImage } from '../../src/extract/image/normalize.ts';
import type { NormalizedImage } from '../../src/extract/image/normalize.ts';
import { orientationEvidence, orientationHint } from '../../src/extract/image/orientation.ts';
import type { OrientationHint } from '../../src/extract/image/orientation.ts';
import { blankImage, canRenderText, COLUMN_ONE, COLUMN_TWO, INVOICE_LINES, photographed, renderPage, rotatedPixels } from '../support/image-fixtures.ts';

/**
 * The orientation hint on pages generated here, in all four orientations. It may say `unknown`;
 * it must never name the wrong way up on these (a wrong hint costs the service a second read).
 */

const skip = (await canRenderText()) ? false : 'no font renders text here (install fonts-dejavu-core)';

/** Sentences of a kind the fixtures' columns do not use: a notice, with figures and capitals. */
const NOTICE = [
  'The committee met on Tuesday to review the',
  'budget for the coming year. Several members',
  'argued that spending on public parks should',
  'be increased, pointing to the 1,200 families',
  'who moved into the district since the new',
  'railway station opened in September 2021.',
];

async function normalized(bytes: Buffer): Promise<NormalizedImage> {
  const image = await normalizeImage(bytes, { maxInputPixels: 50_000_000, maxSide: 4000, timeoutMs: 10_000 });
  assert.equal(image.kind, 'ok');
  return image as NormalizedImage;
}

async function hintsByRotation(page: Buffer): Promise<Record<number, OrientationHint>> {
  const hints: Record<number, OrientationHint> = {};
  for (const degrees of [0, 90, 180, 270] as const) {
    hints[degrees] = await orientationHint(await normalized(degrees === 0 ? page : await rotatedPixels(page, degrees)));
  }
  return hints;
}

/** Upright and turned 90° clockwise are read as they stand; upside down and 270° are turned first. */
const RIGHT = { 0: 'as_is', 90: 'as_is', 180: 'turn_180', 270: 'turn_180' };
const UNKNOWN = { 0: 'unknown', 90: 'unknown', 180: 'unknown', 270: 'unknown' };

describe('orientation hint', { skip }, () => {
  for (const fontFamily of ['DejaVu Sans', 'DejaVu Serif', 'Liberation Sans', 'Liberation Serif', 'Liberation Mono']) {
    for (const fontSize of [24, 40]) {
      test(`body text in ${fontFamily} ${fontSize} px, in all four orientations`, async () => {
        assert.deepEqual(await hintsByRotation(await renderPage({ columns: [NOTICE], fontFamily, fontSize })), RIGHT);
      });
    }
    test(`body text in ${fontFamily} 11 px: right or no verdict`, async () => {
      // Lines of small type are a few pixels of extenders; Liberation Mono's give no verdict.
      for (const [degrees, hint] of Object.entries(await hintsByRotation(await renderPage({ columns: [NOTICE], fontFamily, fontSize: 11 })))) {
        assert.ok(hint === 'unknown' || hint === RIGHT[Number(degrees) as 0], `${degrees}°: ${hint}`);
      }
    });
  }

  test('two columns, an invoice, a photographed page, light text on a dark page', async () => {
    assert.deepEqual(await hintsByRotation(await renderPage({ columns: [COLUMN_ONE, COLUMN_TWO], fontSize: 20 })), RIGHT);
    assert.deepEqual(await hintsByRotation(await renderPage({ columns: [INVOICE_LINES], fontFamily: 'DejaVu Sans', fontSize: 22 })), RIGHT);
    assert.deepEqual(await hintsByRotation(await photographed(await renderPage({ columns: [NOTICE], fontSize: 24 }))), RIGHT);
    assert.deepEqual(await hintsByRotation(await renderPage({ columns: [NOTICE], fontSize: 22, ink: '#eeeeee', paper: '#203040' })), RIGHT);
  });

  test('a page that is mostly a figure: right or no verdict, never wrong', async () => {
    const text = await renderPage({ columns: [NOTICE.slice(0, 3)], fontSize: 22 });
    const { width = 0, height = 0 } = await sharp(text).metadata();
    const figure = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height * 4}"><rect width="100%" height="100%" fill="#fff"/>` +
      `<rect x="40" y="${height + 40}" width="${width - 80}" height="${height * 2}" fill="none" stroke="#000" stroke-width="4"/>` +
      `<circle cx="${width / 2}" cy="${height * 2 + 40}" r="${height / 2}" fill="none" stroke="#000" stroke-width="3"/>` +
      `<line x1="40" y1="${height * 2 + 40}" x2="${width - 40}" y2="${height * 2 + 40}" stroke="#000" stroke-width="2"/></svg>`;
    const page = await sharp(Buffer.from(figure)).composite([{ input: text, top: 0, left: 0 }]).png().toBuffer();
    for (const [degrees, hint] of Object.entries(await hintsByRotation(page))) {
      assert.ok(hint === 'unknown' || hint === RIGHT[Number(degrees) as 0], `${degrees}°: ${hint}`);
    }
  });

  test('no verdict without ascenders and descenders to compare: all capitals, a table of figures', async () => {
    const capitals = ['ALL GOODS REMAIN THE PROPERTY OF THE', 'SELLER UNTIL PAID IN FULL. NO RETURNS', 'WITHOUT A RECEIPT. PRICES INCLUDE VAT.', 'SECTION FOUR: TERMS AND CONDITIONS'];
    const figures = ['2019   14,502   3.25%   +120', '2020   15,870   3.40%   +368', '2021   16,204   2.95%   -411', '2022   17,933   3.10%   +729'];
    for (const fontFamily of ['DejaVu Sans', 'Liberation Serif', 'Liberation Mono']) {
      assert.deepEqual(await hintsByRotation(await renderPage({ columns: [capitals], fontFamily, fontSize: 22 })), UNKNOWN, `capitals in ${fontFamily}`);
      assert.deepEqual(await hintsByRotation(await renderPage({ columns: [figures], fontFamily, fontSize: 22 })), UNKNOWN, `figures in ${fontFamily}`);
    }
  });

  test('no verdict on a single line (its letters could be taken for lines) or a blank page', async () => {
    assert.deepEqual(await hintsByRotation(await renderPage({ columns: [['Please keep this door closed']], fontSize: 30 })), UNKNOWN);
    assert.equal(await orientationHint(await normalized(await blankImage())), 'unknown');
  });

  test('pages scanned askew (0.5-4°): right or no verdict, never wrong; a slight skew still gets one', async () => {
    const page = await renderPage({ columns: [NOTICE, NOTICE.slice().reverse()], fontFamily: 'DejaVu Serif', fontSize: 20 });
    const verdicts: Record<number, number> = {};
    for (const skew of [0.5, -1, 2, -4]) {
      const skewed = await sharp(page).rotate(skew, { background: '#ffffff' }).png().toBuffer();
      for (const [degrees, hint] of Object.entries(await hintsByRotation(skewed))) {
        assert.ok(hint === 'unknown' || hint === RIGHT[Number(degrees) as 0], `${skew}° askew, turned ${degrees}°: ${hint}`);
        if (hint !== 'unknown') verdicts[skew] = (verdicts[skew] ?? 0) + 1;
      }
    }
    assert.equal(verdicts[0.5], 4, 'half a degree askew: measured in narrower strips, all four orientations get a verdict');
  });

  test('the evidence: lines found across the direction they run, extenders on the tops’ side', async () => {
    const page = await normalized(await renderPage({ columns: [NOTICE], fontFamily: 'DejaVu Serif', fontSize: 24 }));
    const evidence = await orientationEvidence(page);
    assert.equal(evidence.hint, 'as_is');
    // Six lines, measured in each of the two halves of the page (the first strips tried).
    assert.equal(evidence.horizontal.lines, 12);
    assert.ok(evidence.horizontal.votesBefore >= 10, `lines voting for the top: ${evidence.horizontal.votesBefore}`);
    assert.ok(evidence.horizontal.gapShare > evidence.vertical.gapShare * 1.3);
    assert.ok(evidence.horizontal.before > evidence.horizontal.after * 1.6);
    // The ink of a line of 24 px type spans most of the type size (less the faint edges of its extenders).
    assert.ok(evidence.horizontal.thickness >= 14 && evidence.horizontal.thickness <= 30, String(evidence.horizontal.thickness));
  });

  test('images too small to hold lines give no verdict, without failing', async () => {
    for (const [width, height] of [[1, 1], [3, 200], [200, 3]]) {
      const pixels = new Uint8Array(width * height).fill(255);
      pixels[0] = 0;
      assert.equal(await orientationHint({ pixels, width, height }), 'unknown');
    }
  });
});
