/**
 * A PDF behind a /v1/web URL asked for as `text` or `markdown` (docs/web.md, "Options"): read by
 * the PDF extractor of /v1/pdf, its pages joined with page markers, and billed per page, at most
 * 30 pages, as /v1/pdf bills them.
 */
import { httpErrors } from '../core/errors.ts';
import type { HandlerServices, Meter } from '../pipeline/endpoint.ts';
import { PdfBusyError } from '../extract/pdf/index.ts';
import type { PdfPage } from '../extract/pdf/index.ts';
import { returnedResponseHeaders } from '../adapters/web/headers.ts';
import { EXTRACTION_MESSAGES, PDF_MAX_PAGES } from './extraction.ts';

export interface FetchedPdf {
  url: string;
  status: number;
  headers: Record<string, string>;
  bytes: Uint8Array;
}

/** The pages as one text: a marker line before each, which Markdown renders as nothing. */
export function joinPdfPages(pages: readonly PdfPage[], format: 'text' | 'markdown'): string {
  const marker = (page: number) => (format === 'markdown' ? `<!-- page ${page} -->` : `--- page ${page} ---`);
  return pages.map((page) => `${marker(page.page)}\n\n${page.text.trim()}`).join('\n\n');
}

/**
 * The document's text in the answer's shape (`content`, plus `page_count`). The page count is
 * read first and every page held (403 when the balance cannot cover them); a document over 30
 * pages, or one without text, is a free 400 with /v1/pdf's message.
 */
export async function readWebPdf(fetched: FetchedPdf, format: 'text' | 'markdown', context: { services: HandlerServices; meter: Meter; signal: AbortSignal; tenant?: string }) {
  const pdf = context.services.capabilities.pdf();
  if (!pdf.hasCapacity()) throw httpErrors.busy();
  const outcome = await pdf
    .extract(fetched.bytes, {
      signal: context.signal,
      // Whose document it is: the PDF threads bound one user's work (docs/reliability.md).
      tenant: context.tenant,
      approve: async (pageCount) => {
        if (pageCount > PDF_MAX_PAGES) throw httpErrors.badRequest(EXTRACTION_MESSAGES.pdfTooManyPages);
        // The row's own operation, one unit per page (the unit held up front is the first page).
        await context.meter.cover(Math.max(1, pageCount));
      },
    })
    .catch((error: unknown) => {
      throw error instanceof PdfBusyError ? httpErrors.busy() : error;
    });
  if (outcome.kind === 'too_many_pages') throw httpErrors.badRequest(EXTRACTION_MESSAGES.pdfTooManyPages);
  if (outcome.kind !== 'ok') throw httpErrors.badRequest(EXTRACTION_MESSAGES.pdfFailed);
  return {
    url: fetched.url,
    status_code: fetched.status,
    headers: returnedResponseHeaders(fetched.headers),
    content: joinPdfPages(outcome.result.pages, format),
    page_count: outcome.pageCount,
  };
}
