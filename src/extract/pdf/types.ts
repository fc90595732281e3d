import { QueueFullError } from '../../core/busy.ts';

/** Wire contract of /v1/pdf: metadata first, then pages; metadata keys in this order. */
export interface PdfMetadata {
  /** Whitespace-separated tokens over all pages. */
  word_count: number;
  /** Unicode code points over all pages' text (line breaks inside a page included). */
  character_count: number;
  page_count: number;
  /** "<kilobytes with two decimals> KB", e.g. "183.52 KB". */
  file_size: string;
  /** The Info CreationDate in UTC as `D:YYYYMMDDHHmmssZ`; absent when missing or unparseable. */
  creation_date?: string;
}

export interface PdfPage {
  /** 1-based page number. */
  page: number;
  text: string;
}

export interface PdfResult {
  metadata: PdfMetadata;
  pages: PdfPage[];
}

/**
 * What one extraction ended with. Only `ok` is billable; every other kind charges nothing.
 * `pagesWithoutText` lists the 1-based pages with no text layer (scanned pages, for OCR).
 */
export type PdfOutcome =
  | { kind: 'ok'; result: PdfResult; pageCount: number; pagesWithoutText: number[] }
  | { kind: 'too_many_pages'; pageCount: number }
  | { kind: 'encrypted' }
  | { kind: 'invalid'; reason: string }
  | { kind: 'no_text'; pageCount: number; result: PdfResult }
  | { kind: 'timeout' };

/** What counting a document's pages ended with: the cheap first step, before any text work. */
export type PdfCount =
  | { kind: 'ok'; pageCount: number }
  | { kind: 'encrypted' }
  | { kind: 'invalid'; reason: string }
  | { kind: 'timeout' };

/** One page rendered for OCR: grey levels, one byte per pixel, rows top to bottom. */
export interface RenderedPage {
  /** 1-based page number. */
  page: number;
  width: number;
  height: number;
  channels: 1;
  pixels: Uint8Array;
}

/** Thrown by `count` when the documents waiting for a thread already fill the queue (`QueueFullError`: 503, no charge). */
export class PdfBusyError extends QueueFullError {
  constructor(maxQueue: number) {
    super('PDF_BUSY', `PDF queue is full (${maxQueue} documents waiting)`);
  }
}

/** Why `renderPages` refused: the document cannot be opened, a page does not exist, time ran out. */
export class PdfRenderError extends Error {
  readonly kind: 'encrypted' | 'invalid' | 'timeout';
  constructor(kind: 'encrypted' | 'invalid' | 'timeout', message: string) {
    super(message);
    this.name = 'PdfRenderError';
    this.kind = kind;
  }
}

/** Engine limits, the same for every task of the pool. */
export interface EngineLimits {
  /** Ceiling of the engine's WebAssembly memory; a document that needs more is invalid. */
  maxMemoryBytes: number;
  /** After a document, an engine whose memory grew past this is replaced by a fresh one. */
  highWaterBytes: number;
}

/** The messages posted to a pool thread. */
export type PdfTask =
  | { op: 'count'; data: Uint8Array }
  | {
      op: 'extract';
      data: Uint8Array;
      maxPages: number;
      /**
       * When present, the thread reports the page count (`taskProgress`) and waits on this cell
       * before reading any text: 1 goes on, 2 stops with `declined`.
       */
      gate?: Int32Array;
    }
  | { op: 'render'; data: Uint8Array; pages: number[]; dpi: number; maxPixels: number };

/** What a pool thread answers per task; the thread never reports a timeout itself. */
export type PdfTaskResult =
  | Exclude<PdfCount, { kind: 'timeout' }>
  | Exclude<PdfOutcome, { kind: 'timeout' }>
  | { kind: 'rendered'; pages: RenderedPage[] }
  | { kind: 'declined' };
