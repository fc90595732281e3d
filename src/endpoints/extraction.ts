/** The text-extraction product: POST /v1/pdf and POST /v1/image (contract §5). */
import { httpErrors, MESSAGES } from '../http/errors.ts';
import { price } from '../credits/prices.ts';
import { publicAddress, required, string, url, urlPathEndsWith } from '../validation/rules.ts';
import { downloadDocument, MAX_BYTES } from './download.ts';
import { OcrBusyError } from '../extract/image/index.ts';
import type { Endpoint } from './types.ts';

/** Documents over this many pages are refused (400) before any extraction. */
export const PDF_MAX_PAGES = 30;

const urlField = (extensions: string[], message: string, example: string) => ({
  rules: [required(), string(), url(), urlPathEndsWith(extensions, message), publicAddress()],
  description: `A public http(s) URL whose path ends in ${extensions.join(', ')} (case-insensitive).`,
  example,
});

export const pdfEndpoint: Endpoint<{ url: string }> = {
  method: 'POST',
  path: '/v1/pdf',
  summary: 'Text of a PDF, page by page',
  description:
    'Costs 1 credit per page (at most 30 pages). The page count is read before the text: a longer document answers 400 and a balance below the page count answers 403, both free. Encrypted PDFs with an empty user password are read; scanned PDFs without a text layer answer 400.',
  tag: 'Extraction',
  input: 'body',
  schema: { fields: { url: urlField(['.pdf'], 'The url must point to a .pdf file.', 'https://example.com/report.pdf') } },
  billing: {
    product: 'extraction',
    // One page is held up front; once the page count is known, and before the text is extracted,
    // the hold grows to it (or 403).
    // Holding 30 pages up front would let one request lock a small balance against the others.
    cost: (_input, prices) => price(prices, 'pdf_page'),
  },
  history: true,
  success: {
    status: 200,
    description: 'Metadata and the text of every page.',
    example: {
      metadata: { word_count: 512, character_count: 3120, page_count: 2, file_size: '183.52 KB', creation_date: 'D:20230101120000Z' },
      pages: [
        { page: 1, text: 'First page…' },
        { page: 2, text: 'Second page…' },
      ],
    },
  },
  errors: [400, 403],
  async handler(context) {
    const { input, services, signal } = context;
    const perPage = price(await services.prices.current(), 'pdf_page');
    const file = await downloadDocument(services.outbound, input.url, MAX_BYTES.pdf, signal);
    const pdf = services.capabilities.pdf();
    const bytes = new Uint8Array(file.buffer, file.byteOffset, file.byteLength);
    // The page count first (cheap), then the hold for every page, then the heavy work: concurrent
    // requests cannot all pass a balance check that only one of them can pay for.
    const counted = await pdf.count(bytes, signal);
    if (counted.kind !== 'ok') throw httpErrors.badRequest(MESSAGES.pdfFailed);
    if (counted.pageCount > PDF_MAX_PAGES) throw httpErrors.badRequest(MESSAGES.pdfTooManyPages);
    const cost = Math.max(1, counted.pageCount) * perPage;
    await context.holdUpTo(cost); // 403 when the balance cannot cover the pages
    const outcome = await pdf.extract(bytes, { signal });
    switch (outcome.kind) {
      case 'ok':
        return { body: outcome.result, cost };
      case 'too_many_pages':
        throw httpErrors.badRequest(MESSAGES.pdfTooManyPages);
      default:
        throw httpErrors.badRequest(MESSAGES.pdfFailed);
    }
  },
};

export const imageEndpoint: Endpoint<{ url: string }> = {
  method: 'POST',
  path: '/v1/image',
  summary: 'Text in an image (OCR)',
  description: 'Reads .jpg, .jpeg, .png and .webp images with Tesseract (English). Costs 3 credits on success.',
  tag: 'Extraction',
  input: 'body',
  schema: {
    fields: {
      url: urlField(['.jpg', '.jpeg', '.png', '.webp'], 'The url must point to a .jpg, .jpeg, .png or .webp file.', 'https://example.com/receipt.png'),
    },
  },
  billing: { product: 'extraction', cost: (_input, prices) => price(prices, 'image') },
  history: true,
  success: { status: 200, description: 'The text found.', example: { text: 'INVOICE\nTotal: 42.00' } },
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
    if (outcome.kind !== 'ok') throw httpErrors.badRequest(MESSAGES.imageFailed);
    return { body: { text: outcome.text } };
  },
};
