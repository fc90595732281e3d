import { QueueFullError } from '../../core/busy.ts';

/**
 * Result of OCR on one image. Every kind but 'ok' is the client's image being unusable (the route
 * answers 400 "Unable to process the image." and charges nothing); 'ok' with empty text is an
 * image that was read and holds no text.
 */
export type OcrOutcome =
  | { kind: 'ok'; text: string }
  /** Not an image any decoder here reads, damaged, or the engine could not read it. */
  | { kind: 'invalid_image'; reason: string }
  /** Declares more pixels than allowed (decompression-bomb guard); refused before decoding. */
  | { kind: 'too_large'; reason: string }
  /** Decoding or recognition ran past the time limit; the engine that ran it was replaced. */
  | { kind: 'timeout' };

/** The OCR engines' wait queue is full (`QueueFullError`: 503, no charge). */
export class OcrBusyError extends QueueFullError {
  constructor(queued: number) {
    super('OCR_BUSY', `OCR queue is full (${queued} images waiting)`);
  }
}

/** Thrown for requests made to, or still waiting in, an OCR engine that is being closed. */
export class OcrClosedError extends Error {
  readonly code = 'OCR_CLOSED';

  constructor() {
    super('OCR engine is closed');
    this.name = 'OcrClosedError';
  }
}
