/**
 * PDFium (Chrome's PDF engine) compiled to WebAssembly, as one engine instance per pool thread.
 *
 * An instance owns one WebAssembly memory, which grows on demand and can never shrink. So the
 * instance is created with a ceiling: the runtime's "grow the heap" call is refused past it, the
 * allocation fails inside PDFium, and the document ends with an error instead of taking the
 * process's memory. The owner then throws the instance away (`spent`) and starts a fresh one.
 */
import { readFile } from 'node:fs/promises';
import { init, type WrappedPdfiumModule } from '@embedpdf/pdfium';

/** The wasm binary ships inside the npm package; nothing is downloaded. */
const WASM_FILE = new URL(import.meta.resolve('@embedpdf/pdfium/pdfium.wasm'));

let compiled: Promise<WebAssembly.Module> | undefined;

/**
 * Compiles the 4.6 MB binary once per process. The compiled module is handed to every pool
 * thread, and V8 shares its machine code between them: a new thread (also one that replaces a
 * retired thread) instantiates without compiling, and the code is held once, not per thread.
 */
export function compiledPdfium(): Promise<WebAssembly.Module> {
  compiled ??= readFile(WASM_FILE).then((bytes) => WebAssembly.compile(bytes));
  return compiled;
}

/** FPDF_GetLastError codes (fpdfview.h). */
const FPDF_ERR_PASSWORD = 4;
const FPDF_ERR_SECURITY = 5;
const LOAD_ERRORS: Record<number, string> = {
  1: 'unknown error',
  2: 'file not found or could not be opened',
  3: 'not a PDF or corrupted',
  [FPDF_ERR_SECURITY]: 'unsupported security scheme',
  6: 'page not found or content error',
};

/** Render flags: annotations drawn, output in shades of grey. */
const RENDER_ANNOTATIONS = 0x01;
const RENDER_GRAYSCALE = 0x08;

export class MemoryCeilingError extends Error {
  constructor(ceilingBytes: number) {
    super(`the document needs more than ${Math.round(ceilingBytes / 2 ** 20)} MB of engine memory`);
    this.name = 'MemoryCeilingError';
  }
}


/** A character's loose box (font ascent to descent, advance width) in page space. */
export interface CharGeometry {
  left: number;
  right: number;
  bottom: number;
  top: number;
}

/**
 * A page's text layer, character by character in PDFium's order, as two parallel arrays: a page
 * holds thousands of characters, and an object each would be garbage for the thread's heap.
 */
export interface PageText {
  /** The Unicode code point of each character. */
  codes: ArrayLike<number>;
  /** 1 where PDFium inserted the character (a space or line break it inferred from the layout). */
  generated: ArrayLike<number>;
  geometry(index: number): CharGeometry;
}

/**
 * The text-layer functions called once per character, taken straight from the instance's exports:
 * the wrapper's generic calling convention allocates on every call, thousands of times a page.
 */
interface PerCharExports {
  FPDFText_GetUnicode(textPage: number, index: number): number;
  FPDFText_IsGenerated(textPage: number, index: number): number;
  FPDFText_GetLooseCharBox(textPage: number, index: number, rect: number): number;
}

export interface RenderedBitmap {
  width: number;
  height: number;
  /** One byte per pixel, rows top to bottom, no padding. */
  gray: Uint8Array;
}

export type OpenResult = { kind: 'ok'; document: EngineDocument } | { kind: 'encrypted' } | { kind: 'invalid'; reason: string };

export class PdfiumEngine {
  readonly #pdfium: WrappedPdfiumModule;
  readonly #memory: WebAssembly.Memory;
  readonly #ceilingBytes: number;
  #ceilingHit = false;
  #crashed = false;

  private constructor(pdfium: WrappedPdfiumModule, memory: WebAssembly.Memory, ceilingBytes: number, ceilingHit: () => boolean) {
    this.#pdfium = pdfium;
    this.#memory = memory;
    this.#ceilingBytes = ceilingBytes;
    Object.defineProperty(this, 'ceilingReached', { get: ceilingHit });
  }

