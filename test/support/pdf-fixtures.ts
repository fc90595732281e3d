/**
 * PDF documents generated in code for tests (unit and route integration). pdf-lib draws the pages;
 * this module adds what pdf-lib cannot do: raw Info dates, a nested-form "bomb" and the standard
 * security handler (RC4 128-bit, /V 2 /R 3) for encrypted files.
 */
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import {
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFRawStream,
  PDFStream,
  PDFString,
  PDFWriter,
  StandardFonts,
} from 'pdf-lib';
import type { PDFContext, PDFObject, PDFRef } from 'pdf-lib';

/** A page is its lines of text (drawn top-down, one text line each) or a picture with no text. */
export type FixturePage = string[] | { image: true };

export interface FixtureSpec {
  pages: FixturePage[];
  /** Written verbatim into the Info dictionary (e.g. "D:20230101120000+02'00'"); omitted when absent. */
  creationDate?: string;
  /** Encrypts the file with the standard security handler. An empty user password opens it freely. */
  encryption?: { userPassword: string; ownerPassword: string };
}

export async function buildPdf(spec: FixtureSpec): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const content of spec.pages) {
    const page = doc.addPage([612, 792]);
    if (Array.isArray(content)) {
      content.forEach((line, index) => page.drawText(line, { x: 72, y: 720 - index * 18, size: 12, font }));
    } else {
      const picture = await doc.embedPng(await samplePng());
      page.drawImage(picture, { x: 72, y: 400, width: 400, height: 200 });
    }
  }
  const info: Record<string, PDFObject> = { Producer: PDFString.of('gleaner test fixtures') };
  if (spec.creationDate !== undefined) info.CreationDate = PDFString.of(spec.creationDate);
  doc.context.trailerInfo.Info = doc.context.register(doc.context.obj(info));
  return serialize(doc, spec.encryption);
}

/** Lines of the three-page document; page N's expected text is its lines joined by "\n". */
export const MULTI_PAGE_LINES: string[][] = [
  ['Quarterly report', 'Revenue grew by 12 percent.', 'Costs stayed flat.'],
  ['Second page', 'Grüße aus München, café au lait.'],
  ['Third page has one line only'],
];

export function multiPagePdf(): Promise<Uint8Array> {
  return buildPdf({ pages: MULTI_PAGE_LINES, creationDate: 'D:20240315093000Z' });
}

/** `count` pages whose text is "Page N of COUNT". */
export function numberedPagesPdf(count: number): Promise<Uint8Array> {
  return buildPdf({ pages: Array.from({ length: count }, (_, i) => [`Page ${i + 1} of ${count}`]) });
}

export function pdfWithCreationDate(creationDate: string): Promise<Uint8Array> {
  return buildPdf({ pages: [['Dated document']], creationDate });
}

export function pdfWithoutCreationDate(): Promise<Uint8Array> {
  return buildPdf({ pages: [['Undated document']] });
}

/** A scanned-style document: one page holding only a picture. */
export function imageOnlyPdf(): Promise<Uint8Array> {
  return buildPdf({ pages: [{ image: true }] });
}

export const ENCRYPTED_TEXT = 'This text is encrypted with RC4';

/** Encrypted with RC4-128; with userPassword "" any reader opens it, otherwise it needs the password. */
export function encryptedPdf(userPassword: string): Promise<Uint8Array> {
  return buildPdf({
    pages: [[ENCRYPTED_TEXT]],
    creationDate: "D:20200229235959-05'30'",
    encryption: { userPassword, ownerPassword: 'owner-secret' },
  });
}

/** A PDF header followed by bytes that are no PDF at all (deterministic). */
export function corruptPdfBytes(): Uint8Array {
  const garbage = Buffer.alloc(4096);
  let state = 0x2545;
  for (let i = 0; i < garbage.length; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    garbage[i] = state >>> 24;
  }
  return Buffer.concat([Buffer.from('%PDF-1.7\n'), garbage]);
}

/**
 * A tiny file whose text takes forever to extract: form XObject N draws form N-1 twice, so the
 * page shows the innermost form's text 2^depth times ("billion laughs" for PDF).
 */
export async function nestedFormBombPdf(depth = 40): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([612, 792]);
  const { context } = doc;
  let inner = context.register(
    formXObject(context, 'BT /F 12 Tf 72 720 Td (laugh ) Tj ET', { Font: context.obj({ F: font.ref }) }),
  );
  for (let level = 1; level <= depth; level++) {
    inner = context.register(formXObject(context, '/X Do /X Do', { XObject: context.obj({ X: inner }) }));
  }
  const name = page.node.newXObject('Bomb', inner);
  page.node.addContentStream(context.register(context.stream(`${name.asString()} Do`)));
  return serialize(doc);
}

function formXObject(context: PDFContext, operators: string, resources: Record<string, PDFObject>): PDFRawStream {
  return context.stream(operators, {
    Type: 'XObject',
    Subtype: 'Form',
    BBox: [0, 0, 612, 792],
    Resources: context.obj(resources),
  });
}

let cachedPng: Uint8Array | undefined;
async function samplePng(): Promise<Uint8Array> {
  cachedPng ??= await sharp({ create: { width: 120, height: 60, channels: 3, background: '#336699' } })
    .png()
    .toBuffer();
  return cachedPng;
}

