import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { CompressionFormat } from 'node:stream/web';
import zlib from 'node:zlib';
import { isMarkedAsUntransferable } from 'node:worker_threads';
import { SyncDecompressionStream, useSyncDecompression } from '../../src/extract/pdf/sync-decompression.ts';

type Format = 'deflate' | 'deflate-raw' | 'gzip' | 'brotli';
type Chunk = ArrayBufferView | ArrayBuffer;
type Outcome = { ok: true; chunks: Uint8Array[]; bytes: Buffer } | { ok: false; error: unknown };

const NodeDecompressionStream = globalThis.DecompressionStream;

/** Drives a decompression stream the way pdf.js does: write everything, close, read to the end. */
async function decompress(Stream: typeof DecompressionStream, format: Format, input: Chunk[]): Promise<Outcome> {
  try {
    const { readable, writable } = new Stream(format as CompressionFormat);
    const writer = writable.getWriter();
    for (const chunk of input) writer.write(chunk as Uint8Array).catch(() => {});
    writer.close().catch(() => {});
    const chunks: Uint8Array[] = [];
    const reader = readable.getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    return { ok: true, chunks, bytes: Buffer.concat(chunks) };
  } catch (error) {
    return { ok: false, error };
  }
}

const sync = (format: Format, ...input: Chunk[]) =>
  decompress(SyncDecompressionStream as unknown as typeof DecompressionStream, format, input);
const node = (format: Format, ...input: Chunk[]) => decompress(NodeDecompressionStream, format, input);

function inflated(outcome: Outcome): Buffer {
  if (!outcome.ok) assert.fail(`expected output, got ${String(outcome.error)}`);
  return outcome.bytes;
}

/** Text that compresses well, as PDF content streams do. */
const TEXT = Buffer.from('BT /F1 12 Tf 72 720 Td (Quarterly report, page one) Tj ET\n'.repeat(400));

test('zlib-wrapped deflate (FlateDecode) inflates to the same bytes as zlib', async () => {
  for (const level of [0, 1, 6, 9]) {
    const compressed = zlib.deflateSync(TEXT, { level });
    assert.deepEqual(inflated(await sync('deflate', compressed)), TEXT, `level ${level}`);
  }
});

test('Brotli (BrotliDecode) inflates to the same bytes as zlib', async () => {
  assert.deepEqual(inflated(await sync('brotli', zlib.brotliCompressSync(TEXT))), TEXT);
});

test('the input may arrive in several chunks, as ArrayBuffer, DataView or a view into a larger buffer', async () => {
  const compressed = zlib.deflateSync(TEXT);
  const pieces = [compressed.subarray(0, 1), compressed.subarray(1, 100), compressed.subarray(100)];
  assert.deepEqual(inflated(await sync('deflate', ...pieces)), TEXT);

  const copy = new Uint8Array(compressed); // owns exactly the compressed bytes
  assert.deepEqual(inflated(await sync('deflate', copy.buffer)), TEXT);
  assert.deepEqual(inflated(await sync('deflate', new DataView(copy.buffer))), TEXT);

  const padded = new Uint8Array(compressed.byteLength + 64).fill(0xee);
  padded.set(compressed, 32);
  const view = padded.subarray(32, 32 + compressed.byteLength);
  assert.deepEqual(inflated(await sync('deflate', view)), TEXT, 'only the view, not its whole buffer');
});

test('large streams: incompressible megabytes and a high-ratio stream come out whole', async () => {
  const noise = randomBytes(3 * 1024 * 1024);
  assert.ok(inflated(await sync('deflate', zlib.deflateSync(noise))).equals(noise));
  const fastBrotli = { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } };
  assert.ok(inflated(await sync('brotli', zlib.brotliCompressSync(noise, fastBrotli))).equals(noise));

  const zeros = Buffer.alloc(32 * 1024 * 1024);
  const compressed = zlib.deflateSync(zeros, { level: 9 });
  assert.ok(compressed.byteLength < 100_000);
  assert.ok(inflated(await sync('deflate', compressed)).equals(zeros));
});

test('the output is one plain Uint8Array owning its memory, like the arrays Node hands pdf.js', async () => {
  // zlib returns outputs under 32 KB as views into Node's shared Buffer pool. pdf.js wraps the
  // decoded bytes in its Stream and reads inline images through `new Stream(bytes.buffer, start)`,
  // from offset 0 of the buffer, and it transfers decoded image bytes (pooled memory cannot be
  // transferred). Sizes on both sides of the pool limit; several runs, because the first
  // allocation of a fresh pool slab happens to sit at offset 0.
  for (const size of [1, 100, 3_000, 16_384, 20_000, 40_000, 200_000]) {
    for (let run = 0; run < 5; run++) {
      Buffer.allocUnsafe(24); // moves the pool's offset, as the rest of a parsing thread does
      const data = randomBytes(size);
      const outcome = await sync('deflate', zlib.deflateSync(data));
      assert.ok(outcome.ok);
      assert.equal(outcome.chunks.length, 1, 'a single chunk');
      const [out] = outcome.chunks;
      assert.equal(Object.getPrototypeOf(out), Uint8Array.prototype, 'not a Buffer (whose slice() does not copy)');
      assert.equal(out.byteOffset, 0, `size ${size}: starts at offset 0 of its buffer`);
      assert.equal(out.buffer.byteLength, size, `size ${size}: its buffer holds only the output`);
      assert.equal(isMarkedAsUntransferable(out.buffer), false, `size ${size}: transferable`);
      assert.deepEqual(Buffer.from(out), data);
    }
  }
});

