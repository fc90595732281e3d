/** The text-extraction product: POST /v1/pdf and POST /v1/image (docs/spec/contract.md §5). */
import { httpErrors } from '../core/errors.ts';
import { boolean, publicAddress, required, string, url, urlPathEndsWith } from '../validation/rules.ts';
import { defineEndpoint, type Meter } from '../pipeline/endpoint.ts';
import { ImageResponse, PdfResponse } from './responses.ts';
import { downloadDocument } from './download.ts';
import { OcrBusyError, type ImageOcr } from '../extract/image/index.ts';
import { countCharacters, countWords } from '../extract/pdf/result.ts';
import { PdfBusyError, type PdfExtractor, type PdfResult } from '../extract/pdf/index.ts';

export const EXTRACTION_MESSAGES = {
  pdfFailed: 'Unable to extract text from the PDF.',
  pdfTooManyPages: 'The PDF has more than 30 pages.',
  imageFailed: 'Unable to process the image.',
} as const;

/** Documents over this many pages are refused (400) before any extraction. */
export const PDF_MAX_PAGES = 30;

const urlField = (extensions: string[], message: string, example: string) => ({
  rules: [required(), string(), url(), urlPathEndsWith(extensions, message), publicAddress()],
  description: `A public http(s) URL whose path ends in ${extensions.join(', ')} (case-insensitive).`,
  example,
});

/** The answer of /v1/pdf; `ocr_pages` only when OCR filled some pages. */
type PdfAnswer = PdfResult & { metadata: PdfResult['metadata'] & { ocr_pages?: number[] } };

export const pdfEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/pdf',
  operationId: 'extractPdf',
  summary: 'Text of a PDF, page by page',
  description: ({ credits, price }) =>
    `Costs ${credits('pdf_page')} per page (at most 30 pages). The page count is read before the text: a longer document answers 400 and a balance below the page count answers 403, both free. Encrypted PDFs with an empty user password are read. ` +
    `A scanned PDF (no text layer) answers 400, unless \`ocr\` is true: then every page without a text layer is rendered at 300 dpi and read by OCR, costs the image price (${price('image')}) on top of its page credit, and is listed in \`metadata.ocr_pages\`.`,
  tag: 'Extraction',
  input: 'body',
  schema: {
    fields: {
      url: urlField(['.pdf'], 'The url must point to a .pdf file.', 'https://example.com/report.pdf'),
      ocr: { rules: [boolean()], default: false, description: 'Read pages that have no text layer (scans) with OCR.' },
    },
  },
  // Nothing is held up front: the page count is read first (cheap), then every page is held at
  // once, before the text is extracted. Holding one page first and growing it later let
  // concurrent requests each take a page of a small balance and then all fail to grow.
  billing: { product: 'extraction', operation: 'pdf_page', units: () => 0 },
  history: true,
  success: {
    status: 200,
    description: 'Metadata and the text of every page.',
    schema: PdfResponse,
    example: {
      metadata: { word_count: 512, character_count: 3120, page_count: 2, file_size: '183.52 KB', creation_date: 'D:20230101120000Z' },
      pages: [
        { page: 1, text: 'First page…' },
        { page: 2, text: 'Second page…' },
      ],
    },
  },
  errors: [400, 403, 503],
  async handler({ input, services, signal, meter, upstream }) {
    // A balance that cannot pay for one page is told so before the download.
    if ((await meter.affordable()) < 1) throw await meter.shortOf(1);
    const pdf = services.capabilities.pdf();
    // An overloaded server says so before spending a download on a document it would refuse.
    if (!pdf.hasCapacity()) throw httpErrors.busy();
    const file = await downloadDocument(services.capabilities.documents(), input.url, 'pdf', upstream);
    const bytes = new Uint8Array(file.buffer, file.byteOffset, file.byteLength);
    // One task on a PDF thread: the document is admitted by its size (503 when the queue holds
    // too much), opened, its pages counted and held (403 when the balance cannot cover every
    // page) and only then read. Extraction may move the bytes to its thread; OCR renders from a copy.
    const outcome = await pdf
      .extract(input.ocr ? bytes.slice() : bytes, {
        signal,
        tenant: upstream.tenant,
        approve: async (pageCount) => {
          if (pageCount > PDF_MAX_PAGES) throw httpErrors.badRequest(EXTRACTION_MESSAGES.pdfTooManyPages);
          await meter.cover(Math.max(1, pageCount));
        },
      })
      .catch((error: unknown) => {
        throw error instanceof PdfBusyError ? httpErrors.busy() : error;
      });
    switch (outcome.kind) {
      case 'ok':
        if (!input.ocr || outcome.pagesWithoutText.length === 0) return { body: outcome.result };
        return { body: await readScannedPages(outcome.result, outcome.pagesWithoutText, { pdf, ocr: services.capabilities.ocr(), bytes, meter, signal, tenant: upstream.tenant }) };
      case 'no_text':
        if (!input.ocr) throw httpErrors.badRequest(EXTRACTION_MESSAGES.pdfFailed);
        return { body: await readScannedPages(outcome.result, outcome.result.pages.map((page) => page.page), { pdf, ocr: services.capabilities.ocr(), bytes, meter, signal, tenant: upstream.tenant }) };
      case 'too_many_pages':
        throw httpErrors.badRequest(EXTRACTION_MESSAGES.pdfTooManyPages);
      default:
        throw httpErrors.badRequest(EXTRACTION_MESSAGES.pdfFailed);
    }
  },
});

