/**
 * Sitemaps (sitemaps.org protocol 0.9): an XML `<urlset>` of pages, an XML `<sitemapindex>` of
 * further sitemaps, or plain text with one URL per line; any of them gzipped. Bytes in, URLs out,
 * read in slices (issue 33): a 50 MB file never holds the shared event loop for more than a slice.
 */
import { promisify } from 'node:util';
import { gunzip as gunzipCallback } from 'node:zlib';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { Parser } from 'htmlparser2';
import type { Adapter, ParseOutcome, UpstreamResponse } from '../kit/types.ts';
import { headerValue } from '../kit/decode.ts';
import { SLICE_MS } from '../../core/time-slice.ts';
import { MAX_URL_LENGTH } from '../../core/limits.ts';

/** URLs (or child sitemaps) read from one file at most: the protocol's own limit. */
export const MAX_SITEMAP_ENTRIES = 50_000;
/** The protocol's limit on one file, uncompressed; also the cap of a gunzipped body (a gzip bomb stops there). */
export const MAX_SITEMAP_BYTES = 50 * 1024 * 1024;

export type SitemapFile = { kind: 'urlset'; urls: string[] } | { kind: 'index'; sitemaps: string[] } | { kind: 'invalid'; reason: string };

const gunzip = promisify(gunzipCallback);

/** Bytes handed to the XML reader (or scanned) at a time: a few milliseconds of work each. */
const CHUNK_BYTES = 64 * 1024;

/** Yields to the event loop once `SLICE_MS` of work has passed since the last turn. */
class Slices {
  private sliceStart = performance.now();

  async pause(): Promise<void> {
    if (performance.now() - this.sliceStart < SLICE_MS) return;
    await yieldToLoop();
    this.sliceStart = performance.now();
  }
}

const GZIP_MAGIC = [0x1f, 0x8b];
const BOM = [0xef, 0xbb, 0xbf];
const isBlankByte = (byte: number) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

/**
 * Reads one sitemap file. Gzip is recognised by its magic bytes whatever the content type says
 * (`.xml.gz` files are served as anything), and inflated off the event loop. A body starting with
 * `<` is XML; anything else is read as a text sitemap (http(s) lines kept, other lines ignored).
 * Sitemaps are UTF-8 by the protocol. At most `MAX_SITEMAP_ENTRIES` entries are kept, in file
 * order; reading stops there.
 *
 * XML must be well-formed as far as it is read (a truncated or mangled file is `invalid`, with the
 * reason and its line), with one allowance: an unescaped `&` in a URL, common in real sitemaps, is
 * read as written.
 */