test('an empty compressed stream gives empty output', async () => {
  assert.equal(inflated(await sync('deflate', zlib.deflateSync(Buffer.alloc(0)))).byteLength, 0);
  assert.equal(inflated(await sync('brotli', zlib.brotliCompressSync(Buffer.alloc(0)))).byteLength, 0);
});

/**
 * pdf.js falls back to its own decoder whenever the stream fails, so the sync stream must fail
 * (with no partial output that pdf.js would take as the whole) exactly where Node's does.
 */
test('damaged input fails exactly where Node’s DecompressionStream fails', async () => {
  const deflated = zlib.deflateSync(TEXT);
  const brotli = zlib.brotliCompressSync(TEXT);
  const cases: Array<[string, Format, Chunk[]]> = [
    ['truncated deflate', 'deflate', [deflated.subarray(0, deflated.byteLength >> 1)]],
    ['deflate missing its Adler-32 checksum', 'deflate', [deflated.subarray(0, -4)]],
    ['deflate with a wrong checksum', 'deflate', [Buffer.concat([deflated.subarray(0, -1), Buffer.from([deflated.at(-1)! ^ 0xff])])]],
    ['deflate with bytes after the end', 'deflate', [Buffer.concat([deflated, Buffer.from('\r\nendstream')])]],
    ['two deflate streams back to back', 'deflate', [Buffer.concat([deflated, deflated])]],
    ['raw deflate without the zlib header', 'deflate', [zlib.deflateRawSync(TEXT)]],
    ['gzip given as deflate', 'deflate', [zlib.gzipSync(TEXT)]],
    ['a corrupt deflate block', 'deflate', [Buffer.from([0x78, 0x9c, 0xff, 0xff, 0xff, 0x01, 0x02, 0x03])]],
    ['a bad zlib header', 'deflate', [Buffer.from([0x78, 0x00, 0xff, 0x00])]],
    ['no input at all', 'deflate', []],
    ['an empty chunk', 'deflate', [new Uint8Array(0)]],
    ['truncated Brotli', 'brotli', [brotli.subarray(0, brotli.byteLength - 3)]],
    ['Brotli with bytes after the end', 'brotli', [Buffer.concat([brotli, Buffer.from('junk')])]],
    ['no Brotli input', 'brotli', []],
    ['random bytes as Brotli', 'brotli', [randomBytes(2048)]],
  ];
  for (const [name, format, input] of cases) {
    const expected = await node(format, ...input);
    const actual = await sync(format, ...input);
    assert.equal(actual.ok, expected.ok, `${name}: sync ${actual.ok ? 'succeeded' : 'failed'}, Node's stream ${expected.ok ? 'succeeded' : 'failed'}`);
    if (actual.ok && expected.ok) assert.deepEqual(actual.bytes, expected.bytes, name);
  }
  // The cases above must actually exercise failures.
  assert.equal((await sync('deflate', deflated.subarray(0, -4))).ok, false);
  assert.equal((await sync('deflate', Buffer.concat([deflated, Buffer.from('x')]))).ok, false);
  assert.equal((await sync('brotli', brotli.subarray(0, -3))).ok, false);
});

test('formats pdf.js does not ask for are Node’s own stream', async () => {
  const raw = new SyncDecompressionStream('deflate-raw' as CompressionFormat);
  assert.ok(raw instanceof NodeDecompressionStream);
  assert.deepEqual(inflated(await sync('deflate-raw', zlib.deflateRawSync(TEXT))), TEXT);
  assert.deepEqual(inflated(await sync('gzip', zlib.gzipSync(TEXT))), TEXT);
  assert.ok(!(new SyncDecompressionStream('deflate' as CompressionFormat) instanceof NodeDecompressionStream));
});

test('useSyncDecompression replaces the global DecompressionStream pdf.js constructs', async () => {
  try {
    useSyncDecompression();
    assert.equal(globalThis.DecompressionStream, SyncDecompressionStream as unknown);
    assert.deepEqual(inflated(await decompress(globalThis.DecompressionStream, 'deflate', [zlib.deflateSync(TEXT)])), TEXT);
  } finally {
    globalThis.DecompressionStream = NodeDecompressionStream;
  }
});