async function serialize(doc: PDFDocument, encryption?: FixtureSpec['encryption']): Promise<Uint8Array> {
  await doc.flush(); // embeds fonts and images, so every object exists before encryption
  if (encryption) encryptDocument(doc.context, encryption.userPassword, encryption.ownerPassword);
  return PDFWriter.forContext(doc.context, 50).serializeToBuffer();
}

// ---- Standard security handler, revision 3 (PDF 1.7 §7.6.3, algorithms 1, 2, 3 and 5) ----------

const PASSWORD_PADDING = Buffer.from('28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A', 'hex');
const KEY_BYTES = 16;
/** Every permission granted; bits 1-2 must be 0. */
const PERMISSIONS = -4;

/** RC4 stream cipher (OpenSSL 3 no longer ships it by default). */
export function rc4(key: Uint8Array, data: Uint8Array): Uint8Array {
  const s = Uint8Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i] + key[i % key.length]) & 255;
    [s[i], s[j]] = [s[j], s[i]];
  }
  const out = new Uint8Array(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 255;
    j = (j + s[i]) & 255;
    [s[i], s[j]] = [s[j], s[i]];
    out[n] = data[n] ^ s[(s[i] + s[j]) & 255];
  }
  return out;
}

function md5(...parts: Uint8Array[]): Buffer {
  const hash = createHash('md5');
  for (const part of parts) hash.update(part);
  return hash.digest();
}

function padPassword(password: string): Buffer {
  const bytes = Buffer.from(password, 'latin1').subarray(0, 32);
  return Buffer.concat([bytes, PASSWORD_PADDING.subarray(0, 32 - bytes.length)]);
}

/** Revision 3 runs RC4 20 times, the i-th time with every key byte XORed with i. */
function rc4Rounds(key: Uint8Array, data: Uint8Array): Buffer {
  let out = rc4(key, data);
  for (let round = 1; round <= 19; round++) out = rc4(key.map((byte) => byte ^ round), out);
  return Buffer.from(out);
}

function md5Rounds(seed: Buffer): Buffer {
  let hash = seed;
  for (let i = 0; i < 50; i++) hash = md5(hash.subarray(0, KEY_BYTES));
  return hash.subarray(0, KEY_BYTES);
}

function encryptDocument(context: PDFContext, userPassword: string, ownerPassword: string): void {
  const fileId = md5(Buffer.from(`gleaner fixture ${userPassword}/${ownerPassword}`));
  const ownerKey = md5Rounds(md5(padPassword(ownerPassword || userPassword)));
  const ownerEntry = rc4Rounds(ownerKey, padPassword(userPassword));
  const permissions = Buffer.alloc(4);
  permissions.writeInt32LE(PERMISSIONS);
  const fileKey = md5Rounds(md5(padPassword(userPassword), ownerEntry, permissions, fileId));
  const userEntry = Buffer.concat([rc4Rounds(fileKey, md5(PASSWORD_PADDING, fileId)), Buffer.alloc(16)]);

  for (const [ref, object] of context.enumerateIndirectObjects()) {
    const objectKey = objectKeyFor(fileKey, ref);
    if (object instanceof PDFStream) {
      encryptStrings(object.dict, objectKey);
      context.assign(ref, PDFRawStream.of(object.dict, rc4(objectKey, object.getContents())));
    } else {
      context.assign(ref, encryptStrings(object, objectKey));
    }
  }

  const encrypt = context.obj({
    Filter: 'Standard',
    V: 2,
    R: 3,
    Length: KEY_BYTES * 8,
    P: PERMISSIONS,
    O: PDFHexString.of(ownerEntry.toString('hex')),
    U: PDFHexString.of(userEntry.toString('hex')),
  });
  context.trailerInfo.Encrypt = context.register(encrypt);
  const id = PDFHexString.of(fileId.toString('hex'));
  context.trailerInfo.ID = context.obj([id, id]);
}

/** Algorithm 1: each object has its own key, derived from the file key and its number. */
function objectKeyFor(fileKey: Buffer, ref: PDFRef): Buffer {
  const suffix = Buffer.from([
    ref.objectNumber & 0xff,
    (ref.objectNumber >> 8) & 0xff,
    (ref.objectNumber >> 16) & 0xff,
    ref.generationNumber & 0xff,
    (ref.generationNumber >> 8) & 0xff,
  ]);
  return md5(fileKey, suffix).subarray(0, Math.min(KEY_BYTES + 5, 16));
}

/** Replaces every string inside `object` (direct values only; references are other objects). */
function encryptStrings(object: PDFObject, key: Uint8Array): PDFObject {
  if (object instanceof PDFString || object instanceof PDFHexString) {
    return PDFHexString.of(Buffer.from(rc4(key, object.asBytes())).toString('hex'));
  }
  if (object instanceof PDFDict) {
    for (const [name, value] of object.entries()) object.set(name as PDFName, encryptStrings(value, key));
  } else if (object instanceof PDFArray) {
    for (let i = 0; i < object.size(); i++) object.set(i, encryptStrings(object.get(i), key));
  }
  return object;
}
