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