  /**
   * `onLargeHeap` is called once, the first time the engine asks for more than `largeHeapBytes`:
   * the document is a suspected bomb, and its thread can step aside for the others.
   */
  static async create(
    maxMemoryBytes: number,
    compiledModule?: WebAssembly.Module,
    largeHeap?: { bytes: number; onLargeHeap(): void },
  ): Promise<PdfiumEngine> {
    const module = compiledModule ?? (await compiledPdfium());
    let memory: WebAssembly.Memory | undefined;
    let ceilingHit = false;
    // The runtime's `init` never settles when our own instantiation fails (it only rejects for
    // its built-in path), so a failure is raced against it and rejects `create` instead.
    let instantiationFailed!: (error: unknown) => void;
    const failed = new Promise<never>((_resolve, reject) => {
      instantiationFailed = reject;
    });
    const started = init({
      // The runtime prints allocation failures and aborts; they are reported as outcomes instead.
      print: () => undefined,
      printErr: () => undefined,
      instantiateWasm(imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance) => void) {
        const env = imports.env as Record<string, unknown>;
        const grow = env.emscripten_resize_heap as (requested: number) => boolean;
        let warned = false;
        env.emscripten_resize_heap = (requested: number) => {
          if (largeHeap && !warned && requested >>> 0 > largeHeap.bytes) {
            warned = true;
            largeHeap.onLargeHeap();
          }
          if (requested >>> 0 > maxMemoryBytes) {
            ceilingHit = true;
            return false;
          }
          return grow(requested);
        };
        WebAssembly.instantiate(module, imports)
          .then((instance) => {
            memory = instance.exports.memory as WebAssembly.Memory;
            receive(instance);
          })
          .catch(instantiationFailed);
        return {};
      },
    } as Parameters<typeof init>[0]);
    const pdfium = await Promise.race([started, failed]);
    pdfium.PDFiumExt_Init();
    if (!memory) throw new Error('PDFium started without exporting its memory');
    return new PdfiumEngine(pdfium, memory, maxMemoryBytes, () => ceilingHit);
  }

  /** Set when a growth past the ceiling was refused: the instance must be replaced. */
  declare readonly ceilingReached: boolean;

  /** Bytes of WebAssembly memory the instance holds (it never shrinks). */
  get memoryBytes(): number {
    return this.#memory.buffer.byteLength;
  }

  /** True once the instance hit its ceiling or trapped: its state can no longer be trusted. */
  get spent(): boolean {
    return this.ceilingReached || this.#crashed;
  }

  /**
   * Runs `work` and turns an engine failure (a trap, an abort after a refused allocation) into an
   * Error that says what happened, marking the instance spent.
   */
  guard<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      this.#crashed = true;
      if (this.ceilingReached) throw new MemoryCeilingError(this.#ceilingBytes);
      throw error;
    }
  }

  /** Copies the file into the engine and opens it with the empty user password. */
  open(data: Uint8Array): OpenResult {
    return this.guard(() => {
      const pdfium = this.#pdfium;
      const pointer = this.#malloc(Math.max(1, data.byteLength));
      this.#bytes().set(data, pointer);
      const handle = pdfium.FPDF_LoadMemDocument64(pointer, data.byteLength, '');
      if (handle) return { kind: 'ok', document: new EngineDocument(this, pdfium, handle, pointer) };
      this.free(pointer);
      if (this.ceilingReached) throw this.outOfMemory();
      const code = pdfium.FPDF_GetLastError();
      if (code === FPDF_ERR_PASSWORD) return { kind: 'encrypted' };
      return { kind: 'invalid', reason: `PDFium: ${LOAD_ERRORS[code] ?? `error ${code}`}` };
    });
  }

  /** @internal Engine memory as bytes; a fresh view each time, since growth replaces the buffer. */
  #bytes(): Uint8Array {
    return new Uint8Array(this.#memory.buffer);
  }

  /** @internal */
  bytesAt(pointer: number, length: number): Uint8Array {
    return new Uint8Array(this.#memory.buffer, pointer, length);
  }

  /** @internal */
  float32At(pointer: number, count: number): Float32Array {
    return new Float32Array(this.#memory.buffer, pointer, count);
  }

  #malloc(bytes: number): number {
    const pointer = this.#pdfium.pdfium.wasmExports.malloc(bytes);
    if (!pointer) throw this.outOfMemory();
    return pointer;
  }

  /** @internal The error for an allocation PDFium could not make. */
  outOfMemory(): Error {
    this.#crashed = true;
    return this.ceilingReached ? new MemoryCeilingError(this.#ceilingBytes) : new Error('PDFium is out of memory');
  }

  /** @internal */
  malloc(bytes: number): number {
    return this.#malloc(bytes);
  }

  /** @internal */
  free(pointer: number): void {
    this.#pdfium.pdfium.wasmExports.free(pointer);
  }
}

/** An open document. `close()` must be called, also after a failure, unless the engine is spent. */
export class EngineDocument {
  readonly #engine: PdfiumEngine;
  readonly #pdfium: WrappedPdfiumModule;
  readonly #handle: number;
  readonly #dataPointer: number;

  constructor(engine: PdfiumEngine, pdfium: WrappedPdfiumModule, handle: number, dataPointer: number) {
    this.#engine = engine;
    this.#pdfium = pdfium;
    this.#handle = handle;
    this.#dataPointer = dataPointer;
  }

  /** The number of pages the page tree declares. */
  pageCount(): number {
    return this.#engine.guard(() => this.#pdfium.FPDF_GetPageCount(this.#handle));
  }

  /** An Info dictionary entry (decrypted, as text), or undefined when absent. */
  metaText(key: string): string | undefined {
    return this.#engine.guard(() => {
      const pdfium = this.#pdfium;
      const bytes = pdfium.FPDF_GetMetaText(this.#handle, key, 0, 0); // UTF-16LE with its NUL
      if (bytes <= 2) return undefined;
      const buffer = this.#engine.malloc(bytes);
      try {
        pdfium.FPDF_GetMetaText(this.#handle, key, buffer, bytes);
        return new TextDecoder('utf-16le').decode(this.#engine.bytesAt(buffer, bytes - 2));
      } finally {
        this.#engine.free(buffer);
      }
    });
  }

  /**
   * Hands the page's text layer to `read` (0-based page index); page and text layer are released
   * afterwards. Returns null when the page cannot be loaded.
   */
  withPageText<T>(index: number, read: (text: PageText) => T): T | null {
    return this.#engine.guard(() => {
      const pdfium = this.#pdfium;
      const page = pdfium.FPDF_LoadPage(this.#handle, index);
      if (!page) return null;
      const textPage = pdfium.FPDFText_LoadPage(page);
      const box = this.#engine.malloc(16);
      try {
        if (!textPage) return null;
        const native = pdfium.pdfium.wasmExports as unknown as PerCharExports;
        const count = Math.max(0, pdfium.FPDFText_CountChars(textPage));
        const codes = new Uint32Array(count);
        const generated = new Uint8Array(count);
        for (let i = 0; i < count; i++) {
          const code = native.FPDFText_GetUnicode(textPage, i);
          codes[i] = code;
          // PDFium generates only spaces and line breaks, so other characters skip the call (one
          // wasm call fewer for most characters of a page).
          generated[i] = code <= 0x20 && native.FPDFText_IsGenerated(textPage, i) === 1 ? 1 : 0;
        }
        const geometry = (i: number): CharGeometry => {
          native.FPDFText_GetLooseCharBox(textPage, i, box); // FS_RECTF: left, top, right, bottom
          const [left, top, right, bottom] = this.#engine.float32At(box, 4);
          return { left, right, bottom, top };
        };
        return read({ codes, generated, geometry });
      } finally {
        this.#engine.free(box);
        if (textPage) pdfium.FPDFText_ClosePage(textPage);
        pdfium.FPDF_ClosePage(page);
      }
    });
  }

  /**
   * Renders one page (0-based) as displayed, its /Rotate applied, at `dpi`, in shades of grey on
   * white. A page whose bitmap would exceed `maxPixels` is rendered at the largest resolution
   * that fits. Returns null when the page cannot be loaded.
   */
  renderGray(index: number, dpi: number, maxPixels: number): RenderedBitmap | null {
    return this.#engine.guard(() => {
      const pdfium = this.#pdfium;
      const page = pdfium.FPDF_LoadPage(this.#handle, index);
      if (!page) return null;
      let bitmap = 0;
      try {
        // Page size in points, already swapped for a page rotated by 90 or 270 degrees.
        const widthPt = pdfium.FPDF_GetPageWidthF(page);
        const heightPt = pdfium.FPDF_GetPageHeightF(page);
        let scale = dpi / 72;
        const wanted = widthPt * scale * (heightPt * scale);
        if (wanted > maxPixels) scale *= Math.sqrt(maxPixels / wanted);
        const width = Math.max(1, Math.round(widthPt * scale));
        const height = Math.max(1, Math.round(heightPt * scale));
        bitmap = pdfium.FPDFBitmap_Create(width, height, 0); // 0: BGRx, 4 bytes per pixel
        if (!bitmap) throw this.#engine.outOfMemory();
        pdfium.FPDFBitmap_FillRect(bitmap, 0, 0, width, height, 0xffffffff);
        pdfium.FPDF_RenderPageBitmap(bitmap, page, 0, 0, width, height, 0, RENDER_ANNOTATIONS | RENDER_GRAYSCALE);
        const stride = pdfium.FPDFBitmap_GetStride(bitmap);
        const pixels = this.#engine.bytesAt(pdfium.FPDFBitmap_GetBuffer(bitmap), stride * height);
        const gray = new Uint8Array(width * height);
        // Rendered in grayscale, so the three colour bytes are equal: take the green one.
        for (let y = 0; y < height; y++) {
          const row = y * stride;
          const out = y * width;
          for (let x = 0; x < width; x++) gray[out + x] = pixels[row + x * 4 + 1];
        }
        return { width, height, gray };
      } finally {
        if (bitmap) pdfium.FPDFBitmap_Destroy(bitmap);
        pdfium.FPDF_ClosePage(page);
      }
    });
  }

  close(): void {
    if (this.#engine.spent) return; // the instance is discarded whole
    this.#pdfium.FPDF_CloseDocument(this.#handle);
    this.#engine.free(this.#dataPointer);
  }
}
