/**
 * Checking the signature of a webhook gleaner sent (docs/webhooks.md): `Gleaner-Signature:
 * t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, keyed with the whole `whsec_…`
 * secret. Written here on WebCrypto rather than imported from the server, so the client stays a
 * package of its own that also runs in browsers and edge runtimes.
 */

export const WEBHOOK_SIGNATURE_HEADER = 'Gleaner-Signature';
/** How far the signature's timestamp may be from the receiver's clock, by default (5 minutes). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

/** The body of every webhook event: parse it only after `verifyWebhook` accepted the raw bytes. */
export interface WebhookEvent {
  /** The same on every retry of one event: drop ids already handled. */
  id: string;
  /** `crawl.started`, `crawl.page`, `crawl.completed`, `crawl.failed`, and the same for `batch.`. */
  type: string;
  job_id: string | null;
  created_at: string;
  data: Record<string, unknown>;
}

export interface VerifyWebhookOptions {
  /** Largest distance between the signature's timestamp and now, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Now, in unix seconds (default: the clock). */
  now?: number;
}

const encoder = new TextEncoder();

/**
 * True when `header` (the `Gleaner-Signature` value) signs `rawBody` under `secret` and its
 * timestamp is within the tolerance. `rawBody` must be the bytes received, before any JSON
 * parsing: a parse and re-serialise can change them. Any one of several `v1` entries may match.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array | ArrayBuffer,
  header: string | readonly string[] | null | undefined,
  secret: string,
  options: VerifyWebhookOptions = {},
): Promise<boolean> {
  const value = typeof header === 'string' ? header : header?.join(',');
  if (!value) return false;
  let timestamp: string | undefined;
  const signatures: Uint8Array<ArrayBuffer>[] = [];
  for (const item of value.split(',')) {
    const equals = item.indexOf('=');
    if (equals <= 0) return false;
    const key = item.slice(0, equals).trim();
    const entry = item.slice(equals + 1).trim();
    if (key === 't') {
      // A second timestamp makes the header ambiguous: refused, as the server's own check does.
      if (timestamp !== undefined || !/^\d{1,12}$/.test(entry)) return false;
      timestamp = entry;
    } else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(entry)) {
      signatures.push(hexBytes(entry));
    }
  }
  if (timestamp === undefined || signatures.length === 0) return false;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)) return false;

  const subtle = await subtleCrypto();
  const key = await subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const signed = concat(encoder.encode(`${timestamp}.`), typeof rawBody === 'string' ? encoder.encode(rawBody) : new Uint8Array(rawBody));
  // subtle.verify compares in constant time; every entry is checked, so timing does not tell which matched.
  const results = await Promise.all(signatures.map((signature) => subtle.verify('HMAC', key, signature, signed)));
  return results.includes(true);
}

async function subtleCrypto(): Promise<typeof globalThis.crypto.subtle> {
  if (globalThis.crypto?.subtle) return globalThis.crypto.subtle;
  // Node 18 has WebCrypto as a module only (the global came with Node 19); the specifier is not
  // a literal so that bundlers for browsers, which always have the global, leave it alone.
  const nodeCrypto = (await import('node:crypto' as string)) as { webcrypto: { subtle: typeof globalThis.crypto.subtle } };
  return nodeCrypto.webcrypto.subtle;
}

function hexBytes(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

function concat(head: Uint8Array, tail: Uint8Array): Uint8Array<ArrayBuffer> {
  const all = new Uint8Array(head.length + tail.length);
  all.set(head);
  all.set(tail, head.length);
  return all;
}
