/**
 * The generated fixtures are only worth something if pdf.js reads them the way a real file of the
 * same kind would be read; these tests check that directly, without the pool.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { pageTextFromItems } from '../../src/extract/pdf/page-text.ts';
import { documentOptions } from '../../src/extract/pdf/pdfjs-options.ts';
import { ENCRYPTED_TEXT, encryptedPdf, rc4 } from '../support/pdf-fixtures.ts';

async function firstPageText(bytes: Uint8Array, password?: string): Promise<string> {
  const loadingTask = getDocument({ ...documentOptions(bytes), password });
  try {
    const pdf = await loadingTask.promise;
    const page = await pdf.getPage(1);
    return pageTextFromItems((await page.getTextContent()).items);
  } finally {
    await loadingTask.destroy();
  }
}

async function openError(bytes: Uint8Array, password?: string): Promise<{ name: string; code: unknown }> {
  const error = await firstPageText(bytes, password).then(
    () => assert.fail('expected the document to refuse opening'),
    (reason: unknown) => reason as { name: string; code: unknown },
  );
  return { name: error.name, code: error.code };
}

describe('encryption fixtures (RC4-128, standard security handler R3)', () => {
  test('rc4 matches the classic test vectors', () => {
    const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
    assert.equal(hex(rc4(Buffer.from('Key'), Buffer.from('Plaintext'))), 'bbf316e8d940af0ad3');
    assert.equal(hex(rc4(Buffer.from('Secret'), Buffer.from('Attack at dawn'))), '45a01f645fc35b383552544b9bf5');
  });

  test('the bytes on disk are really encrypted', async () => {
    const bytes = await encryptedPdf('');
    const raw = Buffer.from(bytes).toString('latin1');
    assert.match(raw, /\/Encrypt \d+ 0 R/);
    assert.doesNotMatch(raw, /gleaner test fixtures/); // the Info strings are ciphertext too
  });

  test('an empty user password opens without asking', async () => {
    assert.equal(await firstPageText(await encryptedPdf('')), ENCRYPTED_TEXT);
  });

  test('a user password is required when set, and the right one decrypts', async () => {
    const bytes = await encryptedPdf('secret');
    assert.deepEqual(await openError(bytes.slice()), { name: 'PasswordException', code: 1 }); // NEED_PASSWORD
    assert.deepEqual(await openError(bytes.slice(), 'wrong'), { name: 'PasswordException', code: 2 }); // INCORRECT
    assert.equal(await firstPageText(bytes.slice(), 'secret'), ENCRYPTED_TEXT);
    assert.equal(await firstPageText(bytes.slice(), 'owner-secret'), ENCRYPTED_TEXT);
  });
});
