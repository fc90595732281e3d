/**
 * Thrown when a pool's wait queue is full: the server is overloaded, the input is not at fault
 * (suggested answer: 503, no charge). `code` names the queue (`OCR_BUSY`, `PDF_BUSY`).
 */
export class QueueFullError extends Error {
  readonly code: string;

  constructor(code: string, message: string) {
    super(message);
    this.code = code;
    this.name = new.target.name;
  }
}
