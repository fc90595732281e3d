/** Stripe webhook signatures: the `Stripe-Signature` header checked as Stripe documents it. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { stripeSignature, stripeSignatureHeader, verifyStripeSignature, type SignatureCheck, type SignatureOptions } from '../../src/billing/stripe-signature.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NOW = 1_700_000_000;
const BODY = Buffer.from('{"id":"evt_test","object":"event"}');
const options: SignatureOptions = { secret: SECRET, toleranceSeconds: 300, now: NOW };

const verify = (header: string | string[] | undefined, body: Buffer = BODY, opts: SignatureOptions = options): SignatureCheck => verifyStripeSignature(body, header, opts);

function failsWith(check: SignatureCheck, reason: string, message: RegExp): void {
  assert.equal(check.ok, false);
  if (check.ok) return;
  assert.equal(check.reason, reason);
  assert.match(check.message, message);
}

describe('Stripe signature', () => {
  test('the signature is the hex HMAC-SHA256 of "<t>.<body>" keyed with the whole whsec_ secret', () => {
    // Computed independently: printf '1700000000.<body>' | openssl dgst -sha256 -hmac <secret>
    assert.equal(stripeSignature(BODY, SECRET, NOW), '7be803ae18005f34eacc587b10bb162f9e85225eb83b690b8f1fc0f58fbb0321');
    assert.equal(stripeSignatureHeader(BODY, SECRET, NOW), `t=${NOW},v1=7be803ae18005f34eacc587b10bb162f9e85225eb83b690b8f1fc0f58fbb0321`);
  });

  test('a valid header is accepted and its timestamp returned', () => {
    assert.deepEqual(verify(stripeSignatureHeader(BODY, SECRET, NOW)), { ok: true, timestamp: NOW });
  });

  test('several v1 signatures (a secret being rolled): one valid among them is enough, wherever it stands', () => {
    const good = stripeSignature(BODY, SECRET, NOW);
    const other = stripeSignature(BODY, 'whsec_previous', NOW);
    assert.equal(verify(`t=${NOW},v1=${other},v1=${good}`).ok, true);
    assert.equal(verify(`t=${NOW},v1=${good},v1=${other}`).ok, true);
    assert.equal(verify(`v1=${other},v1=${good},t=${NOW}`).ok, true, 'the order of the items does not matter');
    assert.equal(verify(`t=${NOW},v1=${good},v0=${'0'.repeat(64)},scheme=whatever`).ok, true, 'v0 and unknown keys are ignored');
    assert.equal(verify(`t=${NOW}, v1=${good.toUpperCase()}`).ok, true, 'spaces and upper-case hex are tolerated');
  });

  test('a signature made with another secret is refused', () => {
    failsWith(verify(stripeSignatureHeader(BODY, 'whsec_someoneelse', NOW)), 'mismatch', /^Invalid Stripe signature\.$/);
    failsWith(verify(stripeSignatureHeader(BODY, SECRET.slice('whsec_'.length), NOW)), 'mismatch', /Invalid/);
  });

  test('a body changed after signing is refused, down to one byte or trailing whitespace', () => {
    const header = stripeSignatureHeader(BODY, SECRET, NOW);
    failsWith(verify(header, Buffer.from('{"id":"evt_tesT","object":"event"}')), 'mismatch', /Invalid/);
    failsWith(verify(header, Buffer.concat([BODY, Buffer.from('\n')])), 'mismatch', /Invalid/);
    failsWith(verify(header, Buffer.alloc(0)), 'mismatch', /Invalid/);
  });

  test('the exact bytes count: a body with non-ASCII characters verifies as received', () => {
    const body = Buffer.from('{"description":"Café ✓ 日本"}');
    assert.equal(verify(stripeSignatureHeader(body, SECRET, NOW), body).ok, true);
    failsWith(verify(stripeSignatureHeader(body, SECRET, NOW), Buffer.from(body.toString('latin1'), 'utf8')), 'mismatch', /Invalid/);
  });

  test('a timestamp changed after signing is refused (it is part of the signed text)', () => {
    const good = stripeSignature(BODY, SECRET, NOW);
    failsWith(verify(`t=${NOW + 1},v1=${good}`), 'mismatch', /Invalid/);
  });

  test('an old timestamp is refused beyond the tolerance, accepted at its edge', () => {
    assert.equal(verify(stripeSignatureHeader(BODY, SECRET, NOW - 300)).ok, true);
    failsWith(verify(stripeSignatureHeader(BODY, SECRET, NOW - 301)), 'timestamp', /outside the tolerance/);
    failsWith(verify(stripeSignatureHeader(BODY, SECRET, NOW - 86_400)), 'timestamp', /outside the tolerance/);
  });

  test('a timestamp in the future is refused beyond the tolerance, accepted within it', () => {
    assert.equal(verify(stripeSignatureHeader(BODY, SECRET, NOW + 300)).ok, true);
    failsWith(verify(stripeSignatureHeader(BODY, SECRET, NOW + 301)), 'timestamp', /outside the tolerance/);
  });

  test('the tolerance is configurable', () => {
    const strict = { ...options, toleranceSeconds: 10 };
    assert.equal(verify(stripeSignatureHeader(BODY, SECRET, NOW - 10), BODY, strict).ok, true);
    failsWith(verify(stripeSignatureHeader(BODY, SECRET, NOW - 11), BODY, strict), 'timestamp', /tolerance/);
  });

  test('the clock is used when no time is given', () => {
    const { now: _unused, ...clock } = options;
    assert.equal(verify(stripeSignatureHeader(BODY, SECRET), BODY, clock).ok, true);
    failsWith(verify(stripeSignatureHeader(BODY, SECRET, NOW), BODY, clock), 'timestamp', /tolerance/);
  });

  test('a missing header is refused', () => {
    failsWith(verify(undefined), 'missing', /^Missing Stripe-Signature header\.$/);
    failsWith(verify(''), 'missing', /Missing/);
  });

  test('a header without v1 is refused, even with a valid v0', () => {
    failsWith(verify(`t=${NOW}`), 'no-v1', /no v1 signature/);
    failsWith(verify(`t=${NOW},v0=${stripeSignature(BODY, SECRET, NOW)}`), 'no-v1', /no v1/);
  });

  test('garbled headers are refused', () => {
    const good = stripeSignature(BODY, SECRET, NOW);
    const garbled = [
      good, // the bare signature
      `v1=${good}`, // no timestamp
      `t=,v1=${good}`,
      `t=soon,v1=${good}`,
      `t=-${NOW},v1=${good}`,
      `t=${NOW}.5,v1=${good}`,
      `t=${NOW},t=${NOW},v1=${good}`, // two timestamps
      `t=${NOW};v1=${good}`,
      `t=${NOW},,v1=${good}`,
      `t=${NOW},=${good}`,
      'garbage',
    ];
    for (const header of garbled) failsWith(verify(header), 'malformed', /^Malformed Stripe-Signature header\.$/);
    failsWith(verify([stripeSignatureHeader(BODY, SECRET, NOW), stripeSignatureHeader(BODY, SECRET, NOW)]), 'malformed', /Malformed/);
  });

  test('signatures of the wrong length or not hex never match (and never throw)', () => {
    const good = stripeSignature(BODY, SECRET, NOW);
    for (const v1 of ['', good.slice(0, 63), good + '0', `${'z'.repeat(64)}`, Buffer.from(good, 'hex').toString('base64')]) {
      failsWith(verify(`t=${NOW},v1=${v1}`), 'mismatch', /Invalid/);
    }
  });
});
