/**
 * Stripe webhook signatures, checked as Stripe documents them ("Verify signatures manually"):
 *
 *   Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>...][,v0=<hex>]
 *
 * The expected signature is the hex HMAC-SHA256, keyed with the endpoint's signing secret
 * (`whsec_...`, used as is), of `<t>.<raw body bytes>`. The event is genuine when any `v1` equals
 * it (constant-time compare; several appear while a secret is being rolled) and `t` is within the
 * tolerance of now. `v0` (test-mode legacy scheme) and unknown keys are ignored.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type SignatureFailure = 'missing' | 'malformed' | 'no-v1' | 'mismatch' | 'timestamp';

export type SignatureCheck = { ok: true; timestamp: number } | { ok: false; reason: SignatureFailure; message: string };

export interface SignatureOptions {
  secret: string;
  /** Largest allowed |now - t|, in seconds. */
  toleranceSeconds: number;
  /** Current time in unix seconds (tests); default the clock. */
  now?: number;
}

const MESSAGES: Record<SignatureFailure, string> = {
  missing: 'Missing Stripe-Signature header.',
  malformed: 'Malformed Stripe-Signature header.',
  'no-v1': 'The Stripe-Signature header carries no v1 signature.',
  mismatch: 'Invalid Stripe signature.',
  timestamp: 'The Stripe signature timestamp is outside the tolerance.',
};

const fail = (reason: SignatureFailure): SignatureCheck => ({ ok: false, reason, message: MESSAGES[reason] });

/** The hex signature Stripe computes for `payload` sent at `timestamp`. */
export function stripeSignature(payload: Buffer | string, secret: string, timestamp: number): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(payload).digest('hex');
}

/** A complete `Stripe-Signature` header value for `payload` (what Stripe sends; used by tests). */
export function stripeSignatureHeader(payload: Buffer | string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${stripeSignature(payload, secret, timestamp)}`;
}

/** Checks the header against the exact bytes received. */
export function verifyStripeSignature(payload: Buffer, header: string | string[] | undefined, options: SignatureOptions): SignatureCheck {
  if (header === undefined || header === '') return fail('missing');
  // A header sent twice reaches us as an array: ambiguous, so refused.
  if (Array.isArray(header)) return fail('malformed');

  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const equals = item.indexOf('=');
    if (equals <= 0) return fail('malformed');
    const key = item.slice(0, equals).trim();
    const value = item.slice(equals + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined || !/^\d{1,12}$/.test(value)) return fail('malformed');
      timestamp = Number(value);
    } else if (key === 'v1') {
      signatures.push(value.toLowerCase());
    }
  }
  if (timestamp === undefined) return fail('malformed');
  if (signatures.length === 0) return fail('no-v1');

  const expected = Buffer.from(stripeSignature(payload, options.secret, timestamp), 'utf8');
  let matched = false;
  for (const signature of signatures) {
    const candidate = Buffer.from(signature, 'utf8');
    // timingSafeEqual needs equal lengths; a length says nothing about the secret.
    if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
  }
  if (!matched) return fail('mismatch');

  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > options.toleranceSeconds) return fail('timestamp');
  return { ok: true, timestamp };
}
