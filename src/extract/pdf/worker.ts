/**
 * Pool thread: opens one PDF with pdf.js and extracts its text. pdf.js runs its own "worker" code
 * in this same thread (in Node it always does), so a stuck document only ever blocks this thread,
 * which the pool terminates when the time limit passes.
 */
import type { MessagePort } from 'node:worker_threads';
import { getDocument, PDFWorker } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { WorkerMessageHandler } from 'pdfjs-dist/legacy/build/pdf.worker.mjs';
import { InThreadPort } from './in-thread-port.ts';
import { pageTextFromItems } from './page-text.ts';
import { documentOptions, PDFJS_VERBOSITY } from './pdfjs-options.ts';
import { buildPdfResult } from './result.ts';
import { useSyncDecompression } from './sync-decompression.ts';
import type { PdfTask, PdfTaskOutcome } from './types.ts';

useSyncDecompression();

// pdf.js's parsing side starts with the thread, behind a port that copies messages cheaply, and
// one PDFWorker serves every document of the thread (each document still gets its own handler,
// released by loadingTask.destroy()).
type WorkerPort = NonNullable<NonNullable<ConstructorParameters<typeof PDFWorker>[0]>['port']>;
const port = new InThreadPort();
WorkerMessageHandler.initializeFromPort(port);
// pdf.js types `port` as a web Worker but only calls postMessage and add/removeEventListener on it.
const pdfWorker = new PDFWorker({ port: port as unknown as WorkerPort, verbosity: PDFJS_VERBOSITY });

/** A task as the pool posts it: the caller's task plus the port that announces the start. */
export interface PooledPdfTask extends PdfTask {
  /** Receives one message when parsing begins, so the time limit does not count queueing. */
  started: MessagePort;
}

export default async function extractPdf({ data, budget, maxPages, started }: PooledPdfTask): Promise<PdfTaskOutcome> {
  started.postMessage(null);
  started.close();

  const fileBytes = data.byteLength; // pdf.js takes ownership of `data` below
  const loadingTask = getDocument({ ...documentOptions(data), worker: pdfWorker });
  try {
    const pdf = await loadingTask.promise;
    // Page count first: billing decides before any text is extracted.
    const pageCount = pdf.numPages;
    if (pageCount > maxPages) return { kind: 'too_many_pages', pageCount };
    if (pageCount > budget) return { kind: 'over_budget', pageCount };

    const pageTexts: string[] = [];
    for (let pageNumber = 1; pageNumber <= pageCount; pageNumber++) {
      const page = await pdf.getPage(pageNumber);
      try {
        const content = await page.getTextContent();
        pageTexts.push(pageTextFromItems(content.items));
      } finally {
        page.cleanup(); // drop the page's fonts and operator lists before the next page
      }
    }
    if (pageTexts.every((text) => text === '')) return { kind: 'no_text', pageCount };

    // A damaged Info dictionary only costs the optional creation date.
    const info = await pdf.getMetadata().then(
      (metadata) => metadata.info as Record<string, unknown> | null,
      () => null,
    );
    const result = buildPdfResult({ pageTexts, fileBytes, rawCreationDate: info?.CreationDate });
    return { kind: 'ok', result, pageCount };
  } catch (error) {
    return failureOutcome(error);
  } finally {
    // Destroys the document and pdf.js's in-thread worker, releasing every cache of this file.
    await loadingTask.destroy().catch(() => undefined);
  }
}

function failureOutcome(error: unknown): PdfTaskOutcome {
  const name = error instanceof Error ? error.name : '';
  // pdf.js has already tried the empty user password: any password request means we cannot read it.
  if (name === 'PasswordException') return { kind: 'encrypted' };
  const reason = error instanceof Error ? `${name}: ${error.message}` : String(error);
  return { kind: 'invalid', reason };
}
