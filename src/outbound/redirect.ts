/**
 * Redirects are followed by hand, one hop at a time, so that every hop goes through the same
 * checks as the first request (scheme, the caller's `checkUrl`, the connect-time address guard).
 * The method and header rules follow the Fetch standard.
 */
import type { OutboundRequest } from './types.ts';
import { parseHttpUrl } from './url-policy.ts';

export type Method = NonNullable<OutboundRequest['method']>;

export interface Hop {
  url: URL;
  method: Method;
  /** Lower-case names. */
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

export const DEFAULT_MAX_REDIRECTS = 10;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Headers that describe the request body; they go when the body goes. */
const BODY_HEADERS = new Set(['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']);

/** Headers that carry credentials or are bound to one origin; never forwarded to another origin. */
const ORIGIN_BOUND_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization', 'host']);
const CREDENTIAL_LIKE_NAME = /auth|cookie|token|secret|session|passw|api[-_]?key/i;

export function isRedirectStatus(status: number): boolean {
  return REDIRECT_STATUSES.has(status);
}

/**
 * The request to send after `current` was answered `status` with `location`. Throws
 * `invalid_url` when the Location is not an http(s) URL.
 */
export function nextHop(current: Hop, status: number, location: string): Hop {
  const url = parseHttpUrl(location, current.url);

  const dropsBody =
    (status === 303 && current.method !== 'GET' && current.method !== 'HEAD') ||
    ((status === 301 || status === 302) && current.method === 'POST');
  const crossesOrigin = url.origin !== current.url.origin;

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(current.headers)) {
    if (dropsBody && BODY_HEADERS.has(name)) continue;
    if (crossesOrigin && isOriginBound(name)) continue;
    headers[name] = value;
  }

  return dropsBody ? { url, method: 'GET', headers } : { url, method: current.method, headers, body: current.body };
}

function isOriginBound(name: string): boolean {
  return ORIGIN_BOUND_HEADERS.has(name) || CREDENTIAL_LIKE_NAME.test(name);
}
