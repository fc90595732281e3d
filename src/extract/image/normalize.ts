import sharp from 'sharp';
import type { Metadata, SharpOptions } from 'sharp';

/**
 * Decoding and preprocessing of untrusted images (encoded bytes, or a raw bitmap such as a
 * rendered PDF page) into the one form the OCR engine reads best: EXIF-upright, 8-bit greyscale
 * on white, uneven lighting flattened, contrast stretched, bounded in size, handed to the engine
 * as an uncompressed greyscale bitmap (PGM).
 */

/** Uncompressed pixels, row by row, `channels` bytes per pixel (grey, RGB or RGBA). */
export interface RawBitmap {
  pixels: Uint8Array;
  width: number;
  height: number;
  channels: 1 | 3 | 4;
}

/** What recognize() accepts: the bytes of an image file, or a raw bitmap. */
export type ImageInput = Uint8Array | RawBitmap;

export interface NormalizeLimits {
  /** Inputs whose header declares more pixels (width × height) are refused before decoding. */
  maxInputPixels: number;
  /** Longest side, in pixels, of the image handed to OCR; larger images are scaled down. */
  maxSide: number;
  /** Time limit for decoding and preprocessing (libvips counts whole seconds, so it is rounded up). */
  timeoutMs: number;
}

export interface NormalizedImage {
  kind: 'ok';
  /** 8-bit greyscale pixels, row by row, one byte a pixel. */
  pixels: Uint8Array;
  width: number;
  height: number;
  /** Format sharp detected in the input (png, jpeg, webp, gif, tiff, heif, svg...). */
  format: string;
}

export type NormalizeOutcome =
  | NormalizedImage
  | { kind: 'invalid_image'; reason: string }
  | { kind: 'too_large'; reason: string }
  | { kind: 'timeout' };

/**
 * The image as the engine reads it: a binary PGM (P5), header and pixels. Leptonica reads it
 * without decoding anything, where a PNG cost an encode here and a decode in the WebAssembly
 * engine for a buffer that never leaves memory. PGM carries no resolution: the engine is given
 * one (`user_defined_dpi`, engine.ts).
 */
export function engineImage(image: NormalizedImage): Buffer {
  const header = Buffer.from(`P5\n${image.width} ${image.height}\n255\n`, 'latin1');
  return Buffer.concat([header, image.pixels]);
}

/** The image turned by 180° (an upside-down page read the right way up): the pixels in reverse order. */
export function turnedUpsideDown(image: NormalizedImage): NormalizedImage {
  return { ...image, pixels: image.pixels.slice().reverse() };
}

export async function normalizeImage(input: ImageInput, limits: NormalizeLimits): Promise<NormalizeOutcome> {
  const source = input instanceof Uint8Array ? await encodedSource(input, limits) : rawSource(input, limits);
  if (source.kind !== 'ok') return source;
  try {
    const grey = await sharp(source.data, source.options)
      .timeout({ seconds: Math.max(1, Math.ceil(limits.timeoutMs / 1000)) })
      // Transparent pixels become white rather than black, so dark text on a transparent
      // background stays readable.
      .flatten({ background: '#ffffff' })
      .toColourspace('b-w')
      .resize({ width: limits.maxSide, height: limits.maxSide, fit: 'inside', withoutEnlargement: true })
      .raw()
      .toBuffer({ resolveWithObject: true });
    const pixels = await flattenLighting(grey.data, grey.info.width, grey.info.height);
    return { kind: 'ok', pixels, width: grey.info.width, height: grey.info.height, format: source.format };
  } catch (error) {
    return classifySharpError(error);
  }
}

interface Source {
  kind: 'ok';
  data: Uint8Array;
  options: SharpOptions;
  format: string;
}

