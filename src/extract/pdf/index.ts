/** PDF text extraction for /v1/pdf: a worker-thread pool running pdf.js. */
export { createPdfExtractor, MIN_PDF_HEAP_MB, PDF_EXTRACTOR_DEFAULTS } from './extractor.ts';
export type { PdfExtractor, PdfExtractorOptions } from './extractor.ts';
export type { PdfMetadata, PdfOutcome, PdfPage, PdfResult } from './types.ts';
