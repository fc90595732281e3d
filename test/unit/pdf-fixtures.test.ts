/**
 * The generated fixtures are only worth something if PDFium reads them the way a real file of the
 * same kind would be read; these tests check that directly, with an engine in this thread.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PdfiumEngine } from '../../src/extract/pdf/engine.ts';
import { pageText } from '../../src/extract/pdf/page-text.ts';
import { ENCRYPTED_TEXT, encryptedPdf, rc4, spacesThenText } from '../support/pdf-fixtures.ts';
import zlib from 'node:zlib';

let engine: PdfiumEngine;
before(async () => {
  engine = await PdfiumEngine.create(256 * 2 ** 20);
});

async function firstPageText(bytes: Uint8Array): Promise<string> {
  const opened = engine.open(bytes);
  if (opened.kind !== 'ok') throw Object.assign(new Error(`cannot open: ${opened.kind}`), { kind: opened.kind });
  try {
    return opened.document.withPageText(0, pageText) ?? assert.fail('page 1 cannot be loaded');
  } finally {
    opened.document.close();
  }
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

  test('a user password is required when set', async () => {
    assert.deepEqual(engine.open(await encryptedPdf('secret')), { kind: 'encrypted' });
  });
});

describe('bomb fixtures', () => {
  test('the flate bomb stream inflates to exactly the spaces and the tail, checksum included', () => {
    const stream = spacesThenText(4 * 2 ** 20, 'tail (T) Tj');
    const inflated = zlib.inflateSync(stream); // verifies the Adler-32 trailer
    assert.equal(inflated.length, 4 * 2 ** 20 + 'tail (T) Tj'.length);
    assert.equal(inflated.subarray(0, 4 * 2 ** 20).every((byte) => byte === 0x20), true);
    assert.equal(inflated.subarray(4 * 2 ** 20).toString(), 'tail (T) Tj');
    assert.ok(stream.length < 8 * 1024, `${stream.length} bytes for 4 MiB`);
  });
});