/** Header check of encoded bytes: refused from the declared size before any pixel is decoded. */
async function encodedSource(data: Uint8Array, limits: NormalizeLimits): Promise<Source | Exclude<NormalizeOutcome, NormalizedImage>> {
  if (data.byteLength === 0) return { kind: 'invalid_image', reason: 'the image is empty' };
  let metadata: Metadata;
  try {
    // Reads the header only (hence no pixel limit here): dimensions are known before a single
    // pixel is allocated, and the refusal below can name them.
    metadata = await sharp(data, { limitInputPixels: false }).metadata();
  } catch (error) {
    return classifySharpError(error);
  }
  const { width, height, format } = metadata;
  if (!width || !height) return { kind: 'invalid_image', reason: `no dimensions in the ${format} header` };
  // Multi-page inputs (GIF, TIFF) report the height of all pages; only the first page is read.
  const firstPageHeight = metadata.pageHeight ?? height;
  const tooLarge = pixelLimit(width, firstPageHeight, limits);
  if (tooLarge) return tooLarge;
  const options: SharpOptions = {
    // Enforced again by libvips itself, in case a decoder disagrees with the header read above.
    limitInputPixels: limits.maxInputPixels,
    // sharp's advice for untrusted input: a file libvips has to warn about is refused.
    failOn: 'warning',
    // Applies the EXIF orientation, so phone photos taken sideways arrive upright.
    autoOrient: true,
  };
  return { kind: 'ok', data, options, format: format ?? 'unknown' };
}

/** A raw bitmap is checked for consistent dimensions: sharp would read past a short buffer's meaning. */
function rawSource(bitmap: RawBitmap, limits: NormalizeLimits): Source | Exclude<NormalizeOutcome, NormalizedImage> {
  const { pixels, width, height, channels } = bitmap;
  if (!(pixels instanceof Uint8Array)) return { kind: 'invalid_image', reason: 'raw pixels must be a Uint8Array' };
  if (!Number.isSafeInteger(width) || !Number.isSafeInteger(height) || width < 1 || height < 1) {
    return { kind: 'invalid_image', reason: `raw bitmap dimensions must be positive integers, got ${width}x${height}` };
  }
  if (channels !== 1 && channels !== 3 && channels !== 4) {
    return { kind: 'invalid_image', reason: `raw bitmap channels must be 1, 3 or 4, got ${String(channels)}` };
  }
  const tooLarge = pixelLimit(width, height, limits);
  if (tooLarge) return tooLarge;
  if (pixels.byteLength !== width * height * channels) {
    return {
      kind: 'invalid_image',
      reason: `raw bitmap of ${width}x${height}x${channels} needs ${width * height * channels} bytes, got ${pixels.byteLength}`,
    };
  }
  return { kind: 'ok', data: pixels, options: { raw: { width, height, channels } }, format: 'raw' };
}

function pixelLimit(width: number, height: number, limits: NormalizeLimits): { kind: 'too_large'; reason: string } | null {
  if (width * height <= limits.maxInputPixels) return null;
  return { kind: 'too_large', reason: `${width}x${height} exceeds the limit of ${limits.maxInputPixels} pixels` };
}

/**
 * The paper's brightness is estimated on a copy whose longest side is this many pixels: cheap at
 * any input size, and fine enough for light that varies across a page, not within a word.
 */
const BACKGROUND_SIDE = 256;
/**
 * Radius of the brightest-pixel filter on that copy (about 1.2% of the page each side, so wider
 * than the strokes and line gaps of body text: every window reaches some paper).
 */
const PAPER_RADIUS = 3;
/** Smooths the filter's blocky steps before the estimate is enlarged. */
const PAPER_BLUR_SIGMA = 2;

/**
 * Divides every pixel by the brightness of the paper around it, then stretches the contrast. A
 * photographed page lit unevenly (a dark corner, a shadow) has paper darker on one side than the
 * text on the other, so no global threshold (what Tesseract applies: Otsu) separates them; after
 * the division the paper is white everywhere and the ink keeps its contrast. On an evenly lit scan
 * the estimate is flat and this is a plain contrast stretch.
 *
 * The paper is the brightest thing near each pixel (a maximum filter, so dense text does not
 * darken the estimate). A page of light text on a dark ground is inverted first, so its ground
 * plays the paper; a dark band on a light page keeps its light text, as its maximum is that text.
 */
