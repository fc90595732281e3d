import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import type { Sharp } from 'sharp';

/**
 * Images generated in code for OCR tests: known text rendered through SVG (librsvg + fontconfig,
 * DejaVu fonts), and the hostile inputs an upload endpoint receives. Plus the character error rate
 * used to compare OCR output with the expected text.
 */

export type RasterFormat = 'png' | 'jpeg' | 'webp';

export const SAMPLE_LINES = [
  'The quick brown fox jumps over the lazy dog.',
  'Invoice 2024-117 total due: 1,284.50 EUR',
];

export interface TextImageOptions {
  format?: RasterFormat;
  /** Font size in pixels. Default 28, comfortably readable. */
  fontSize?: number;
  fontFamily?: string;
  /** Dark text on a transparent background instead of white (PNG and WebP keep the alpha). */
  transparent?: boolean;
}

/** Renders lines of text, black on white, left aligned with a margin. */
export async function renderTextImage(lines: string[], options: TextImageOptions = {}): Promise<Buffer> {
  const { format = 'png', fontSize = 28, fontFamily = 'DejaVu Sans', transparent = false } = options;
  const lineHeight = Math.round(fontSize * 1.5);
  const margin = Math.round(fontSize);
  const width = Math.round(margin * 2 + fontSize * 0.62 * Math.max(...lines.map((line) => line.length)));
  const height = margin * 2 + lineHeight * lines.length;
  const background = transparent ? '' : '<rect width="100%" height="100%" fill="#ffffff"/>';
  const texts = lines
    .map(
      (line, index) =>
        `<text x="${margin}" y="${margin + lineHeight * index + fontSize}" font-family="${fontFamily}" ` +
        `font-size="${fontSize}" fill="#111111">${escapeXml(line)}</text>`,
    )
    .join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${background}${texts}</svg>`;
  return encode(sharp(Buffer.from(svg)), format);
}

/**
 * A JPEG whose pixels are stored sideways with the EXIF orientation that puts them upright
 * (6: display rotated 90° clockwise, 8: 90° counter-clockwise), as phone cameras write them.
 * Only a reader that applies the orientation sees horizontal text.
 */
export async function sidewaysPhoto(lines: string[], orientation: 6 | 8): Promise<Buffer> {
  const upright = await renderTextImage(lines, { format: 'png' });
  const storedTurn = orientation === 6 ? 270 : 90;
  const sideways = await sharp(upright).rotate(storedTurn).png().toBuffer();
  return sharp(sideways).withMetadata({ orientation }).jpeg({ quality: 92 }).toBuffer();
}

/**
 * Text of generated pages: ordinary prose and an invoice, so the model's dictionary helps as it
 * does on real documents. Each column line is short enough for a half-page column.
 */
export const COLUMN_ONE = [
  'Rivers carry more than water. They move',
  'sand, seeds and the history of the hills',
  'they cross, sorting stones by weight as',
  'the current slows. A delta is a record of',
  'every flood that reached the coast.',
];

export const COLUMN_TWO = [
  'Farmers learned early to read the banks.',
  'Dark silt meant a good harvest, while a',
  'bed of gravel warned of a fast channel',
  'that could move in a single season and',
  'take a field with it overnight.',
];

export const INVOICE_LINES = [
  'INVOICE 2024-0117',
  'Northwind Supplies Ltd, 14 Harbour Road',
  'Date: 12 March 2024   Due: 11 April 2024',
  'Office chairs, 4 units          1,240.00',
  'Standing desk, 1 unit             689.50',
  'Delivery and assembly             120.00',
  'Total due (EUR)                 2,049.50',
];

export interface PageLayout {
  /** Blocks of lines; each block is placed at its own x, all starting at the same top. */
  columns: string[][];
  fontSize?: number;
  fontFamily?: string;
  /** Text colour and background (CSS colours). */
  ink?: string;
  paper?: string;
  /** Gap between columns, in font sizes. */
  gutter?: number;
  /** A line across the whole width above the columns. */
  heading?: string;
  /** A band of this colour behind the heading, which is then written in the paper's colour (a banner). */
  headingBand?: string;
}

/** Renders a page of one or more columns side by side, as raw PNG. */
export async function renderPage(layout: PageLayout): Promise<Buffer> {
  const { columns, fontSize = 24, fontFamily = 'DejaVu Serif', ink = '#111111', paper = '#ffffff', gutter = 1.5, heading, headingBand } = layout;
  const lineHeight = Math.round(fontSize * 1.45);
  const margin = Math.round(fontSize * 1.5);
  // Average advance of a character: about 0.6 em in the DejaVu faces, less in Liberation's.
  const advance = /dejavu/i.test(fontFamily) ? 0.6 : 0.5;
  const columnWidth = Math.round(fontSize * advance * Math.max(...columns.flat().map((line) => line.length)));
  const gap = Math.round(fontSize * gutter);
  const width = margin * 2 + columnWidth * columns.length + gap * (columns.length - 1);
  const top = margin + (heading ? lineHeight * 2 : 0);
  const height = top + margin + lineHeight * Math.max(...columns.map((column) => column.length));
  const text = (x: number, y: number, line: string, size = fontSize, fill = ink): string =>
    `<text x="${x}" y="${y}" font-family="${fontFamily}" font-size="${size}" fill="${fill}">${escapeXml(line)}</text>`;
  const parts = [`<rect width="100%" height="100%" fill="${paper}"/>`];
  if (heading && headingBand) parts.push(`<rect x="0" y="${Math.round(margin * 0.4)}" width="100%" height="${Math.round(fontSize * 2.8)}" fill="${headingBand}"/>`);
  if (heading) parts.push(text(margin, margin + fontSize * 1.3, heading, Math.round(fontSize * 1.3), headingBand ? paper : ink));
  columns.forEach((column, index) => {
    const x = margin + index * (columnWidth + gap);
    column.forEach((line, row) => parts.push(text(x, top + lineHeight * row + fontSize, line)));
  });
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${parts.join('')}</svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** The page's pixels turned by `degrees` clockwise, no EXIF tag: only the pixels say how to read it. */
export async function rotatedPixels(image: Buffer, degrees: 90 | 180 | 270): Promise<Buffer> {
  return sharp(image).rotate(degrees).png().toBuffer();
}

/**
 * A page as a phone photographs it: light falling off across the sheet (from white to dark grey),
 * sensor noise, a slight blur, and a JPEG saved at quality 40.
 */
export async function photographed(image: Buffer, options: { darkest?: number; noise?: number } = {}): Promise<Buffer> {
  const { darkest = 70, noise = 18 } = options;
  const { width, height } = await sharp(image).metadata();
  const shade = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    '<defs><radialGradient id="light" cx="15%" cy="10%" r="120%">' +
    `<stop offset="0" stop-color="#ffffff"/><stop offset="1" stop-color="rgb(${darkest},${darkest},${darkest + 10})"/>` +
    '</radialGradient></defs><rect width="100%" height="100%" fill="url(#light)"/></svg>';
  const grain = await sharp(seededNoise(width! * height!, noise), { raw: { width: width!, height: height!, channels: 1 } })
    .toColourspace('srgb')
    .png()
    .toBuffer();
  const lit = await sharp(image)
    .composite([{ input: Buffer.from(shade), blend: 'multiply' }])
    .png()
    .toBuffer();
  return sharp(lit)
    .composite([{ input: grain, blend: 'soft-light' }])
    .blur(0.8)
    .jpeg({ quality: 40 })
    .toBuffer();
}

export interface VariedSample {
  name: string;
  bytes: Buffer;
  /** Expected text in reading order. */
  truth: string;
}

/**
 * A varied set of generated pages for accuracy comparisons: layouts, orientations and lighting the
 * corpus does not cover. Deterministic: the photographed pages' noise comes from a fixed seed.
 */
export async function variedSamples(): Promise<VariedSample[]> {
  const twoColumns = [...COLUMN_ONE, ...COLUMN_TWO].join('\n');
  const invoice = INVOICE_LINES.join('\n');
  const page = await renderPage({ columns: [INVOICE_LINES], fontFamily: 'DejaVu Sans', fontSize: 22 });
  const article = await renderPage({ columns: [COLUMN_ONE, COLUMN_TWO], fontSize: 22 });
  return [
    { name: 'two-columns', bytes: article, truth: twoColumns },
    {
      name: 'two-columns-heading',
      bytes: await renderPage({ columns: [COLUMN_ONE, COLUMN_TWO], fontSize: 20, fontFamily: 'Liberation Serif', gutter: 1, heading: 'What the River Keeps' }),
      truth: `What the River Keeps\n${twoColumns}`,
    },
    { name: 'rotated-90', bytes: await rotatedPixels(page, 90), truth: invoice },
    { name: 'rotated-180', bytes: await rotatedPixels(page, 180), truth: invoice },
    { name: 'rotated-270', bytes: await rotatedPixels(page, 270), truth: invoice },
    { name: 'photo-uneven-light', bytes: await photographed(page), truth: invoice },
    { name: 'photo-dim-corner', bytes: await photographed(page, { darkest: 35, noise: 10 }), truth: invoice },
    { name: 'photo-two-columns', bytes: await photographed(article, { darkest: 90 }), truth: twoColumns },
    {
      name: 'low-contrast',
      bytes: await renderPage({ columns: [INVOICE_LINES], fontFamily: 'Liberation Sans', ink: '#8a8a8a', paper: '#c4c4c4' }),
      truth: invoice,
    },
    {
      name: 'white-on-dark',
      bytes: await renderPage({ columns: [COLUMN_ONE], fontFamily: 'DejaVu Sans', ink: '#f4f4f4', paper: '#1d2b4a' }),
      truth: COLUMN_ONE.join('\n'),
    },
    { name: 'small-text-10px', bytes: await renderPage({ columns: [COLUMN_TWO], fontSize: 10, fontFamily: 'DejaVu Sans' }), truth: COLUMN_TWO.join('\n') },
    {
      name: 'dark-banner',
      bytes: await renderPage({ columns: [INVOICE_LINES.slice(1)], fontFamily: 'DejaVu Sans', fontSize: 22, heading: 'QUARTERLY STATEMENT', headingBand: '#22313f' }),
      truth: `QUARTERLY STATEMENT\n${INVOICE_LINES.slice(1).join('\n')}`,
    },
    { name: 'two-columns-180', bytes: await rotatedPixels(article, 180), truth: twoColumns },
    {
      name: 'long-column-270',
      bytes: await rotatedPixels(await renderPage({ columns: [[...COLUMN_ONE, ...COLUMN_TWO, ...INVOICE_LINES]], fontSize: 18, fontFamily: 'Liberation Serif' }), 270),
      truth: [...COLUMN_ONE, ...COLUMN_TWO, ...INVOICE_LINES].join('\n'),
    },
    { name: 'photo-rotated-180', bytes: await rotatedPixels(await photographed(page), 180), truth: invoice },
  ];
}

/** A plain white image, no text. */
export async function blankImage(width = 640, height = 480, format: RasterFormat = 'png'): Promise<Buffer> {
  return encode(sharp({ create: { width, height, channels: 3, background: '#ffffff' } }), format);
}

/**
 * A valid PNG (signature, header, one tiny data chunk, end) whose header claims width × height.
 * A decoder that trusted it would allocate width × height pixels; it must be refused from the header.
 */
export function pngClaimingSize(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = 0; // greyscale
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(Buffer.alloc(width + 1))), // first row only
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Bytes that are no image format at all. */
export function corruptBytes(length = 4096): Buffer {
  const bytes = Buffer.alloc(length);
  let state = 0x2545f491;
  for (let i = 0; i < length; i += 1) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    bytes[i] = state & 0xff;
  }
  return bytes;
}

/** The first half of a real image: a recognisable header followed by missing data. */
export function truncated(image: Buffer): Buffer {
  return image.subarray(0, Math.floor(image.length / 2));
}

/**
 * Whether text rendering works here (librsvg needs at least one font through fontconfig); the
 * OCR tests skip with a message on a machine without fonts instead of failing on blank images.
 */
export async function canRenderText(): Promise<boolean> {
  const image = await renderTextImage(['Ag'], { fontSize: 32 });
  const { channels } = await sharp(image).stats();
  return channels[0].min < 128;
}

/** Whitespace runs collapsed to one space, edges trimmed: OCR layout spacing is not compared. */
export function normalizeWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Character error rate: edit distance between the recognised and the expected text (whitespace
 * normalised), divided by the expected length. 0 is a perfect read.
 */
export function characterErrorRate(recognised: string, expected: string): number {
  const actual = normalizeWhitespace(recognised);
  const truth = normalizeWhitespace(expected);
  return editDistance(actual, truth) / Math.max(1, truth.length);
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length];
}

/**
 * Grey noise around mid-grey (128) with the given standard deviation, from a fixed seed so every
 * run scores the same image (sum of uniform draws, close to Gaussian).
 */
function seededNoise(length: number, sigma: number): Buffer {
  const pixels = Buffer.alloc(length);
  let state = 0x9e3779b9;
  const uniform = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x100000000;
  };
  // The sum of 4 uniforms has a standard deviation of sqrt(4/12) = 0.577.
  for (let i = 0; i < length; i += 1) pixels[i] = Math.max(0, Math.min(255, Math.round(128 + ((uniform() + uniform() + uniform() + uniform() - 2) / 0.577) * sigma)));
  return pixels;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typeAndData = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData));
  return Buffer.concat([length, typeAndData, crc]);
}

function encode(image: Sharp, format: RasterFormat): Promise<Buffer> {
  if (format === 'jpeg') return image.flatten({ background: '#ffffff' }).jpeg({ quality: 90 }).toBuffer();
  if (format === 'webp') return image.webp({ quality: 90 }).toBuffer();
  return image.png().toBuffer();
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
