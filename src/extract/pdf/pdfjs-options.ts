/**
 * pdf.js document options for text extraction in Node. The data folders are read with fs, so they
 * are plain file paths with a trailing slash (pdf.js appends file names to them).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { CachedDataFiles } from './data-files.ts';

type DocumentInitParameters = NonNullable<Parameters<typeof getDocument>[0]>;

const packageDir = path.dirname(fileURLToPath(import.meta.resolve('pdfjs-dist/package.json')));

function folder(name: string): string {
  return path.join(packageDir, name) + path.sep;
}

/** pdf.js's VerbosityLevel.ERRORS: warnings about recoverable damage would flood the logs. */
export const PDFJS_VERBOSITY = 0;

export const PDFJS_DATA_FOLDERS = {
  /** Predefined CMaps, needed to map CJK CID fonts to Unicode. */
  cMapUrl: folder('cmaps'),
  /** The 14 standard fonts' metrics and glyph data, for PDFs that reference them without embedding. */
  standardFontDataUrl: folder('standard_fonts'),
  /** JBIG2/JPEG 2000/colour decoders, used when a page's resources need them. */
  wasmUrl: folder('wasm'),
} as const;

export function documentOptions(data: Uint8Array): DocumentInitParameters {
  return {
    data,
    ...PDFJS_DATA_FOLDERS,
    cMapPacked: true,
    // Reads each data file once per thread instead of once per document.
    BinaryDataFactory: CachedDataFiles,
    // Nothing is rendered: no @font-face, no system font lookups, no canvas, no XFA forms.
    disableFontFace: true,
    useSystemFonts: false,
    isOffscreenCanvasSupported: false,
    isImageDecoderSupported: false,
    enableXfa: false,
    // The whole file is in memory already.
    disableRange: true,
    disableStream: true,
    disableAutoFetch: true,
    verbosity: PDFJS_VERBOSITY,
  };
}
