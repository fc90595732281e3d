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
 * `pageCount` is reported whenever the document could be opened, so billing can decide before work.
 */
export type PdfOutcome =
  | { kind: 'ok'; result: PdfResult; pageCount: number }
  | { kind: 'too_many_pages'; pageCount: number }
  | { kind: 'over_budget'; pageCount: number }
  | { kind: 'encrypted' }
  | { kind: 'invalid'; reason: string }
  | { kind: 'no_text'; pageCount: number }
  | { kind: 'timeout' };

/** The message posted to a pool thread. */
export interface PdfTask {
  data: Uint8Array;
  /** Pages the caller can pay for. */
  budget: number;
  maxPages: number;
}

/** Everything a pool thread can answer; the thread never reports a timeout itself. */
export type PdfTaskOutcome = Exclude<PdfOutcome, { kind: 'timeout' }>;
