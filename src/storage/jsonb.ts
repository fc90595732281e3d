/**
 * JSON text that PostgreSQL's `jsonb` accepts. Any JSON a client sends is valid for JavaScript,
 * but `jsonb` refuses two things in it: the NUL character (`\u0000`, which no PostgreSQL text can
 * hold) and UTF-16 surrogates without their pair (`"\ud800"`). Both are replaced, in keys and in
 * values, by U+FFFD, the replacement character: a request's parameters are always storable, so
 * writing them can never fail the settlement that shares their statement.
 *
 * Nesting is cut at `MAX_STORED_DEPTH` levels: a client may send thousands of levels (JSON.parse
 * takes them), and neither this walk nor PostgreSQL's jsonb input (which limits its own stack)
 * may fail on them. What lies deeper is stored as the text TOO_DEEP.
 */
export function jsonbText(value: unknown): string {
  return JSON.stringify(storable(value, 0));
}

/** Levels of arrays and objects kept in stored parameters; request schemas use two at most. */
export const MAX_STORED_DEPTH = 32;
export const TOO_DEEP = '[nested too deep]';

function storable(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return storableString(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_STORED_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((item) => storable(item, depth + 1));
  // toJSON (a Date...) first, as JSON.stringify would.
  const plain = typeof (value as { toJSON?: unknown }).toJSON === 'function' ? (value as { toJSON(): unknown }).toJSON() : value;
  if (plain !== value) return storable(plain, depth);
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [storableString(key), storable(item, depth + 1)]));
}

function storableString(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD').toWellFormed();
}
