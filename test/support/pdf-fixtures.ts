/**
 * PDF documents generated in code for tests (unit and route integration). pdf-lib draws the pages;
 * this module adds what pdf-lib cannot do: raw Info dates, a nested-form "bomb", the standard
 * security handler (RC4 128-bit, /V 2 /R 3) for encrypted files, other scripts (Arabic, a
 * non-embedded CJK font), pictures of text for OCR, and resource bombs written byte by byte.
 */
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';
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
  degrees,
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

// ---- Raw PDF files: what pdf-lib will not write (other scripts, bombs, broken page trees) -----

/**
 * Writes a PDF from numbered object bodies (object N is `objects[N - 1]`), with a correct
 * cross-reference table. Object 1 must be the catalog.
 */
export function rawPdf(objects: Array<string | Buffer>): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xE2\xE3\xCF\xD3\n', 'latin1')];
  let offset = parts[0].length;
  const offsets: number[] = [];
  objects.forEach((body, index) => {
    offsets.push(offset);
    const chunk = Buffer.concat([Buffer.from(`${index + 1} 0 obj\n`), Buffer.isBuffer(body) ? body : Buffer.from(body, 'latin1'), Buffer.from('\nendobj\n')]);
    parts.push(chunk);
    offset += chunk.length;
  });
  const xref = [`xref\n0 ${objects.length + 1}\n`, '0000000000 65535 f \n', ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`)].join('');
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`));
  return Buffer.concat(parts);
}

/** A stream object with its dictionary entries (Length is added). */
export function rawStream(data: Buffer | string, entries = ''): Buffer {
  const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data, 'latin1');
  return Buffer.concat([Buffer.from(`<< /Length ${bytes.length} ${entries} >>\nstream\n`), bytes, Buffer.from('\nendstream')]);
}

const HELVETICA = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>';

/** One-page document: catalog 1, pages 2, page 3, font 4, content 5, then `extra` objects. */
function onePage(content: Buffer, font = HELVETICA, extra: Array<string | Buffer> = []): Buffer {
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>',
    font,
    content,
    ...extra,
  ]);
}

export const ARABIC_TEXT = 'سلام عليكم';

/**
 * Arabic drawn the way producers write it: glyphs in visual order (left to right on the page, so
 * the last letter first), one byte code per letter, mapped back to Unicode by a ToUnicode CMap.
 * A reader must return the words in logical order.
 */
export function arabicPdf(): Buffer {
  const letters = [...new Set([...ARABIC_TEXT.replace(/ /g, '')])];
  const codeOf = new Map(letters.map((letter, i) => [letter, 0x41 + i]));
  codeOf.set(' ', 0x20);
  const hex = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, '0');
  const visual = [...ARABIC_TEXT].reverse();
  const shown = visual.map((c) => hex(codeOf.get(c)!, 2)).join('');
  const cmap = [
    '/CIDInit /ProcSet findresource begin 12 dict begin begincmap',
    '/CMapName /Arabic-Test def /CMapType 2 def',
    '1 begincodespacerange <00> <FF> endcodespacerange',
    `${codeOf.size} beginbfchar`,
    ...[...codeOf].map(([char, code]) => `<${hex(code, 2)}> <${hex(char.codePointAt(0)!, 4)}>`),
    'endbfchar endcmap CMapName currentdict /CMap defineresource pop end end',
  ].join('\n');
  const font = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>';
  return onePage(rawStream(`BT /F1 14 Tf 300 700 Td <${shown}> Tj ET`), font, [rawStream(cmap)]);
}

export const CJK_TEXT = '日本語のテキスト';

/**
 * Japanese in a CID font referenced by name only (HeiseiMin-W3, not embedded) with the predefined
 * UniJIS-UCS2-H CMap and no ToUnicode: the reader must know the CMap and Adobe-Japan1 itself.
 */
