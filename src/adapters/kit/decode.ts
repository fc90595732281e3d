/** Turning an upstream's bytes into text. */

/** The value of a header, whatever the case of its name. */
export function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  const match = Object.keys(headers).find((key) => key.toLowerCase() === wanted);
  return match === undefined ? undefined : headers[match];
}

/**
 * The charset a Content-Type declares, if any: bare, or quoted with either quote, and only the
 * label's characters (`charset=utf-8,text/plain` declares `utf-8`).
 */
export function declaredCharset(contentType: string | undefined): string | undefined {
  return /charset\s*=\s*(?:["']\s*)?([\w.:-]+)/i.exec(contentType ?? '')?.[1];
}

/** Decodes with the charset the upstream declares; an unknown or absent one reads as UTF-8. */
export function decodeBody(body: Uint8Array, contentType: string | undefined): string {
  const charset = declaredCharset(contentType);
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

export { jsonOrUndefined } from '../../core/json.ts';
