/**
 * The contract of the single outbound HTTP client (src/outbound/client.ts). Every adapter calls
 * the network through `OutboundClient.fetch`; nothing else in the service opens a connection.
 */

export type OutboundErrorCode =
  | 'invalid_url' // not parseable, or not http(s)
  | 'blocked_address' // resolves to / is a non-public address
  | 'blocked_host' // rejected by the caller's per-hop check (e.g. /v1/web blocked domains)
  | 'too_many_redirects'
  | 'too_large' // decoded body exceeded maxBytes
  | 'timeout' // connect, headers or whole-body deadline passed
  | 'network'; // DNS failure, refused, reset, TLS error...

export class OutboundError extends Error {
  readonly code: OutboundErrorCode;
  readonly url: string;
  constructor(code: OutboundErrorCode, message: string, url: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OutboundError';
    this.code = code;
    this.url = url;
  }
}

export interface OutboundRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Cap on decoded (decompressed) body bytes; exceeding it aborts with `too_large`. */
  maxBytes: number;
  /** Whole-request deadline (connect + headers + body). Default from config. */
  timeoutMs?: number;
  /** Default 10. 0 disables following (the 3xx is returned as is). */
  maxRedirects?: number;
  /** Route through PROXY_URL with the username rewritten for this country (docs/spec/contract.md §5). */
  proxyCountry?: string;
  /** Called with every URL before it is requested (the first and each redirect hop). Throw to refuse. */
  checkUrl?: (url: URL) => void;
  signal?: AbortSignal;
}

export interface OutboundResponse {
  /** The final URL after redirects. */
  url: string;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** Every URL requested, in order, the first included. */
  hops: string[];
}

export interface OutboundClient {
  fetch(url: string, request: OutboundRequest): Promise<OutboundResponse>;
  /**
   * Resolves the URL's host and answers false when the URL is not http(s) or the host is, or
   * resolves to, a non-public address (unless exempted by OUTBOUND_ALLOW_HOSTS). A name that does
   * not resolve is not refused here: its download fails. Validation uses this to answer 422
   * before any work; the connect-time check is what actually guards.
   */
  isPublicUrl(url: string): Promise<boolean>;
}
