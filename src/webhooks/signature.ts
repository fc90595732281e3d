/**
 * Webhook signatures, in Stripe's scheme so receivers can reuse what they know (docs/webhooks.md):
 *
 *   Gleaner-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">
 *
 * keyed with the user's whole webhook secret (`whsec_…`, used as is). The timestamp is signed
 * with the body, so a captured request cannot be replayed later than the receiver's tolerance.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const WEBHOOK_SIGNATURE_HEADER = 'Gleaner-Signature';

/** How far a signature's timestamp may be from the receiver's clock, by default. */
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

function signatureHex(secret: string, rawBody: string, timestampSeconds: number): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}.${rawBody}`, 'utf8').digest('hex');
}

/** The `Gleaner-Signature` header value for `rawBody` sent at `timestampSeconds`. */
export function signWebhook(secret: string, rawBody: string, timestampSeconds: number): string {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) throw new RangeError(`Bad signature timestamp ${timestampSeconds}.`);
  return `t=${timestampSeconds},v1=${signatureHex(secret, rawBody, timestampSeconds)}`;
}

const SIGNATURE = /^[0-9a-f]{64}$/;

/**
 * True when `header` carries a v1 signature of `rawBody` (the exact bytes received, as text) under
 * `secret`, and its timestamp is within `toleranceSeconds` of `now` (unix seconds). Several v1
 * entries are accepted, any one matching, as Stripe sends during a secret roll; unknown keys are
 * ignored; a malformed header, a repeated `t` or no v1 at all is refused.
 */
export function verifyWebhookSignature(
  header: string,
  rawBody: string,
  secret: string,
  options: { toleranceSeconds?: number; now?: number } = {},
): boolean {
  if (typeof header !== 'string' || header === '') return false;
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const equals = item.indexOf('=');
    if (equals <= 0) return false;
    const key = item.slice(0, equals).trim();
    const value = item.slice(equals + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined || !/^\d{1,12}$/.test(value)) return false;
      timestamp = Number(value);
    } else if (key === 'v1') {
      signatures.push(value.toLowerCase());
    }
  }
  if (timestamp === undefined || signatures.length === 0) return false;

  const now = options.now ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS;
  if (Math.abs(now - timestamp) > tolerance) return false;

  const expected = Buffer.from(signatureHex(secret, rawBody, timestamp), 'utf8');
  let matched = false;
  for (const signature of signatures) {
    // Every entry is compared, so the time taken does not tell which one (or whether any) matched.
    if (SIGNATURE.test(signature) && timingSafeEqual(Buffer.from(signature, 'utf8'), expected)) matched = true;
  }
  return matched;
}
