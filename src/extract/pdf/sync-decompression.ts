/**
 * A DecompressionStream that inflates in one synchronous zlib call, for the parsing threads.
 *
 * pdf.js decodes every Flate or Brotli stream of 1 KB or more through the web DecompressionStream.
 * In Node that stream sends the data through several stream layers to the libuv thread pool and
 * back, and the parsing thread waits for each round trip: a 117-page book makes about 150 of them
 * per document. Inflating in place gives the same bytes with less CPU and no waiting.
 *
 * It fails where Node's stream fails (corrupt or truncated data, bytes after the end of the
 * compressed data), so pdf.js falls back to its own decoder on exactly the same streams as before.
 */
import type { CompressionFormat } from 'node:stream/web';
import zlib from 'node:zlib';

type BufferSource = ArrayBufferView | ArrayBuffer;

type InflateWithInfo = (input: Uint8Array, options: { info: true }) => { buffer: Buffer; engine: { bytesWritten: number } };

/** The formats pdf.js asks for; any other is left to Node's own stream. */
const INFLATERS: Partial<Record<CompressionFormat, InflateWithInfo>> = {
  deflate: zlib.inflateSync as unknown as InflateWithInfo,
  brotli: zlib.brotliDecompressSync as unknown as InflateWithInfo,
};

const NodeDecompressionStream = globalThis.DecompressionStream;

function inflateWhole(inflate: InflateWithInfo, chunks: Uint8Array[]): Uint8Array {
  const input = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  const { buffer, engine } = inflate(input, { info: true });
  // Node's DecompressionStream rejects data after the end of the stream, so this must too.
  if (engine.bytesWritten < input.byteLength) {
    throw new TypeError('Trailing junk found after the end of the compressed stream');
  }
  // zlib returns outputs under 32 KB as views into Node's shared Buffer pool. pdf.js reads inline
  // images through its Stream's `bytes.buffer` from offset 0 and transfers decoded image bytes,
  // so it gets an array that owns its memory, as from Node's stream (a copy of at most 32 KB).
  const ownsBuffer = buffer.byteOffset === 0 && buffer.byteLength === buffer.buffer.byteLength;
  return ownsBuffer ? new Uint8Array(buffer.buffer) : new Uint8Array(buffer);
}

function asBytes(chunk: BufferSource): Uint8Array {
  return ArrayBuffer.isView(chunk)
    ? new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    : new Uint8Array(chunk);
}

export class SyncDecompressionStream {
  readonly readable!: ReadableStream<Uint8Array>;
  readonly writable!: WritableStream<BufferSource>;

  constructor(format: CompressionFormat) {
    const inflate = INFLATERS[format];
    if (!inflate) return new NodeDecompressionStream(format);
    const chunks: Uint8Array[] = [];
    const { readable, writable } = new TransformStream<BufferSource, Uint8Array>({
      transform(chunk) {
        chunks.push(asBytes(chunk));
      },
      flush(controller) {
        controller.enqueue(inflateWhole(inflate, chunks));
      },
    });
    this.readable = readable;
    this.writable = writable;
  }
}

/** Makes pdf.js in this thread inflate synchronously. Call once, in a parsing thread only. */
export function useSyncDecompression(): void {
  globalThis.DecompressionStream = SyncDecompressionStream as unknown as typeof DecompressionStream;
}
