/**
 * Sitemaps (sitemaps.org protocol 0.9): an XML `<urlset>` of pages, an XML `<sitemapindex>` of
 * further sitemaps, or plain text with one URL per line; any of them gzipped. Pure: bytes in,
 * URLs out.
 */
import { gunzipSync } from 'node:zlib';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { Adapter, ParseOutcome, UpstreamResponse } from '../kit/types.ts';
import { headerValue } from '../kit/decode.ts';

/** URLs (or child sitemaps) read from one file at most: the protocol's own limit. */
export const MAX_SITEMAP_ENTRIES = 50_000;
/** The protocol's limit on one file, uncompressed; also the cap of a gunzipped body (a gzip bomb stops there). */
export const MAX_SITEMAP_BYTES = 50 * 1024 * 1024;

export type SitemapFile = { kind: 'urlset'; urls: string[] } | { kind: 'index'; sitemaps: string[] } | { kind: 'invalid'; reason: string };

const xml = new XMLParser({
  // `<sm:urlset xmlns:sm=…>` reads as `urlset`; attributes (xmlns, hreflang) say nothing we use.
  removeNSPrefix: true,
  ignoreAttributes: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  // URLs stay strings ("1e3" is not a number); CDATA is merged into the text; whitespace is trimmed.
  parseTagValue: false,
  trimValues: true,
  // Numeric character references (`&#38;`) are plain XML, but the parser decodes them only with this on.
  htmlEntities: true,
  isArray: (name) => name === 'url' || name === 'sitemap' || name === 'loc',
});

const GZIP_MAGIC = [0x1f, 0x8b];

/**
 * Reads one sitemap file. Gzip is recognised by its magic bytes whatever the content type says
 * (`.xml.gz` files are served as anything). A body starting with `<` is XML; anything else is
 * read as a text sitemap (http(s) lines kept, other lines ignored). Sitemaps are UTF-8 by the
 * protocol. At most `MAX_SITEMAP_ENTRIES` entries are kept, in file order.
 *
 * XML must be well-formed (a truncated or mangled file is `invalid`, with the parser's reason),
 * with one allowance: an unescaped `&` in a URL, common in real sitemaps, is read as `&amp;`.
 */
export function parseSitemap(bytes: Uint8Array, contentType?: string): SitemapFile {
  let body = bytes;
  if (body.length >= 2 && body[0] === GZIP_MAGIC[0] && body[1] === GZIP_MAGIC[1]) {
    try {
      body = gunzipSync(body, { maxOutputLength: MAX_SITEMAP_BYTES });
    } catch (error) {
      const tooLarge = error instanceof RangeError || (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
      return { kind: 'invalid', reason: tooLarge ? `more than ${MAX_SITEMAP_BYTES} bytes once decompressed` : 'corrupt gzip data' };
    }
  }
  const text = new TextDecoder('utf-8').decode(body).replace(/^\uFEFF/, '').trim();
  if (text === '') return { kind: 'invalid', reason: 'empty file' };
  if (text.startsWith('<')) return readXml(text);
  if (contentType !== undefined && /html|xml/i.test(contentType)) return { kind: 'invalid', reason: `not a sitemap (${contentType.split(';')[0].trim()})` };
  return readText(text);
}

/** An `&` that starts no entity or character reference: invalid XML, and common in real sitemaps' URLs. */
const BARE_AMPERSAND = /&(?![A-Za-z][\w.-]*;|#\d+;|#x[\dA-Fa-f]+;)/g;

function readXml(text: string): SitemapFile {
  let source = text;
  let validity = XMLValidator.validate(source);
  if (validity !== true) {
    const repaired = source.replace(BARE_AMPERSAND, '&amp;');
    if (repaired !== source) {
      source = repaired;
      validity = XMLValidator.validate(source);
    }
  }
  if (validity !== true) return { kind: 'invalid', reason: `malformed XML: ${validity.err.msg} (line ${validity.err.line})` };
  let document: Record<string, unknown>;
  try {
    document = xml.parse(source) as Record<string, unknown>;
  } catch (error) {
    return { kind: 'invalid', reason: `malformed XML: ${error instanceof Error ? error.message : String(error)}` };
  }
  const urlset = childObject(document, 'urlset');
  if (urlset !== undefined) return { kind: 'urlset', urls: locations(urlset.url) };
  const index = childObject(document, 'sitemapindex');
  if (index !== undefined) return { kind: 'index', sitemaps: locations(index.sitemap) };
  const root = Object.keys(document)[0];
  return { kind: 'invalid', reason: root === undefined ? 'no XML element' : `not a sitemap: the root element is <${root}>` };
}

/** `<urlset>` or `<sitemapindex>` as parsed: an object, or "" when it is empty (`<urlset/>`). */
function childObject(document: Record<string, unknown>, name: string): Record<string, unknown> | undefined {
  if (!(name in document)) return undefined;
  const value = document[name];
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The `<loc>` of each `<url>` or `<sitemap>` entry, in order, up to the protocol's limit. */
function locations(entries: unknown): string[] {
  const found: string[] = [];
  if (!Array.isArray(entries)) return found;
  for (const entry of entries) {
    if (found.length >= MAX_SITEMAP_ENTRIES) break;
    if (typeof entry !== 'object' || entry === null) continue;
    const locs = (entry as { loc?: unknown }).loc;
    const loc = Array.isArray(locs) ? locs[0] : undefined;
    // `loc` is text; an object means markup inside it, which no sitemap has.
    if (typeof loc === 'string' && loc !== '') found.push(loc.trim());
  }
  return found;
}

function readText(text: string): SitemapFile {
  const urls: string[] = [];
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (urls.length >= MAX_SITEMAP_ENTRIES) break;
    const candidate = line.trim();
    if (/^https?:\/\/\S+$/i.test(candidate)) urls.push(candidate);
  }
  return urls.length > 0 ? { kind: 'urlset', urls } : { kind: 'invalid', reason: 'no URL in a text file' };
}

export interface SitemapParams {
  url: string;
}

/**
 * One sitemap file: its entries for a 2xx; `not_found` for 404 and 410; the server refusing or
 * failing is `blocked`; a body that is no sitemap is `changed` (an answer we cannot read).
 */
export function parseSitemapResponse(response: UpstreamResponse): ParseOutcome<Exclude<SitemapFile, { kind: 'invalid' }>> {
  const { status } = response;
  if (status === 404 || status === 410) return { kind: 'not_found' };
  if (status < 200 || status >= 300) return { kind: 'blocked', reason: `the sitemap answered ${status}` };
  const file = parseSitemap(response.bytes ?? Buffer.from(response.body, 'utf8'), headerValue(response.headers, 'content-type'));
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
