/**
 * Which answers are web pages. /v1/web returns text; an image, a PDF or an archive is not one
 * (422 "The url must point to a web page."), and the other endpoints are there for documents.
 * Known text types pass, known binary types do not, and an answer without a usable type is
 * judged by its first bytes, as browsers sniff.
 */

const TEXT_APPLICATION_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/javascript',
  'application/x-javascript',
  'application/ecmascript',
  'application/x-www-form-urlencoded',
  'application/graphql',
  'application/x-ndjson',
  'application/ndjson',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/sql',
  'application/x-sh',
  'application/csv',
]);

/** The media type without parameters, lower case; undefined when absent or malformed. */
export function mediaType(contentType: string | undefined): string | undefined {
  const type = contentType?.split(';')[0].trim().toLowerCase();
  return type && /^[\w.+-]+\/[\w.+-]+$/.test(type) ? type : undefined;
}

export function isHtmlType(contentType: string | undefined, body: string): boolean {
  const type = mediaType(contentType);
  if (type === 'text/html' || type === 'application/xhtml+xml') return true;
  if (type !== undefined && type !== 'text/plain' && type !== 'application/octet-stream') return false;
  return /^\s*(<!doctype html|<html|<head|<body)/i.test(body.slice(0, 512));
}

/** True for a textual answer. `sample` is the start of the body, sniffed when the type says nothing. */
export function isWebContent(contentType: string | undefined, sample: Uint8Array): boolean {
  const type = mediaType(contentType);
  if (type !== undefined) {
    if (type.startsWith('text/')) return true;
    if (type.endsWith('+xml') || type.endsWith('+json')) return true;
    if (TEXT_APPLICATION_TYPES.has(type)) return true;
    // Declared binary: only an empty body (nothing to misread) passes.
    if (type === 'application/octet-stream' || type === 'binary/octet-stream') return sample.length === 0;
    if (type !== 'application/unknown') return false;
  }
  return looksLikeText(sample);
}

/** No NUL and no other C0 control bytes but whitespace in the first KB (text in any ASCII-based or UTF-16-with-BOM encoding). */
function looksLikeText(sample: Uint8Array): boolean {
  const head = sample.subarray(0, 1024);
  if ((head[0] === 0xfe && head[1] === 0xff) || (head[0] === 0xff && head[1] === 0xfe)) return true;
  for (const byte of head) {
    if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c && byte !== 0x1b) return false;
  }
  return true;
}