async function flattenLighting(grey: Buffer, width: number, height: number): Promise<Uint8Array> {
  const raw = { width, height, channels: 1 as const };
  const scale = Math.min(1, BACKGROUND_SIDE / Math.max(width, height));
  const small = {
    width: Math.max(1, Math.round(width * scale)),
    height: Math.max(1, Math.round(height * scale)),
    channels: 1 as const,
  };
  const reduced = await sharp(grey, { raw })
    .resize({ width: small.width, height: small.height, fit: 'fill' })
    .toColourspace('b-w')
    .raw()
    .toBuffer();
  const brightest = maximumFilter(reduced, small.width, small.height, PAPER_RADIUS);
  const darkest = invert(maximumFilter(invert(reduced), small.width, small.height, PAPER_RADIUS));
  const darkGround = isLightOnDark(reduced, brightest, darkest);
  // The inverted page's brightest is the original's darkest.
  const paper = darkGround ? invert(darkest) : brightest;
  const smoothPaper = await sharp(paper, { raw: small }).blur(PAPER_BLUR_SIGMA).toColourspace('b-w').raw().toBuffer();
  return divideAndStretch(grey, width, height, smoothPaper, small, darkGround);
}

/**
 * Pixels handled between two yields to the event loop: the two passes below run on the main
 * thread, and an image near the 4000 px bound (16 million pixels) must not hold it for long.
 */
const PIXELS_PER_SLICE = 1 << 20;

/** Percentiles of the contrast stretch: the darkest and lightest 1% are clipped, as sharp's normalise() does. */
const STRETCH_LOW = 0.01;
const STRETCH_HIGH = 0.99;

/**
 * Each pixel divided by the paper's brightness around it (`paper`, a small image enlarged on the
 * fly, bilinear), inverted first on a light-on-dark page; then the histogram stretched so that
 * the 1st percentile is black and the 99th white. Two passes over the pixels in plain loops:
 * libvips' composite and normalise, which did the same, work in floating point and colour space
 * conversions, at about ten times the cost.
 */
async function divideAndStretch(
  grey: Uint8Array,
  width: number,
  height: number,
  paper: Uint8Array,
  small: { width: number; height: number },
  invertPage: boolean,
): Promise<Uint8Array> {
  const out = new Uint8Array(width * height);
  const histogram = new Float64Array(256);
  // Where each column falls between two columns of the small image, and how far.
  const column = new Int32Array(width);
  const columnWeight = new Float32Array(width);
  for (let x = 0; x < width; x += 1) {
    const position = Math.min(small.width - 1, Math.max(0, ((x + 0.5) * small.width) / width - 0.5));
    column[x] = Math.min(small.width - 2, Math.floor(position));
    columnWeight[x] = position - column[x];
    if (small.width === 1) {
      column[x] = 0;
      columnWeight[x] = 0;
    }
  }
  const paperRow = new Float32Array(small.width);
  const rowsPerSlice = Math.max(1, Math.floor(PIXELS_PER_SLICE / width));

  for (let y = 0; y < height; y += 1) {
    if (y > 0 && y % rowsPerSlice === 0) await yieldToEventLoop();
    // The paper's brightness along this row, interpolated between two rows of the small image.
    const position = Math.min(small.height - 1, Math.max(0, ((y + 0.5) * small.height) / height - 0.5));
    const above = Math.min(Math.max(0, small.height - 2), Math.floor(position));
    const below = Math.min(small.height - 1, above + 1);
    const rowWeight = position - above;
    for (let i = 0; i < small.width; i += 1) {
      paperRow[i] = paper[above * small.width + i] * (1 - rowWeight) + paper[below * small.width + i] * rowWeight;
    }
    const offset = y * width;
    for (let x = 0; x < width; x += 1) {
      const left = column[x];
      const weight = columnWeight[x];
      const background = small.width === 1 ? paperRow[0] : paperRow[left] * (1 - weight) + paperRow[left + 1] * weight;
      const value = invertPage ? 255 - grey[offset + x] : grey[offset + x];
      const divided = background < 1 ? 255 : Math.min(255, Math.round((value * 255) / background));
      out[offset + x] = divided;
      histogram[divided] += 1;
    }
  }

  const { low, high } = percentiles(histogram, width * height);
  if (high - low < 1) return out;
  const stretch = new Uint8Array(256);
  for (let value = 0; value < 256; value += 1) {
    stretch[value] = Math.min(255, Math.max(0, Math.round(((value - low) * 255) / (high - low))));
  }
  const pixelsPerSlice = rowsPerSlice * width;
  for (let start = 0; start < out.length; start += pixelsPerSlice) {
    if (start > 0) await yieldToEventLoop();
    const end = Math.min(out.length, start + pixelsPerSlice);
    for (let i = start; i < end; i += 1) out[i] = stretch[out[i]];
  }
  return out;
}

