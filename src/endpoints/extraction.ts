/** The text-extraction product: POST /v1/pdf and POST /v1/image (docs/spec/contract.md §5). */
import { httpErrors } from '../core/errors.ts';
import { publicAddress, required, string, url, urlPathEndsWith } from '../validation/rules.ts';
import { defineEndpoint } from '../pipeline/endpoint.ts';
import { ImageResponse, PdfResponse } from './responses.ts';
import { downloadDocument, MAX_BYTES } from './download.ts';
import { OcrBusyError } from '../extract/image/index.ts';

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

export const pdfEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/pdf',
  operationId: 'extractPdf',
  summary: 'Text of a PDF, page by page',
  description:
    'Costs 1 credit per page (at most 30 pages). The page count is read before the text: a longer document answers 400 and a balance below the page count answers 403, both free. Encrypted PDFs with an empty user password are read; scanned PDFs without a text layer answer 400.',
  tag: 'Extraction',
  input: 'body',
  schema: { fields: { url: urlField(['.pdf'], 'The url must point to a .pdf file.', 'https://example.com/report.pdf') } },
  // One page is held up front; once the page count is known the hold grows to it (or 403).
  // Holding 30 pages up front would let one request lock a small balance against the others.
  billing: { product: 'extraction', operation: 'pdf_page' },
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
  errors: [400, 403],
  async handler({ input, services, signal, meter }) {
    const file = await downloadDocument(services.outbound, input.url, MAX_BYTES.pdf, signal);
    // The worker refuses a document longer than the user can pay for before extracting its text.
    const budget = await meter.affordable();
    const outcome = await services.capabilities.pdf().extract(new Uint8Array(file.buffer, file.byteOffset, file.byteLength), budget, signal);
    switch (outcome.kind) {
      case 'ok':
        await meter.cover(Math.max(1, outcome.pageCount));
        return { body: outcome.result };
      case 'too_many_pages':
        throw httpErrors.badRequest(EXTRACTION_MESSAGES.pdfTooManyPages);
      case 'over_budget':
        throw httpErrors.insufficientCredits();
      default:
        throw httpErrors.badRequest(EXTRACTION_MESSAGES.pdfFailed);
    }
  },
});

export const imageEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/image',
  operationId: 'extractImage',
  summary: 'Text in an image (OCR)',
  description: 'Reads .jpg, .jpeg, .png and .webp images with Tesseract (English). Costs 3 credits on success.',
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
  async handler({ input, services, signal }) {
    const file = await downloadDocument(services.outbound, input.url, MAX_BYTES.image, signal);
    let outcome;
    try {
      outcome = await services.capabilities.ocr().recognize(new Uint8Array(file.buffer, file.byteOffset, file.byteLength), signal);
    } catch (error) {
      // Every OCR engine busy and the queue full: the image is fine, the server is not; retry later.
      if (error instanceof OcrBusyError) throw httpErrors.busy();
      throw error;
    }
    if (outcome.kind !== 'ok') throw httpErrors.badRequest(EXTRACTION_MESSAGES.imageFailed);
    return { body: { text: outcome.text } };
  },
});
