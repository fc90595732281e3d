/**
 * JSON text that PostgreSQL's `jsonb` accepts. Any JSON a client sends is valid for JavaScript,
 * but `jsonb` refuses two things in it: the NUL character (`\u0000`, which no PostgreSQL text can
 * hold) and UTF-16 surrogates without their pair (`"\ud800"`). Both are replaced, in keys and in
 * values, by U+FFFD, the replacement character: a request's parameters are always storable, so
 * writing them can never fail the settlement that shares their statement.
 */
export function jsonbText(value: unknown): string {
  return JSON.stringify(storable(value));
}

function storable(value: unknown): unknown {
  if (typeof value === 'string') return storableString(value);
  if (Array.isArray(value)) return value.map(storable);
  if (value !== null && typeof value === 'object') {
    // toJSON (a Date...) first, as JSON.stringify would.
    const plain = typeof (value as { toJSON?: unknown }).toJSON === 'function' ? (value as { toJSON(): unknown }).toJSON() : value;
    if (plain !== value) return storable(plain);
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [storableString(key), storable(item)]));
  }
  return value;
}

function storableString(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD').toWellFormed();
}