export function nonEmbeddedCjkPdf(): Buffer {
  const codes = [...CJK_TEXT].map((c) => c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')).join('');
  const font =
    '<< /Type /Font /Subtype /Type0 /BaseFont /HeiseiMin-W3 /Encoding /UniJIS-UCS2-H /DescendantFonts [6 0 R] >>';
  const cidFont =
    '<< /Type /Font /Subtype /CIDFontType0 /BaseFont /HeiseiMin-W3 /CIDSystemInfo << /Registry (Adobe) /Ordering (Japan1) /Supplement 2 >> /FontDescriptor 7 0 R /DW 1000 >>';
  const descriptor =
    '<< /Type /FontDescriptor /FontName /HeiseiMin-W3 /Flags 6 /FontBBox [-123 -257 1001 910] /ItalicAngle 0 /Ascent 859 /Descent -141 /CapHeight 769 /StemV 93 >>';
  return onePage(rawStream(`BT /F1 16 Tf 72 700 Td <${codes}> Tj ET`), font, [cidFont, descriptor]);
}

/** Lines written into the pictures of `scannedTextPdf`. */
export const SCANNED_LINES = ['SCANNED INVOICE 4711', 'TOTAL DUE 42 EUR'];

/**
 * A "scanned" document: each page is only a picture of text (rendered from SVG by sharp), no text
 * layer. Page 2 carries /Rotate 90, so a renderer must turn it to show the text upright.
 */
export async function scannedTextPdf(): Promise<Uint8Array> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="300"><rect width="100%" height="100%" fill="white"/>${SCANNED_LINES.map(
    (line, i) => `<text x="40" y="${110 + i * 110}" font-family="DejaVu Sans" font-size="72" fill="black">${line}</text>`,
  ).join('')}</svg>`;
  const png = await sharp(Buffer.from(svg)).png().toBuffer();
  const doc = await PDFDocument.create({ updateMetadata: false });
  const picture = await doc.embedPng(png);
  for (const rotate of [0, 90]) {
    const page = doc.addPage([612, 792]);
    if (rotate) page.setRotation(degrees(rotate));
    // 400 x 100 pt on a portrait page; with /Rotate 90 a viewer turns the page so it reads upright
    // only when the picture is drawn turned the other way, as a scanner writes a landscape scan.
    if (rotate) page.drawImage(picture, { x: 456, y: 96, width: 400, height: 100, rotate: degrees(90) });
    else page.drawImage(picture, { x: 72, y: 600, width: 400, height: 100 });
  }
  return serialize(doc);
}

// ---- Resource bombs ----------------------------------------------------------------------------

/**
 * A zlib stream that inflates to `spaceBytes` spaces followed by `tail`, made without compressing
 * gigabytes: one MiB of spaces compressed with a full flush (which resets the compressor) gives
 * the same bytes every time, so that block is repeated. The Adler-32 checksum is computed in
 * closed form for the spaces.
 */
export function spacesThenText(spaceBytes: number, tail: string): Buffer {
  const chunk = 2 ** 20;
  if (spaceBytes % chunk !== 0) throw new RangeError('spaceBytes must be a whole number of MiB');
  const block = zlib.deflateRawSync(Buffer.alloc(chunk, 0x20), { level: 9, finishFlush: zlib.constants.Z_FULL_FLUSH });
  const end = zlib.deflateRawSync(Buffer.from(tail, 'latin1'), { level: 9 });
  const mod = 65521n;
  const n = BigInt(spaceBytes);
  let a = (1n + 32n * n) % mod;
  let b = (n + (32n * n * (n + 1n)) / 2n) % mod;
  for (const byte of Buffer.from(tail, 'latin1')) {
    a = (a + BigInt(byte)) % mod;
    b = (b + a) % mod;
  }
  const checksum = Buffer.alloc(4);
  checksum.writeUInt32BE(Number((b << 16n) | a));
  const blocks = new Array<Buffer>(spaceBytes / chunk).fill(block);
  return Buffer.concat([Buffer.from([0x78, 0xda]), ...blocks, end, checksum]);
}

const BOMB_TAIL = 'BT /F1 12 Tf 72 720 Td (Text after the bomb) Tj ET\n';

/** A content stream that inflates to 2 GiB of spaces, then a line of text (about 2 MB on disk). */
export function flateBombPdf(): Buffer {
  return onePage(rawStream(spacesThenText(2 * 2 ** 30, BOMB_TAIL), '/Filter /FlateDecode'));
}

/** The same bomb compressed once more: /Filter [/FlateDecode /FlateDecode], a few KB on disk. */
export function chainedFlateBombPdf(): Buffer {
  const inner = spacesThenText(2 * 2 ** 30, BOMB_TAIL);
  return onePage(rawStream(zlib.deflateSync(inner, { level: 9 }), '/Filter [/FlateDecode /FlateDecode]'));
}

/** A page tree whose root claims `claimed` pages but holds one. */
export function lyingCountPdf(claimed: number): Buffer {
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [3 0 R] /Count ${claimed} >>`,
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>',
    HELVETICA,
    rawStream('BT /F1 12 Tf 72 720 Td (The only page) Tj ET'),
  ]);
}

/** A page tree that loops: the root's kid is a Pages node whose kid is the root again. */
export function pageTreeCyclePdf(): Buffer {
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 2 >>',
    '<< /Type /Pages /Parent 2 0 R /Kids [2 0 R 4 0 R] /Count 2 >>',
    '<< /Type /Page /Parent 3 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 6 0 R >>',
    HELVETICA,
    rawStream('BT /F1 12 Tf 72 720 Td (Inside a loop) Tj ET'),
  ]);
}

/** `count` pages sharing one content stream: built in milliseconds, unlike with pdf-lib. */
export function manyPagesPdf(count: number): Buffer {
  const firstPage = 5;
  const kids = Array.from({ length: count }, (_, i) => `${firstPage + i} 0 R`).join(' ');
  return rawPdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${count} >>`,
    HELVETICA,
    rawStream('BT /F1 12 Tf 72 720 Td (One of many pages) Tj ET'),
    ...Array.from({ length: count }, () => '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>'),
  ]);
}
