/** The OCR engines, as a capability: OCR_WORKERS, OCR_TIMEOUT_MS, OCR_MAX_PIXELS, OCR_RECYCLE_AFTER, OCR_MAX_QUEUE, OCR_MODEL_DIR. */
import type { Capability } from '../../core/capability.ts';
import { createImageOcr, readOcrOptions, type ImageOcr, type ImageOcrOptions } from './index.ts';

export const ocrCapability: Capability<ImageOcrOptions, ImageOcr> = {
  name: 'ocr',
  settings: readOcrOptions,
  start: (options) => createImageOcr(options),
  close: (ocr) => ocr.close(),
};
