/**
 * POST /v1/pdf and POST /v1/image through the real server, with documents generated in code and
 * served from loopback: exact results, per-page billing, every failure free, validation.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../support/service.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import {
  corruptPdfBytes,
  encryptedPdf,
  ENCRYPTED_TEXT,
  imageOnlyPdf,
  MULTI_PAGE_LINES,
  multiPagePdf,
  numberedPagesPdf,
  SCANNED_LINES,
  scannedTextPdf,
} from '../support/pdf-fixtures.ts';
import { corruptBytes, renderTextImage } from '../support/image-fixtures.ts';

let service: TestService;
let files: FakeUpstream;
const served = new Map<string, { body: Uint8Array; type: string }>();

before(async () => {
  files = await startFakeUpstream();
  files.handle((hit) => {
    const file = served.get(hit.path.toLowerCase());
    return file ? { status: 200, headers: { 'content-type': file.type }, body: file.body } : { status: 404, body: 'missing' };
  });
  served.set('/report.pdf', { body: await multiPagePdf(), type: 'application/pdf' });
  served.set('/one.pdf', { body: await numberedPagesPdf(1), type: 'application/pdf' });
  served.set('/long.pdf', { body: await numberedPagesPdf(31), type: 'application/pdf' });
  served.set('/thirty.pdf', { body: await numberedPagesPdf(30), type: 'application/pdf' });
  served.set('/open-encrypted.pdf', { body: await encryptedPdf(''), type: 'application/pdf' });
  served.set('/locked.pdf', { body: await encryptedPdf('s3cret'), type: 'application/pdf' });
  served.set('/scan.pdf', { body: await imageOnlyPdf(), type: 'application/pdf' });
  served.set('/corrupt.pdf', { body: corruptPdfBytes(), type: 'application/pdf' });
  served.set('/scanned.pdf', { body: await scannedTextPdf(), type: 'application/pdf' });
  served.set('/three.pdf', { body: await numberedPagesPdf(3), type: 'application/pdf' });
  served.set('/text.png', { body: await renderTextImage(['Invoice 2041', 'Total due 318 EUR'], { format: 'png' }), type: 'image/png' });
  served.set('/text.webp', { body: await renderTextImage(['Invoice 2041', 'Total due 318 EUR'], { format: 'webp' }), type: 'image/webp' });
  served.set('/broken.jpg', { body: corruptBytes(), type: 'image/jpeg' });
  service = await startTestService({ PDF_THREADS: '2', OCR_WORKERS: '1' });
});
after(async () => {
  await service.close();
  await files.close();
});

const post = (route: string, token: string, url: string) => service.call('POST', route, { token, body: { url } });
const extraction = (id: number) => service.services.ledger.balance(id, 'extraction');

describe('POST /v1/pdf', () => {
  test('returns metadata and the text of every page, charging one credit per page', async () => {
    const user = await service.user({ extraction: 50 });
    const r = await post('/v1/pdf', user.token, `${files.url}/report.pdf`);
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body), ['metadata', 'pages']);
    assert.deepEqual(
      r.body.pages,
      MULTI_PAGE_LINES.map((lines, i) => ({ page: i + 1, text: lines.join('\n') })),
    );
    const words = MULTI_PAGE_LINES.flat().join(' ').split(/\s+/).length;
    assert.equal(r.body.metadata.word_count, words);
    assert.equal(r.body.metadata.page_count, 3);
    assert.match(r.body.metadata.file_size, /^\d+\.\d{2} KB$/);
    assert.equal(r.body.metadata.creation_date, 'D:20240315093000Z');
    assert.equal(await extraction(user.id), 47);
    const history = await service.call('GET', '/requests', { token: user.token });
    assert.deepEqual([history.body.data[0].endpoint, history.body.data[0].credits, history.body.data[0].product], ['/v1/pdf', 3, 'extraction']);
  });

  test('the extension check is case-insensitive and reads the path only', async () => {
    const user = await service.user({ extraction: 5 });
    const r = await post('/v1/pdf', user.token, `${files.url}/ONE.PDF?download=1`);
    assert.equal(r.status, 200);
    assert.equal(await extraction(user.id), 4);
  });

  test('an encrypted PDF with an empty user password is read', async () => {
    const user = await service.user({ extraction: 5 });
    const r = await post('/v1/pdf', user.token, `${files.url}/open-encrypted.pdf`);
    assert.equal(r.status, 200);
    assert.equal(r.body.pages[0].text, ENCRYPTED_TEXT);
  });

  test('30 pages are fine; more than 30 pages: 400 and nothing charged', async () => {
    const user = await service.user({ extraction: 100 });
    assert.equal((await post('/v1/pdf', user.token, `${files.url}/thirty.pdf`)).status, 200);
    assert.equal(await extraction(user.id), 70);
    const r = await post('/v1/pdf', user.token, `${files.url}/long.pdf`);
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { message: 'The PDF has more than 30 pages.' });
    assert.equal(await extraction(user.id), 70);
  });

  test('a balance lower than the page count: 403 and nothing charged', async () => {
    const user = await service.user({ extraction: 2 });
    const r = await post('/v1/pdf', user.token, `${files.url}/report.pdf`);
    assert.equal(r.status, 403);
    const { required, ...refusal } = r.body;
    assert.deepEqual(refusal, { message: 'You do not have enough credits to perform this action.', product: 'extraction', balance: 2 });
    assert.ok(required > 2, `the credits needed (${required}) are the page count, above the balance`);
    assert.equal(await extraction(user.id), 2);
  });

  test('unreadable documents answer 400 and cost nothing', async () => {
    const user = await service.user({ extraction: 10 });
    const cases: Array<[string, string]> = [
      ['/locked.pdf', 'Unable to extract text from the PDF.'],
      ['/scan.pdf', 'Unable to extract text from the PDF.'],
      ['/corrupt.pdf', 'Unable to extract text from the PDF.'],
      ['/missing.pdf', 'Unable to download the file.'],
    ];
    for (const [path, message] of cases) {
      const r = await post('/v1/pdf', user.token, `${files.url}${path}`);
      assert.equal(r.status, 400, path);
      assert.deepEqual(r.body, { message }, path);
    }
    assert.equal(await extraction(user.id), 10);
  });

  test('validation: required, valid URL, .pdf path, public address', async () => {
    const user = await service.user({ extraction: 10 });
    const cases: Array<[unknown, string[]]> = [
      [undefined, ['The url field is required.']],
      ['ftp://example.com/a.pdf', ['The url must be a valid URL.']],
      ['not a url', ['The url must be a valid URL.']],
      ['https://example.com/a.txt', ['The url must point to a .pdf file.']],
      ['http://10.0.0.7/a.pdf', ['The url must point to a public address.']],
      ['http://169.254.169.254/latest.pdf', ['The url must point to a public address.']],
      ['http://[::ffff:127.0.0.2]/a.pdf', ['The url must point to a public address.']],
      ['http://2130706434/a.pdf', ['The url must point to a public address.']],
      // Every failing rule is reported, not only the first.
      ['http://10.0.0.7/a.txt', ['The url must point to a .pdf file.', 'The url must point to a public address.']],
    ];
    for (const [url, messages] of cases) {
      const r = await service.call('POST', '/v1/pdf', { token: user.token, body: url === undefined ? {} : { url } });
      assert.equal(r.status, 422, String(url));
      assert.deepEqual(r.body.errors, { url: messages }, String(url));
    }
    assert.equal(await extraction(user.id), 10);
  });

  test('ten concurrent 3-page PDFs against a balance of 10: three succeed (a request holds every page at once)', async () => {
    const user = await service.user({ extraction: 10 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => post('/v1/pdf', user.token, `${files.url}/three.pdf`)));
    assert.equal(answers.filter((a) => a.status === 200).length, 3);
    assert.equal(answers.filter((a) => a.status === 403).length, 7);
    assert.equal(await extraction(user.id), 1);
    for (const row of await service.services.ledger.recompute(user.id)) assert.equal(row.stored, row.ledger);
  });

  test('ocr: true reads pages without a text layer, lists them, and charges the image price for each', async () => {
    const user = await service.user({ extraction: 20 });
    const r = await service.call('POST', '/v1/pdf', { token: user.token, body: { url: `${files.url}/scanned.pdf`, ocr: true } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.metadata.ocr_pages, [1, 2]);
    assert.equal(r.body.metadata.page_count, 2);
    for (const page of r.body.pages) {
      for (const line of SCANNED_LINES) assert.match(page.text.replace(/\s+/g, ' '), new RegExp(line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), `page ${page.page}`);
    }
    assert.equal(r.body.metadata.word_count, r.body.pages.reduce((n: number, p: { text: string }) => n + (p.text.match(/\S+/g)?.length ?? 0), 0));
    // 2 pages × 1 credit + 2 OCR'd pages × 3 credits.
    assert.equal(await extraction(user.id), 20 - 8);
    // Without ocr, the same document is refused, free; a text PDF with ocr: true costs pages only.
    const refused = await post('/v1/pdf', user.token, `${files.url}/scanned.pdf`);
    assert.equal(refused.status, 400);
    const text = await service.call('POST', '/v1/pdf', { token: user.token, body: { url: `${files.url}/one.pdf`, ocr: true } });
    assert.equal(text.status, 200);
    assert.equal(text.body.metadata.ocr_pages, undefined);
    assert.equal(await extraction(user.id), 12 - 1);
  });

  test('ocr: a balance that covers the pages but not their OCR: 403 and nothing charged; ocr must be a boolean', async () => {
    const user = await service.user({ extraction: 4 });
    const r = await service.call('POST', '/v1/pdf', { token: user.token, body: { url: `${files.url}/scanned.pdf`, ocr: true } });
    assert.equal(r.status, 403);
    assert.equal(await extraction(user.id), 4);
    const wrong = await service.call('POST', '/v1/pdf', { token: user.token, body: { url: `${files.url}/scanned.pdf`, ocr: 'yes' } });
    assert.equal(wrong.status, 422);
    assert.deepEqual(wrong.body.errors, { ocr: ['The ocr field must be true or false.'] });
  });

  test('100 concurrent requests for a one-page PDF against a balance of 20: exactly 20 succeed', async () => {
    const user = await service.user({ extraction: 20 });
    const answers = await Promise.all(Array.from({ length: 100 }, () => post('/v1/pdf', user.token, `${files.url}/one.pdf`)));
    assert.equal(answers.filter((a) => a.status === 200).length, 20);
    assert.equal(answers.filter((a) => a.status === 403).length, 80);
    assert.equal(await extraction(user.id), 0);
    for (const row of await service.services.ledger.recompute(user.id)) assert.equal(row.stored, row.ledger);
  });
});

describe('POST /v1/image', () => {
  test('reads the text of png and webp images for 3 credits', async () => {
    const user = await service.user({ extraction: 10 });
    for (const path of ['/text.png', '/text.webp']) {
      const r = await post('/v1/image', user.token, `${files.url}${path}`);
      assert.equal(r.status, 200, path);
      assert.deepEqual(Object.keys(r.body), ['text']);
      assert.match(r.body.text, /Invoice 2041/);
      assert.match(r.body.text, /Total due 318 EUR/);
    }
    assert.equal(await extraction(user.id), 4);
  });

  test('an image that cannot be decoded: 400 and nothing charged', async () => {
    const user = await service.user({ extraction: 10 });
    const r = await post('/v1/image', user.token, `${files.url}/broken.jpg`);
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { message: 'Unable to process the image.' });
    assert.equal(await extraction(user.id), 10);
  });

  test('validation: unsupported extension, and 403 with no credits', async () => {
    const user = await service.user({ extraction: 2 });
    const r = await post('/v1/image', user.token, 'https://example.com/picture.gif');
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.errors, { url: ['The url must point to a .jpg, .jpeg, .png or .webp file.'] });
    const poor = await post('/v1/image', user.token, `${files.url}/text.png`);
    assert.equal(poor.status, 403);
    assert.equal(await extraction(user.id), 2);
  });
});