/** The grey levels below which 1% and 99% of the pixels fall. */
function percentiles(histogram: Float64Array, count: number): { low: number; high: number } {
  let low = -1;
  let high = 255;
  let seen = 0;
  for (let value = 0; value < 256; value += 1) {
    seen += histogram[value];
    if (low < 0 && seen > count * STRETCH_LOW) low = value;
    if (seen >= count * STRETCH_HIGH) {
      high = value;
      break;
    }
  }
  return { low: Math.max(0, low), high };
}

/** Lets the event loop run between slices of a long pixel loop on the main thread. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Minimum contrast within a window for it to vote on the page's polarity (flat areas do not). */
const POLARITY_MIN_RANGE = 16;

/**
 * Whether the page is light text on a dark ground. Decided by where most pixels sit within their
 * neighbourhood's range: the ground is the majority, so on a light page most pixels are near the
 * local maximum, and on a dark one near the local minimum. Unlike the mean brightness, this does
 * not mistake a dimly lit photo of a white page for a dark page.
 */
function isLightOnDark(pixels: Uint8Array, brightest: Uint8Array, darkest: Uint8Array): boolean {
  let nearDarkest = 0;
  let nearBrightest = 0;
  for (let i = 0; i < pixels.length; i += 1) {
    if (brightest[i] - darkest[i] < POLARITY_MIN_RANGE) continue;
    if (brightest[i] - pixels[i] < pixels[i] - darkest[i]) nearBrightest += 1;
    else nearDarkest += 1;
  }
  return nearDarkest > nearBrightest;
}

function invert(pixels: Uint8Array): Uint8Array {
  const out = new Uint8Array(pixels.length);
  for (let i = 0; i < pixels.length; i += 1) out[i] = 255 - pixels[i];
  return out;
}

/** Brightest value in the (2r+1)² window around each pixel: rows first, then columns. */
export function maximumFilter(pixels: Uint8Array, width: number, height: number, radius: number): Uint8Array {
  const rows = maximumAlong(pixels, { lines: height, length: width, lineStep: width, step: 1 }, radius);
  return maximumAlong(rows, { lines: width, length: height, lineStep: 1, step: width }, radius);
}

/**
 * Brightest value within `radius` along each line: `lines` lines of `length` pixels, line `n`
 * starting at `n × lineStep`, its pixels `step` apart (rows: 1 apart; columns: a row apart).
 */
function maximumAlong(pixels: Uint8Array, shape: { lines: number; length: number; lineStep: number; step: number }, radius: number): Uint8Array {
  const { lines, length, lineStep, step } = shape;
  const out = new Uint8Array(pixels.length);
  for (let line = 0; line < lines; line += 1) {
    const start = line * lineStep;
    for (let i = 0; i < length; i += 1) {
      let max = 0;
      for (let j = Math.max(0, i - radius); j <= Math.min(length - 1, i + radius); j += 1) max = Math.max(max, pixels[start + j * step]);
      out[start + i * step] = max;
    }
  }
  return out;
}

/**
 * Scales a normalised image up by `factor` (Lanczos), for text too small for the OCR model.
 * The caller bounds the factor so the result stays within its size limit.
 */
export async function upscaleImage(image: NormalizedImage, factor: number): Promise<NormalizedImage> {
  const width = Math.round(image.width * factor);
  const { data: pixels, info } = await sharp(image.pixels, { raw: { width: image.width, height: image.height, channels: 1 } })
    .resize({ width, kernel: 'lanczos3' })
    .toColourspace('b-w')
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { kind: 'ok', pixels, width: info.width, height: info.height, format: image.format };
}

function classifySharpError(error: unknown): Exclude<NormalizeOutcome, NormalizedImage> {
  const message = error instanceof Error ? error.message : String(error);
  if (/exceeds pixel limit/i.test(message)) return { kind: 'too_large', reason: message };
  if (/timeout/i.test(message)) return { kind: 'timeout' };
  return { kind: 'invalid_image', reason: message };
}
