/**
 * The caller's request headers, made safe to forward, and the target's response headers, made
 * honest about the body we return.
 *
 * Refused from the caller: hop-by-hop headers (they describe our connection, not theirs), Host
 * (the URL decides where the request goes; a forged Host reaches virtual hosts the URL does not
 * name), Content-Length (computed from the body), Accept-Encoding (the client decodes what it
 * advertises itself, which is what keeps the 10 MB cap on decoded bytes), and every `Proxy-*`
 * header, which would be read by our egress proxy as if it came from us.
 */

/** Connection-scoped headers (RFC 9110 §7.6.1) and the ones the client sets itself. */
const REFUSED_REQUEST_HEADERS = new Set([
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'accept-encoding',
  'expect',
  'http2-settings',
]);

/** RFC 9110 token characters: what a header name may be made of. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/**
 * Field values (RFC 9110 §5.5): visible Latin-1, space and tab. No CR, LF or NUL (header
 * injection), no other control character (C1 included), and nothing past U+00FF: a header is
 * bytes, so the outbound client cannot send such a value, and it is a 422 here, not a 502 later.
 */
const HEADER_VALUE = /^[\t\x20-\x7e\xa0-\xff]*$/;

export const MAX_REQUEST_HEADERS = 50;

/** True when `value` is an object whose entries are valid header names with string values. */
export function isHeaderObject(value: unknown): value is Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  if (entries.length > MAX_REQUEST_HEADERS) return false;
  return entries.every(([name, field]) => HEADER_NAME.test(name) && typeof field === 'string' && HEADER_VALUE.test(field) && field.length <= 8192);
}

/** The caller's headers minus the refused ones (names lower-cased; a header the Connection header names goes too). */
export function forwardableRequestHeaders(headers: Record<string, string>): Record<string, string> {
  const named = new Set<string>();
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === 'connection') for (const token of value.split(',')) named.add(token.trim().toLowerCase());
  }
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (REFUSED_REQUEST_HEADERS.has(lower) || lower.startsWith('proxy-') || named.has(lower)) continue;
    kept[lower] = value;
  }
  return kept;
}

/** Headers about the connection or the bytes on the wire, which the returned text no longer matches. */
const DROPPED_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'content-length', 'content-encoding', 'trailer', 'upgrade']);

/** The target's response headers as returned to the caller: lower-case names, transfer headers left out. */
export function returnedResponseHeaders(headers: Record<string, string>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!DROPPED_RESPONSE_HEADERS.has(lower)) kept[lower] = value;
  }
  return kept;
}