/**
 * Fills the pages without a text layer by OCR: each costs the image price, held before any page
 * is rendered (403 when the balance cannot cover them). Pages are rendered at 300 dpi one at a
 * time, so at most one page bitmap (about 9 MB for A4) waits for the OCR pool at once.
 */
async function readScannedPages(
  result: PdfResult,
  pages: number[],
  work: { pdf: PdfExtractor; ocr: ImageOcr; bytes: Uint8Array; meter: Meter; signal: AbortSignal; tenant: string },
): Promise<PdfAnswer> {
  await work.meter.cover(pages.length, 'image');
  const texts = new Map<number, string>();
  for (const page of pages) {
    const [bitmap] = await work.pdf.renderPages(work.bytes, [page], { dpi: 300, signal: work.signal, tenant: work.tenant });
    let read;
    try {
      read = await work.ocr.recognize({ pixels: bitmap.pixels, width: bitmap.width, height: bitmap.height, channels: 1 }, work.signal, work.tenant);
    } catch (error) {
      if (error instanceof OcrBusyError) throw httpErrors.busy();
      throw error;
    }
    if (read.kind !== 'ok') throw httpErrors.badRequest(EXTRACTION_MESSAGES.pdfFailed);
    texts.set(page, read.text);
  }
  const filled = result.pages.map((page) => (texts.has(page.page) ? { page: page.page, text: texts.get(page.page) ?? '' } : page));
  if (filled.every((page) => page.text.trim() === '')) throw httpErrors.badRequest(EXTRACTION_MESSAGES.pdfFailed);
  // Counted page by page, as the extractor counts.
  const words = filled.reduce((sum, page) => sum + countWords(page.text), 0);
  const characters = filled.reduce((sum, page) => sum + countCharacters(page.text), 0);
  return { metadata: { ...result.metadata, word_count: words, character_count: characters, ocr_pages: pages }, pages: filled };
}

export const imageEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/image',
  operationId: 'extractImage',
  summary: 'Text in an image (OCR)',
  description: ({ credits }) => `Reads .jpg, .jpeg, .png and .webp images with Tesseract (English). Costs ${credits('image')} on success.`,
  tag: 'Extraction',
  input: 'body',
  schema: {
    fields: {
      url: urlField(['.jpg', '.jpeg', '.png', '.webp'], 'The url must point to a .jpg, .jpeg, .png or .webp file.', 'https://example.com/receipt.png'),
    },
  },
  billing: { product: 'extraction', operation: 'image' },
  history: true,
  success: { status: 200, description: 'The text found.', schema: ImageResponse, example: { text: 'INVOICE\nTotal: 42.00' } },
  errors: [400, 403, 503],
  async handler({ input, services, signal, upstream }) {
    const file = await downloadDocument(services.capabilities.documents(), input.url, 'image', upstream);
    let outcome;
    try {
      outcome = await services.capabilities.ocr().recognize(new Uint8Array(file.buffer, file.byteOffset, file.byteLength), signal, upstream.tenant);
    } catch (error) {
      // Every OCR engine busy and the queue full: the image is fine, the server is not; retry later.
      if (error instanceof OcrBusyError) throw httpErrors.busy();
      throw error;
    }
    if (outcome.kind !== 'ok') throw httpErrors.badRequest(EXTRACTION_MESSAGES.imageFailed);
    return { body: { text: outcome.text } };
  },
});
