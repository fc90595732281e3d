/** PDF text extraction for /v1/pdf: a worker-thread pool running PDFium as WebAssembly. */
export { createPdfExtractor, MIN_PDF_HEAP_MB, MIN_PDF_MEMORY_MB, PDF_EXTRACTOR_DEFAULTS } from './extractor.ts';
export type { PdfExtractor, PdfExtractorOptions, RenderOptions } from './extractor.ts';
export { PdfBusyError, PdfRenderError } from './types.ts';
export type { PdfCount, PdfMetadata, PdfOutcome, PdfPage, PdfResult, RenderedPage } from './types.ts';
