/** The PDF extractor, as a capability: PDF_THREADS, PDF_TIMEOUT_MS and PDF_MAX_HEAP_MB. */
import type { Capability } from '../../core/capability.ts';
import { ConfigError } from '../../core/env.ts';
import { createPdfExtractor, MIN_PDF_HEAP_MB, type PdfExtractor, type PdfExtractorOptions } from './extractor.ts';

export const pdfCapability: Capability<PdfExtractorOptions, PdfExtractor> = {
  name: 'pdf',
  settings(env) {
    const maxHeapMb = env.positiveInteger('PDF_MAX_HEAP_MB');
    if (maxHeapMb !== undefined && maxHeapMb < MIN_PDF_HEAP_MB) {
      throw new ConfigError(`PDF_MAX_HEAP_MB must be at least ${MIN_PDF_HEAP_MB} (got ${maxHeapMb}): a smaller heap cannot run the PDF engine.`, 'PDF_MAX_HEAP_MB');
    }
    return { threads: env.positiveInteger('PDF_THREADS'), timeoutMs: env.positiveInteger('PDF_TIMEOUT_MS'), maxHeapMb };
  },
  start: (options) => createPdfExtractor(options),
  close: (extractor) => extractor.close(),
};
