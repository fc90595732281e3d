import sharp from 'sharp';
import type { Metadata, SharpOptions } from 'sharp';

/**
 * Decoding and preprocessing of untrusted images (encoded bytes, or a raw bitmap such as a
 * rendered PDF page) into the one form the OCR engine reads best: EXIF-upright, 8-bit greyscale
 * on white, uneven lighting flattened, contrast stretched, bounded in size, lossless PNG.
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
  /** 8-bit greyscale PNG. */
  png: Buffer;
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
 * Resolution written into the PNG. Tesseract warns (on the worker's stdout) about missing or
 * implausible resolutions, and its results did not change between 72 and 300 dpi in our
 * measurements, so one fixed, plausible value keeps the logs quiet.
 */
const OCR_DENSITY_DPI = 300;

/** PNG compression is a cost paid twice (encode here, decode in the engine) for a buffer that never leaves memory. */
const PNG_OPTIONS = { compressionLevel: 1 } as const;

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
    const png = await flattenLighting(grey.data, grey.info.width, grey.info.height);
    return { kind: 'ok', png, width: grey.info.width, height: grey.info.height, format: source.format };
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
async function flattenLighting(grey: Buffer, width: number, height: number): Promise<Buffer> {
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
  const page = darkGround ? await sharp(grey, { raw }).negate().toColourspace('b-w').raw().toBuffer() : grey;
  // The inverted page's brightest is the original's darkest.
  const paper = darkGround ? invert(darkest) : brightest;

  const background = await sharp(paper, { raw: small })
    .blur(PAPER_BLUR_SIGMA)
    .resize({ width, height, fit: 'fill', kernel: 'cubic' })
    // Colour dodge with the inverted background computes page / background.
    .negate()
    .toColourspace('b-w')
    .raw()
    .toBuffer();
  const divided = await sharp(page, { raw })
    .composite([{ input: background, raw, blend: 'colour-dodge' }])
    .toColourspace('b-w')
    .raw()
    .toBuffer();
  return sharp(divided, { raw }).normalise().toColourspace('b-w').withDensity(OCR_DENSITY_DPI).png(PNG_OPTIONS).toBuffer();
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
  const rows = new Uint8Array(pixels.length);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      let max = 0;
      for (let dx = Math.max(0, x - radius); dx <= Math.min(width - 1, x + radius); dx += 1) max = Math.max(max, pixels[y * width + dx]);
      rows[y * width + x] = max;
    }
  }
  const out = new Uint8Array(pixels.length);
  for (let x = 0; x < width; x += 1) {
    for (let y = 0; y < height; y += 1) {
      let max = 0;
      for (let dy = Math.max(0, y - radius); dy <= Math.min(height - 1, y + radius); dy += 1) max = Math.max(max, rows[dy * width + x]);
      out[y * width + x] = max;
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
  const { data: png, info } = await sharp(image.png)
    .resize({ width, kernel: 'lanczos3' })
    .withDensity(OCR_DENSITY_DPI)
    .png(PNG_OPTIONS)
    .toBuffer({ resolveWithObject: true });
  return { kind: 'ok', png, width: info.width, height: info.height, format: image.format };
}

function classifySharpError(error: unknown): Exclude<NormalizeOutcome, NormalizedImage> {
  const message = error instanceof Error ? error.message : String(error);
  if (/exceeds pixel limit/i.test(message)) return { kind: 'too_large', reason: message };
  if (/timeout/i.test(message)) return { kind: 'timeout' };
  return { kind: 'invalid_image', reason: message };
}
