import sharp from 'sharp';
import type { Metadata } from 'sharp';

/**
 * Decoding and preprocessing of untrusted image bytes into the one form the OCR engine reads
 * best: upright, 8-bit greyscale on white, contrast stretched, bounded in size, lossless PNG.
 */

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

export async function normalizeImage(data: Uint8Array, limits: NormalizeLimits): Promise<NormalizeOutcome> {
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
  if (width * firstPageHeight > limits.maxInputPixels) {
    return {
      kind: 'too_large',
      reason: `${width}x${firstPageHeight} exceeds the limit of ${limits.maxInputPixels} pixels`,
    };
  }

  try {
    const { data: png, info } = await sharp(data, {
      // Enforced again by libvips itself, in case a decoder disagrees with the header read above.
      limitInputPixels: limits.maxInputPixels,
      // sharp's advice for untrusted input: a file libvips has to warn about is refused.
      failOn: 'warning',
      // Applies the EXIF orientation, so phone photos taken sideways arrive upright.
      autoOrient: true,
    })
      .timeout({ seconds: Math.max(1, Math.ceil(limits.timeoutMs / 1000)) })
      // Transparent pixels become white rather than black, so dark text on a transparent
      // background stays readable.
      .flatten({ background: '#ffffff' })
      .toColourspace('b-w')
      .resize({ width: limits.maxSide, height: limits.maxSide, fit: 'inside', withoutEnlargement: true })
      .normalise()
      .withDensity(OCR_DENSITY_DPI)
      .png(PNG_OPTIONS)
      .toBuffer({ resolveWithObject: true });
    return { kind: 'ok', png, width: info.width, height: info.height, format: format ?? 'unknown' };
  } catch (error) {
    return classifySharpError(error);
  }
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
