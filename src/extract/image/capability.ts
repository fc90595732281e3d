/** The OCR engines, as a capability: OCR_WORKERS, OCR_TIMEOUT_MS, OCR_MAX_PIXELS, OCR_RECYCLE_AFTER, OCR_MAX_QUEUE, OCR_MODEL_DIR, POOL_USER_CONCURRENCY. */
import type { Capability } from '../../core/capability.ts';
import type { TenantLeases } from '../../core/fair-limiter.ts';
import { createImageOcr, readOcrOptions, type ImageOcr, type ImageOcrOptions } from './index.ts';

export const ocrCapability: Capability<ImageOcrOptions, ImageOcr, { leases?: TenantLeases } | void> = {
  name: 'ocr',
  settings: readOcrOptions,
  // Scaled mode: the per-user bound is shared by the replicas.
  start: (options, deps) => createImageOcr({ ...options, leases: deps?.leases }),
  close: (ocr) => ocr.close(),
};
