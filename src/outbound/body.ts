/**
 * Reads a response body under a cap on DECODED bytes. Content-Encoding is undone here, while
 * streaming, so a small compressed body that inflates past the cap (a gzip bomb) is cut off as
 * soon as the cap is crossed instead of being inflated in full.
 */
import { Transform, Writable, type Duplex, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  constants as zlibConstants,
  createBrotliDecompress,
  createGunzip,
  createInflate,
  createZstdDecompress,
} from 'node:zlib';
import { BodyTooLargeError } from './errors.ts';

/** Each coding's decoding stages, in stream order. */
const DECODERS: Record<string, () => Duplex[]> = {
  gzip: () => [createGunzip()],
  'x-gzip': () => [createGunzip()],
  deflate: inflateZlibOrRaw,
  br: () => [createBrotliDecompress()],
  // RFC 9659: decoders may refuse windows above 8 MiB, which bounds a zstd decoder's memory.
  zstd: () => [createZstdDecompress({ params: { [zlibConstants.ZSTD_d_windowLogMax]: 23 } })],
};

/** What the client advertises; zstd is decoded when sent but not asked for. */
export const ACCEPT_ENCODING = 'gzip, deflate, br';

export interface ReadBodyResult {
  body: Buffer;
  /** True when a Content-Encoding was undone (the returned headers must then drop it). */
  decoded: boolean;
}

/**
 * Collects `stream`, undoing `contentEncoding` when every coding in it is supported (otherwise the
 * bytes are returned as received). Throws `BodyTooLargeError` once more than `maxBytes` bytes have
 * been produced; the pipeline then destroys the response stream, which aborts the download.
 * `declaredLength` is the Content-Length, if any, which only counts for an uncoded body.
 */
export async function readBody(
  stream: Readable,
  contentEncoding: string | undefined,
  maxBytes: number,
  declaredLength = Number.NaN,
): Promise<ReadBodyResult> {
  const codings = parseContentEncoding(contentEncoding);
  if (codings === null && declaredLength > maxBytes) {
    // An announced oversize identity body is refused before a byte of it is read.
    stream.destroy();
    throw new BodyTooLargeError(maxBytes);
  }
  const decoders = codings !== null ? codings.reverse().flatMap((coding) => DECODERS[coding]()) : [];

  const chunks: Buffer[] = [];
  let receivedBytes = 0;
  let decodedBytes = 0;
  const countReceived = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      receivedBytes += chunk.length;
      callback(null, chunk);
    },
  });
  const collect = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      decodedBytes += chunk.length;
      if (decodedBytes > maxBytes) {
        callback(new BodyTooLargeError(maxBytes));
        return;
      }
      chunks.push(chunk);
      callback();
    },
  });

  try {
    await pipeline([stream, countReceived, ...decoders, collect]);
  } catch (error) {
    // A coded but empty body (some servers send it on errors) has nothing to decode.
    if (receivedBytes === 0 && decoders.length > 0 && !(error instanceof BodyTooLargeError)) {
      return { body: Buffer.alloc(0), decoded: true };
    }
    throw error;
  }
  return { body: Buffer.concat(chunks, decodedBytes), decoded: decoders.length > 0 };
}

/**
 * The codings to undo, outermost last, or null when the body must be kept as received
 * (no coding, or one this client cannot decode).
 */
function parseContentEncoding(header: string | undefined): string[] | null {
  if (header === undefined) return null;
  const codings = header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length === 0 || codings.some((coding) => !Object.hasOwn(DECODERS, coding))) return null;
  return codings;
}

/**
 * "deflate" should be zlib-wrapped (RFC 9110), but some servers send raw deflate. The first byte
 * tells them apart (a zlib header announces compression method 8), as browsers do; raw data gets
 * a zlib header put in front so one inflater reads both. Raw data has no Adler-32 trailer, hence
 * the lenient end-of-stream flush.
 */
const ZLIB_HEADER = Buffer.from([0x78, 0x9c]);

function inflateZlibOrRaw(): Duplex[] {
  let sniffed = false;
  const addHeaderIfRaw = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      const isRaw = !sniffed && (chunk[0] & 0x0f) !== 0x08;
      sniffed = true;
      callback(null, isRaw ? Buffer.concat([ZLIB_HEADER, chunk]) : chunk);
    },
  });
  return [addHeaderIfRaw, createInflate({ finishFlush: zlibConstants.Z_SYNC_FLUSH })];
}
