/**
 * What request history keeps of a request's input: a bounded summary, never the input as sent
 * (docs/api.md, "Account, history and usage"). Refused requests are recorded too (403, 422...), so without bounds
 * a client with no credits could write megabytes per request for free, and a page of history
 * would carry them all back.
 *
 * - Only the fields the route's schema declares, in its order; unknown fields are dropped, and so
 *   are secret ones (`secret: true`: secret keys, /v1/web's headers and body).
 * - A string longer than HISTORY_VALUE_MAX_CHARS characters is cut there and ends with CUT_MARKER.
 *   An array or object is kept as it is when its JSON fits in as many characters, else stored as
 *   its JSON text, cut the same way. Nesting is cut at MAX_STORED_DEPTH levels.
 * - The whole summary is at most HISTORY_PARAMS_MAX_BYTES of JSON (UTF-8): a field that would pass
 *   it is cut shorter, down to the marker alone, and the fields after one that no longer fits at
 *   all are left out.
 */
import type { Schema } from '../validation/schema.ts';
import { MAX_STORED_DEPTH, TOO_DEEP } from '../storage/jsonb.ts';

export const HISTORY_VALUE_MAX_CHARS = 1000;
export const HISTORY_PARAMS_MAX_BYTES = 4096;
/** Ends every value that was cut. */
export const CUT_MARKER = '…[cut]';

/** The history summary of a request's input (before validation, as sent). */
export function historyParams(schema: Schema, input: Record<string, unknown>): Record<string, unknown> {
  const declared: Array<[string, unknown]> = [];
  for (const [name, field] of Object.entries(schema.fields)) {
    if (field.secret || !Object.hasOwn(input, name) || input[name] === undefined) continue;
    declared.push([name, input[name]]);
  }
  return summarise(declared);
}

/**
 * Stored parameters brought within the same bounds, keys kept as stored: for rows written before
 * the summary existed, so that a page of history stays small whatever its rows hold.
 */
export function boundedParams(params: unknown): Record<string, unknown> {
  if (params === null || typeof params !== 'object' || Array.isArray(params)) return {};
  if (jsonBytes(params) <= HISTORY_PARAMS_MAX_BYTES) return params as Record<string, unknown>;
  return summarise(Object.entries(params));
}

function summarise(fields: Iterable<[string, unknown]>): Record<string, unknown> {
  const summary: Record<string, unknown> = {};
  const markerBytes = jsonBytes(CUT_MARKER);
  // The braces, then each field's key, colon and comma.
  let used = 2;
  for (const [name, value] of fields) {
    const keyBytes = jsonBytes(name) + 2;
    const room = HISTORY_PARAMS_MAX_BYTES - used - keyBytes;
    if (room < markerBytes) break;
    let stored = capped(value, HISTORY_VALUE_MAX_CHARS);
    if (stored === undefined) continue;
    if (jsonBytes(stored) > room) stored = cutToBytes(typeof stored === 'string' ? stored : JSON.stringify(stored), room);
    summary[name] = stored;
    used += keyBytes + jsonBytes(stored);
  }
  return summary;
}

/** A value within `maxChars` characters of JSON (a cut string past that), or undefined for what JSON cannot hold. */
function capped(value: unknown, maxChars: number): unknown {
  if (typeof value === 'string') return value.length > maxChars ? cut(value, maxChars) : value;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  if (typeof value !== 'object') return undefined;
  const json = boundedJson(value, maxChars);
  return json.complete ? JSON.parse(json.text) : cut(json.text, maxChars);
}

/** The first `maxChars` characters of `text` (a surrogate pair is never split), then the marker. */
function cut(text: string, maxChars: number): string {
  let end = Math.max(0, maxChars);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end) + CUT_MARKER;
}

/** `text` cut so that, with the marker, its JSON takes at most `maxBytes` bytes (the marker alone at worst). */
function cutToBytes(text: string, maxBytes: number): string {
  const base = text.endsWith(CUT_MARKER) ? text.slice(0, -CUT_MARKER.length) : text;
  let chars = Math.min(base.length, maxBytes);
  let result = cut(base, chars);
  // Escapes and multi-byte characters make bytes outnumber characters: shrink until it fits.
  while (chars > 0 && jsonBytes(result) > maxBytes) {
    chars = Math.floor((chars * maxBytes) / jsonBytes(result) - 1);
    result = cut(base, chars);
  }
  return chars > 0 ? result : CUT_MARKER;
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '');
}

/**
 * JSON.stringify's text of `value`, written only until it passes `maxChars` characters (an 880 KB
 * array is never serialised whole) and cut at MAX_STORED_DEPTH levels as stored JSON is.
 */
function boundedJson(value: object, maxChars: number): { text: string; complete: boolean } {
  const parts: string[] = [];
  let length = 0;
  const write = (part: string) => {
    parts.push(part);
    length += part.length;
    return length <= maxChars;
  };
  // A string longer than the whole allowance only needs its first characters written.
  const stringJson = (text: string) => JSON.stringify(text.length > maxChars ? text.slice(0, maxChars + 1) : text);
  const walk = (item: unknown, depth: number): boolean => {
    if (typeof item === 'string') return write(stringJson(item));
    if (typeof item === 'number') return write(Number.isFinite(item) ? String(item) : 'null');
    if (typeof item === 'boolean') return write(String(item));
    if (item === null || typeof item !== 'object') return write('null');
    if (depth >= MAX_STORED_DEPTH) return write(JSON.stringify(TOO_DEEP));
    if (Array.isArray(item)) {
      if (!write('[')) return false;
      for (let index = 0; index < item.length; index++) {
        if (index > 0 && !write(',')) return false;
        if (!walk(item[index], depth + 1)) return false;
      }
      return write(']');
    }
    if (!write('{')) return false;
    let first = true;
    for (const key in item) {
      if (!Object.hasOwn(item, key)) continue;
      const entry = (item as Record<string, unknown>)[key];
      if (entry === undefined || typeof entry === 'function') continue;
      if (!first && !write(',')) return false;
      first = false;
      if (!write(`${stringJson(key)}:`) || !walk(entry, depth + 1)) return false;
    }
    return write('}');
  };
  const complete = walk(value, 0);
  return { text: parts.join(''), complete };
}
