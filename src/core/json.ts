/** A JSON object as parsed from an answer or a request: read defensively, every field checked before use. */
export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The parsed JSON, or undefined when the text is not JSON (an HTML block page, say). */
export function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