export async function parseSitemap(bytes: Uint8Array, contentType?: string): Promise<SitemapFile> {
  let body = bytes;
  if (body.length >= 2 && body[0] === GZIP_MAGIC[0] && body[1] === GZIP_MAGIC[1]) {
    try {
      body = await gunzip(body, { maxOutputLength: MAX_SITEMAP_BYTES });
    } catch (error) {
      const tooLarge = error instanceof RangeError || (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
      return { kind: 'invalid', reason: tooLarge ? `more than ${MAX_SITEMAP_BYTES} bytes once decompressed` : 'corrupt gzip data' };
    }
  }
  const slices = new Slices();
  let start = body.length >= 3 && body[0] === BOM[0] && body[1] === BOM[1] && body[2] === BOM[2] ? 3 : 0;
  // Leading blanks, a chunk at a time: a file of 50 MB of spaces is no reason to hold the loop.
  for (;;) {
    const stop = Math.min(body.length, start + CHUNK_BYTES);
    while (start < stop && isBlankByte(body[start])) start += 1;
    if (start < stop || start >= body.length) break;
    await slices.pause();
  }
  if (start >= body.length) return { kind: 'invalid', reason: 'empty file' };
  const rest = body.subarray(start);
  if (rest[0] === 0x3c /* < */) return readXml(rest, slices);
  if (contentType !== undefined && /html|xml/i.test(contentType)) return { kind: 'invalid', reason: `not a sitemap (${contentType.split(';')[0].trim()})` };
  return readText(rest, slices);
}

/** `sm:urlset` is `urlset`: the namespace prefix says nothing we use. */
const localName = (name: string) => name.slice(name.indexOf(':') + 1);

/**
 * A `<loc>` longer than this (before trimming) is no URL the service would fetch (`MAX_URL_LENGTH`
 * applies to every URL): its entry is skipped, and its text is not kept growing.
 */
const MAX_LOC_CHARS = 2 * MAX_URL_LENGTH;

/**
 * The streaming reader's state. htmlparser2 forgives what XML does not (a missing or mismatched
 * close tag, text after the root), so the checks that make a file well-formed enough are here:
 * one root, `<urlset>` or `<sitemapindex>`; every element closed by its own close tag; nothing
 * but blanks, comments and processing instructions outside the root. A close tag that matches no
 * open element is skipped, as htmlparser2 does; a DTD's internal subset (`<!DOCTYPE x [ … ]>`, in
 * no sitemap) leaves text before the root, and the file is invalid.
 */
class SitemapReader {
  root: 'urlset' | 'sitemapindex' | undefined;
  rootClosed = false;
  /** Set once the file is decided: an error, a root that is no sitemap, or the entry limit reached. */
  verdict: SitemapFile | undefined;
  /** Where the parser was when the file was found malformed (a character index in the text). */
  errorAt = 0;
  readonly entries: string[] = [];
  ending = false;

  /** Open elements, innermost last: local name and where its open tag started. */
  private readonly open: { name: string; start: number }[] = [];
  /** Within an entry (`<url>` or `<sitemap>`): its `<loc>` text, once one was read or is being read. */
  private inEntry = false;
  private loc: string | undefined;
  private locState: 'none' | 'reading' | 'read' | 'skip' = 'none';

  readonly parser = new Parser(
    {
      onopentag: (name) => this.onopentag(name),
      onclosetag: (name, isImplied) => this.onclosetag(name, isImplied),
      ontext: (text) => this.ontext(text),
    },
    { xmlMode: true },
  );

  private fail(reason: string): void {
    if (this.verdict !== undefined) return;
    this.errorAt = this.parser.endIndex;
    this.verdict = { kind: 'invalid', reason };
  }

  onopentag(qualified: string): void {
    if (this.verdict !== undefined) return;
    const name = localName(qualified);
    const depth = this.open.length;
    this.open.push({ name, start: this.parser.startIndex });
    if (depth === 0) {
      if (this.rootClosed) return this.fail(`malformed XML: a second root element <${qualified}> after the document's end`);
      if (name !== 'urlset' && name !== 'sitemapindex') {
        this.verdict = { kind: 'invalid', reason: `not a sitemap: the root element is <${name}>` };
        return;
      }
      this.root = name;
      return;
    }
    if (depth === 1 && name === (this.root === 'urlset' ? 'url' : 'sitemap')) {
      this.inEntry = true;
      this.loc = undefined;
      this.locState = 'none';
      return;
    }
    if (!this.inEntry) return;
    if (depth === 2 && name === 'loc' && this.locState === 'none') {
      this.locState = 'reading';
      this.loc = '';
    } else if (this.locState === 'reading') {
      // Markup inside `<loc>`, which no sitemap has: no URL.
      this.locState = 'skip';
    }
  }

  ontext(text: string): void {
    if (this.verdict !== undefined) return;
    if (this.open.length === 0) {
      if (text.trim() !== '') this.fail(`malformed XML: text ${this.rootClosed ? 'after the root element' : 'before the root element'}`);
      return;
    }
    if (this.locState !== 'reading' || this.open.length !== 3) return;
    this.loc += text;
    if ((this.loc ?? '').length > MAX_LOC_CHARS) this.locState = 'skip';
  }

  onclosetag(qualified: string, isImplied: boolean): void {
    if (this.verdict !== undefined) return;
    const element = this.open.pop();
    if (element === undefined) return;
    // htmlparser2 closes a self-closing tag (`<urlset/>`) as implied, from within its own open tag.
    const selfClosing = isImplied && !this.ending && this.parser.startIndex === element.start;
    if (isImplied && !selfClosing) {
      return this.fail(this.ending ? `malformed XML: the file ends inside <${qualified}> (truncated)` : `malformed XML: <${qualified}> is not closed before its parent's close tag`);
    }
    const depth = this.open.length;
    if (depth === 0) {
      this.rootClosed = true;
      return;
    }
    if (!this.inEntry) return;
    if (depth === 2 && element.name === 'loc' && this.locState === 'reading') {
      this.locState = 'read';
      this.loc = this.loc?.trim();
    } else if (depth === 1) {
      this.inEntry = false;
      if (this.locState === 'read' && this.loc !== undefined && this.loc !== '' && this.loc.length <= MAX_URL_LENGTH) this.entries.push(this.loc);
      if (this.entries.length >= MAX_SITEMAP_ENTRIES) this.verdict = this.result();
    }
  }

  /** What the file came to, read to its end (or to the entry limit). */
  result(): SitemapFile {
    if (this.verdict !== undefined) return this.verdict;
    if (this.root === undefined) return { kind: 'invalid', reason: 'malformed XML: no root element' };
    return this.root === 'urlset' ? { kind: 'urlset', urls: this.entries } : { kind: 'index', sitemaps: this.entries };
  }
}

/** How many line breaks `text` holds before `end`. */
function lineBreaks(text: string, end = text.length): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1 && at < end; at = text.indexOf('\n', at + 1)) count += 1;
  return count;
}

