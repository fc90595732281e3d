/**
 * pdf.js's data files (packed CMaps, standard-14 font programs, wasm decoders) kept in memory once
 * read. pdf.js only caches them per document, so without this every document that uses, say, an
 * unembedded Times reads FoxitSerif.pfb from disk again, through a few thread-pool round trips.
 * The three folders hold about 4 MB in all, which bounds what a thread can keep.
 */
import { readFile } from 'node:fs/promises';

/** The `kind` pdf.js passes: the name of the option that holds the folder. */
type DataKind = 'cMapUrl' | 'standardFontDataUrl' | 'wasmUrl';

const loadedFiles = new Map<string, Promise<Uint8Array>>();

function readOnce(file: string): Promise<Uint8Array> {
  let bytes = loadedFiles.get(file);
  if (!bytes) {
    bytes = readFile(file).then((data) => new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    bytes.catch(() => loadedFiles.delete(file)); // a failed read is tried again by the next document
    loadedFiles.set(file, bytes);
  }
  return bytes;
}

/**
 * pdf.js's `BinaryDataFactory` option: it is constructed with the folder options and asked for one
 * file at a time. pdf.js copies what it receives before the document uses it, so the bytes kept
 * here are shared by every document of the thread and never modified.
 */
export class CachedDataFiles {
  readonly #folders: Record<DataKind, string | null>;

  constructor({ cMapUrl = null, standardFontDataUrl = null, wasmUrl = null }: Partial<Record<DataKind, string | null>>) {
    this.#folders = { cMapUrl, standardFontDataUrl, wasmUrl };
  }

  async fetch({ kind, filename }: { kind: DataKind; filename: string }): Promise<Uint8Array> {
    const folder = this.#folders[kind];
    if (!folder) throw new Error(`pdf.js asked for ${kind} data, but that folder is not configured`);
    return readOnce(folder + filename);
  }
}
