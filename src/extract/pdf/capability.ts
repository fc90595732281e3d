/** The PDF extractor, as a capability: PDF_THREADS, PDF_TIMEOUT_MS, PDF_MAX_HEAP_MB, PDF_MAX_MEMORY_MB, PDF_MAX_QUEUE, PDF_MAX_QUEUE_MB and POOL_USER_CONCURRENCY. */
import type { Capability } from '../../core/capability.ts';
import { ConfigError } from '../../core/env.ts';
import type { TenantLeases } from '../../core/fair-limiter.ts';
import { createPdfExtractor, MIN_PDF_HEAP_MB, MIN_PDF_MEMORY_MB, type PdfExtractor, type PdfExtractorOptions } from './extractor.ts';

const mebibytes = (value: number | undefined) => (value === undefined ? undefined : value * 2 ** 20);

export const pdfCapability: Capability<PdfExtractorOptions, PdfExtractor, { leases?: TenantLeases } | void> = {
  name: 'pdf',
  settings(env) {
    const maxHeapMb = env.positiveInteger('PDF_MAX_HEAP_MB');
    if (maxHeapMb !== undefined && maxHeapMb < MIN_PDF_HEAP_MB) {
      throw new ConfigError(`PDF_MAX_HEAP_MB must be at least ${MIN_PDF_HEAP_MB} (got ${maxHeapMb}): a smaller heap cannot start a PDF thread.`, 'PDF_MAX_HEAP_MB');
    }
    const maxMemoryMb = env.positiveInteger('PDF_MAX_MEMORY_MB');
    if (maxMemoryMb !== undefined && (maxMemoryMb < MIN_PDF_MEMORY_MB || maxMemoryMb > 2048)) {
      throw new ConfigError(`PDF_MAX_MEMORY_MB must be between ${MIN_PDF_MEMORY_MB} and 2048 (got ${maxMemoryMb}): the PDF engine's memory ceiling.`, 'PDF_MAX_MEMORY_MB');
    }
    return {
      threads: env.positiveInteger('PDF_THREADS'),
      timeoutMs: env.positiveInteger('PDF_TIMEOUT_MS'),
      maxHeapMb,
      maxMemoryMb,
      maxQueue: env.positiveInteger('PDF_MAX_QUEUE'),
      maxQueueBytes: mebibytes(env.positiveInteger('PDF_MAX_QUEUE_MB')),
      // Unset: half the threads, at least one.
      userConcurrency: env.positiveInteger('POOL_USER_CONCURRENCY'),
    };
  },
  // Scaled mode: the per-user bound is shared by the replicas.
  start: (options, deps) => createPdfExtractor({ ...options, leases: deps?.leases }),
  close: (extractor) => extractor.close(),
};
