/**
 * Pool thread: one PDFium instance, which counts pages, extracts text or renders pages of one
 * document at a time. A stuck document only ever blocks this thread, which the pool terminates
 * when the time limit passes.
 *
 * WebAssembly memory never shrinks, and an instance's memory is only given back reliably when its
 * thread ends (V8 does not collect a dropped instance on any schedule). So when the instance hit
 * its ceiling or trapped, or a document left its memory above the high-water mark, the thread
 * retires: it hands its answer over the task's port and the pool ends it and starts a fresh one.
 */
import os from 'node:os';
import { workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { retireWith, taskProgress, taskStarted, type PooledTask } from '../../core/task-threads.ts';
import { MemoryCeilingError, PdfiumEngine, type EngineDocument } from './engine.ts';
import { pageText } from './page-text.ts';
import { buildPdfResult } from './result.ts';
import type { EngineLimits, PdfTask, PdfTaskResult, RenderedPage } from './types.ts';

const { limits, pdfium } = workerData as { limits: EngineLimits; pdfium: WebAssembly.Module };

/** Started with the thread, from the process's compiled module, so the first document does not wait. */
const engine = PdfiumEngine.create(limits.maxMemoryBytes, pdfium, {
  bytes: limits.highWaterBytes,
  // A document that needs this much engine memory is most likely a bomb, and this thread retires
  // after it anyway: it gives way to the other threads (the lowest CPU priority, for this thread
  // only, as setpriority works per thread on Linux), so normal documents are not slowed by it.
  onLargeHeap() {
    try {
      os.setPriority(19);
    } catch {
      // Not permitted or not supported here: the document only runs at the usual priority.
    }
  },
});
engine.catch(() => undefined); // a failed start is reported to the first task

export default async function runPdfTask(task: PooledTask<PdfTask>): Promise<PdfTaskResult> {
  taskStarted(task.port);
  const current = await engine;
  const result = runOn(current, task);
  if (current.spent || current.memoryBytes > limits.highWaterBytes) return retireWith(task.port, result);
  task.port.close();
  return result;
}

function runOn(current: PdfiumEngine, task: PooledTask<PdfTask>): PdfTaskResult {
  try {
    const opened = current.open(task.data);
    if (opened.kind !== 'ok') return opened;
    const document = opened.document;
    let result: PdfTaskResult;
    try {
      if (task.op === 'count') result = countPages(document);
      else if (task.op === 'extract') result = extractText(document, task.data.byteLength, task.maxPages, task.gate && { gate: task.gate, port: task.port });
      else result = renderPages(document, task.pages, task.dpi, task.maxPixels);
    } finally {
      document.close();
    }
    // PDFium may survive a refused allocation by giving up on one stream quietly (an empty page):
    // a document that reached the ceiling is a bomb whatever the engine made of it.
    if (current.ceilingReached) throw new MemoryCeilingError(limits.maxMemoryBytes);
    return result;
  } catch (error) {
    if (error instanceof MemoryCeilingError) return { kind: 'invalid', reason: error.message };
    // A trap inside PDFium (a failed allocation it could not handle, a bug on a hostile file).
    if (error instanceof WebAssembly.RuntimeError) return { kind: 'invalid', reason: `PDFium failed: ${error.message}` };
    throw error;
  }
}

function countPages(document: EngineDocument): PdfTaskResult {
  const pageCount = document.pageCount();
  if (pageCount < 1) return { kind: 'invalid', reason: 'the document has no readable page tree' };
  return { kind: 'ok', pageCount };
}

/** Longest wait for the caller's go-ahead; the task's time limit normally ends a wait first. */
const APPROVAL_WAIT_MS = 10 * 60_000;

function extractText(document: EngineDocument, fileBytes: number, maxPages: number, approval?: { gate: Int32Array; port: MessagePort }): PdfTaskResult {
  const pageCount = document.pageCount();
  if (pageCount < 1) return { kind: 'invalid', reason: 'the document has no readable page tree' };
  if (pageCount > maxPages) return { kind: 'too_many_pages', pageCount };
  if (approval) {
    // The caller holds credits for the pages while the document stays open here: one open, one
    // trip through the queue, instead of a count task and then an extract task.
    taskProgress(approval.port, pageCount);
    Atomics.wait(approval.gate, 0, 0, APPROVAL_WAIT_MS);
    if (Atomics.load(approval.gate, 0) !== 1) return { kind: 'declined' };
  }

  const pageTexts: string[] = [];
  const pagesWithoutText: number[] = [];
  for (let index = 0; index < pageCount; index++) {
    const text = document.withPageText(index, pageText);
    // The page tree promised a page it does not hold (a lying /Count, a broken tree).
    if (text === null) return { kind: 'invalid', reason: `page ${index + 1} of ${pageCount} cannot be loaded` };
    if (text.trim() === '') pagesWithoutText.push(index + 1);
    pageTexts.push(text);
  }
  const result = buildPdfResult({ pageTexts, fileBytes, rawCreationDate: document.metaText('CreationDate') });
  // Kept with `no_text` too: OCR can still fill every page of a scanned document.
  if (pagesWithoutText.length === pageCount) return { kind: 'no_text', pageCount, result };
  return { kind: 'ok', result, pageCount, pagesWithoutText };
}

function renderPages(document: EngineDocument, pages: number[], dpi: number, maxPixels: number): PdfTaskResult {
  const pageCount = document.pageCount();
  const rendered: RenderedPage[] = [];
  for (const page of pages) {
    if (!Number.isInteger(page) || page < 1 || page > pageCount) {
      return { kind: 'invalid', reason: `page ${page} is not in the document (${pageCount} pages)` };
    }
    const bitmap = document.renderGray(page - 1, dpi, maxPixels);
    if (!bitmap) return { kind: 'invalid', reason: `page ${page} cannot be loaded` };
    rendered.push({ page, width: bitmap.width, height: bitmap.height, channels: 1, pixels: bitmap.gray });
  }
  return { kind: 'rendered', pages: rendered };
}