/**
 * XML through htmlparser2's streaming parser in XML mode, fed a chunk at a time with a turn of the
 * event loop every `SLICE_MS`. Entities (the XML five and character references) and CDATA are
 * read; no DTD or external entity is ever fetched or expanded.
 */
async function readXml(body: Uint8Array, slices: Slices): Promise<SitemapFile> {
  const decoder = new TextDecoder('utf-8');
  const reader = new SitemapReader();
  const { parser } = reader;
  // Line breaks before the chunk being read, and where that chunk starts: for an error's line.
  let linesBefore = 0;
  let chunkStart = 0;
  let chunk = '';
  const lineOf = (index: number) => linesBefore + (index >= chunkStart ? lineBreaks(chunk, index - chunkStart) : 0) + 1;
  for (let offset = 0; offset < body.length && reader.verdict === undefined; offset += CHUNK_BYTES) {
    linesBefore += lineBreaks(chunk);
    chunkStart += chunk.length;
    chunk = decoder.decode(body.subarray(offset, offset + CHUNK_BYTES), { stream: true });
    parser.write(chunk);
    await slices.pause();
  }
  if (reader.verdict === undefined) {
    linesBefore += lineBreaks(chunk);
    chunkStart += chunk.length;
    chunk = decoder.decode();
    reader.ending = true;
    parser.end(chunk);
  }
  const file = reader.result();
  return file.kind === 'invalid' && file.reason.startsWith('malformed XML') ? { kind: 'invalid', reason: `${file.reason} (line ${lineOf(reader.errorAt)})` } : file;
}

/** One URL a line; lines are read a slice at a time. */
async function readText(body: Uint8Array, slices: Slices): Promise<SitemapFile> {
  const decoder = new TextDecoder('utf-8');
  const urls: string[] = [];
  let pending = '';
  /** The line being read went past any URL's length: it is dropped when it ends. */
  let overlong = false;
  const take = (line: string) => {
    const candidate = line.trim();
    if (urls.length < MAX_SITEMAP_ENTRIES && /^https?:\/\/\S+$/i.test(candidate)) urls.push(candidate);
  };
  for (let offset = 0; offset < body.length && urls.length < MAX_SITEMAP_ENTRIES; offset += CHUNK_BYTES) {
    const lines = (pending + decoder.decode(body.subarray(offset, offset + CHUNK_BYTES), { stream: true })).split(/\r\n|\r|\n/);
    // The last piece may go on in the next chunk (a `\r\n` split between chunks is one break: the
    // empty line it would make is ignored like any other).
    pending = lines.pop() ?? '';
    if (lines.length > 0 && overlong) {
      lines.shift();
      overlong = false;
    }
    for (const line of lines) take(line);
    // A "line" of megabytes is no URL: it is not kept growing.
    if (pending.length > MAX_LOC_CHARS) {
      pending = '';
      overlong = true;
    }
    await slices.pause();
  }
  const last = pending + decoder.decode();
  if (urls.length < MAX_SITEMAP_ENTRIES && !overlong) take(last);
  return urls.length > 0 ? { kind: 'urlset', urls } : { kind: 'invalid', reason: 'no URL in a text file' };
}

export interface SitemapParams {
  url: string;
}

/**
 * One sitemap file: its entries for a 2xx; `not_found` for 404 and 410; the server refusing or
 * failing is `blocked`; a body that is no sitemap is `changed` (an answer we cannot read).
 */
export async function parseSitemapResponse(response: UpstreamResponse): Promise<ParseOutcome<Exclude<SitemapFile, { kind: 'invalid' }>>> {
  const { status } = response;
  if (status === 404 || status === 410) return { kind: 'not_found' };
  if (status < 200 || status >= 300) return { kind: 'blocked', reason: `the sitemap answered ${status}` };
  const file = await parseSitemap(response.bytes ?? Buffer.from(response.body, 'utf8'), headerValue(response.headers, 'content-type'));
  if (file.kind === 'invalid') return { kind: 'changed', reason: file.reason };
  return { kind: 'ok', value: file };
}

/** GET one sitemap file. Call it with `maxBytes: MAX_SITEMAP_BYTES`: adapters declare no size cap, calls do. */
export const sitemapAdapter: Adapter<SitemapParams, Exclude<SitemapFile, { kind: 'invalid' }>> = {
  upstream: 'site',
  operation: 'sitemap',
  idempotent: true,
  buildRequest: ({ url }) => ({ url, method: 'GET', headers: { accept: 'application/xml, text/xml, text/plain;q=0.9, */*;q=0.5' } }),
  parse: (response) => parseSitemapResponse(response),
};
