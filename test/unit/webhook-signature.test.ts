/** Webhook signatures (`Gleaner-Signature`), the back-off schedule and the event body. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { signWebhook, verifyWebhookSignature, WEBHOOK_SIGNATURE_HEADER } from '../../src/webhooks/signature.ts';
import { nextDelaySeconds, webhookBackoff, WEBHOOK_RETRY_WINDOW_SECONDS } from '../../src/webhooks/delivery.ts';
import { webhookEventBody } from '../../src/webhooks/events.ts';
import { newWebhookSecret } from '../../src/webhooks/secrets.ts';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NOW = 1_764_000_000;
const BODY = '{"id":"9f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f","type":"crawl.page","job_id":null,"created_at":"2026-11-24T16:00:00.000000Z","data":{"url":"https://example.com/é","status_code":200}}';

const verify = (header: string, body = BODY, secret = SECRET, now = NOW) => verifyWebhookSignature(header, body, secret, { now });
const v1Of = (header: string) => header.split(',v1=')[1];

describe('webhook signature', () => {
  test('the header is t=<seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>"> under the whole whsec_ secret', () => {
    assert.equal(WEBHOOK_SIGNATURE_HEADER, 'Gleaner-Signature');
    const expected = createHmac('sha256', SECRET).update(Buffer.from(`${NOW}.${BODY}`, 'utf8')).digest('hex');
    assert.equal(signWebhook(SECRET, BODY, NOW), `t=${NOW},v1=${expected}`);
  });

  test('a signature verifies against the same body and secret, within the tolerance either way', () => {
    const header = signWebhook(SECRET, BODY, NOW);
    assert.equal(verify(header), true);
    assert.equal(verify(header, BODY, SECRET, NOW + 300), true, '300 s late is still accepted');
    assert.equal(verify(header, BODY, SECRET, NOW - 300), true, 'a sender clock 300 s ahead is accepted');
    assert.equal(verifyWebhookSignature(signWebhook(SECRET, BODY, Math.floor(Date.now() / 1000)), BODY, SECRET), true, 'the clock by default');
  });

  test('a body changed after signing is refused, down to one byte or trailing whitespace', () => {
    const header = signWebhook(SECRET, BODY, NOW);
    assert.equal(verify(header, BODY.replace('200', '201')), false);
    assert.equal(verify(header, `${BODY}\n`), false);
    assert.equal(verify(header, ''), false);
  });

  test('a signature made with another secret is refused (the prefix is part of the key)', () => {
    assert.equal(verify(signWebhook('whsec_someoneelse', BODY, NOW)), false);
    assert.equal(verify(signWebhook(SECRET.slice('whsec_'.length), BODY, NOW)), false);
  });

  test('a stale or future timestamp is refused, and the timestamp cannot be swapped', () => {
    const header = signWebhook(SECRET, BODY, NOW);
    assert.equal(verify(header, BODY, SECRET, NOW + 301), false);
    assert.equal(verify(header, BODY, SECRET, NOW - 301), false);
    assert.equal(verifyWebhookSignature(header, BODY, SECRET, { now: NOW + 3_600, toleranceSeconds: 3_600 }), true, 'the tolerance is the caller’s');
    assert.equal(verify(`t=${NOW + 100},v1=${v1Of(header)}`, BODY, SECRET, NOW + 100), false, 'a fresh t on an old signature');
  });

  test('several v1 entries (a secret being rolled): any one valid is enough, wherever it stands', () => {
    const good = v1Of(signWebhook(SECRET, BODY, NOW));
    const other = v1Of(signWebhook('whsec_previous', BODY, NOW));
    assert.equal(verify(`t=${NOW},v1=${other},v1=${good}`), true);
    assert.equal(verify(`t=${NOW},v1=${good},v1=${other}`), true);
    assert.equal(verify(`v1=${other},v1=${good},t=${NOW}`), true, 'the order of the items does not matter');
    assert.equal(verify(`t=${NOW}, v1=${good.toUpperCase()},v0=abc,scheme=x`), true, 'spaces, upper-case hex and unknown keys are tolerated');
    assert.equal(verify(`t=${NOW},v1=${other},v1=${other}`), false, 'none valid');
  });

  test('malformed headers are refused, never thrown on', () => {
    const good = v1Of(signWebhook(SECRET, BODY, NOW));
    for (const header of [
      '',
      'garbage',
      `v1=${good}`,
      `t=${NOW}`,
      `t=${NOW},v0=${good}`,
      `t=,v1=${good}`,
      `t=abc,v1=${good}`,
      `t=-${NOW},v1=${good}`,
      `t=${NOW}.5,v1=${good}`,
      `t=${NOW},t=${NOW},v1=${good}`,
      `t=${NOW},=${good}`,
      `t=${NOW},v1=${good.slice(1)}`,
      `t=${NOW},v1=${'z'.repeat(64)}`,
      `t=${NOW},v1=${good}00`,
      `t=${NOW};v1=${good}`,
    ]) {
      assert.equal(verify(header), false, header);
    }
    assert.equal(verifyWebhookSignature(undefined as unknown as string, BODY, SECRET, { now: NOW }), false, 'an absent header');
  });

  test('signing refuses a timestamp that is not whole unix seconds', () => {
    assert.throws(() => signWebhook(SECRET, BODY, Date.now() / 1000), RangeError);
    assert.throws(() => signWebhook(SECRET, BODY, -1), RangeError);
  });
});

describe('webhook secrets and bodies', () => {
  test('a secret is whsec_ and 32 base62 characters, new each time', () => {
    const secrets = new Set(Array.from({ length: 50 }, () => newWebhookSecret()));
    assert.equal(secrets.size, 50);
    for (const secret of secrets) assert.match(secret, /^whsec_[A-Za-z0-9]{32}$/);
  });

  test('the event body is the contract’s exact JSON, created_at with microseconds', () => {
    const body = webhookEventBody({ id: 'e1', type: 'crawl.completed', jobId: 'j1', createdAt: new Date('2026-11-22T10:15:30.123Z'), data: { status: 'completed', completed: 2, credits_used: 2 } });
    assert.equal(body, '{"id":"e1","type":"crawl.completed","job_id":"j1","created_at":"2026-11-22T10:15:30.123000Z","data":{"status":"completed","completed":2,"credits_used":2}}');
    assert.equal(JSON.parse(webhookEventBody({ id: 'e2', type: 'chain.transfer', jobId: null, createdAt: new Date(0), data: undefined })).data instanceof Object, true, 'data is always an object');
  });
});

describe('webhook back-off', () => {
  const least = { random: () => 0 };

  test('30 s after the first failure, doubling, at most one hour', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 50, 1e9].map((attempt) => nextDelaySeconds(attempt, least)), [30, 60, 120, 240, 480, 960, 1920, 3600, 3600, 3600, 3600]);
    assert.equal(webhookBackoff.nextDelaySeconds, nextDelaySeconds);
    assert.equal(nextDelaySeconds(0, least), 30, 'no attempt yet counts as the first');
    assert.equal(nextDelaySeconds(Number.NaN, least), 30);
    assert.equal(nextDelaySeconds(3, { ...least, baseSeconds: 5 }), 20, 'the base is the queue setting’s');
  });

  test('jittered up to twice the delay, as the queue does, still at most one hour', () => {
    assert.equal(nextDelaySeconds(1, { random: () => 0.5 }), 45);
    assert.equal(nextDelaySeconds(1, { random: () => 0.999999 }), 60);
    assert.equal(nextDelaySeconds(7, { random: () => 0.999999 }), 3600);
    for (let i = 0; i < 200; i++) {
      const delay = nextDelaySeconds(3);
      assert.ok(delay >= 120 && delay <= 240, String(delay));
    }
  });

  test('the schedule covers the 24 h window with about 30 attempts', () => {
    assert.equal(WEBHOOK_RETRY_WINDOW_SECONDS, 86_400);
    assert.equal(webhookBackoff.windowSeconds, WEBHOOK_RETRY_WINDOW_SECONDS);
    for (const random of [() => 0, () => 0.5, () => 0.999999]) {
      let elapsed = 0;
      let attempts = 1;
      while (elapsed + nextDelaySeconds(attempts, { random }) <= WEBHOOK_RETRY_WINDOW_SECONDS) elapsed += nextDelaySeconds(attempts++, { random });
      assert.ok(attempts >= 25 && attempts <= 35, `${attempts} attempts`);
      assert.ok(WEBHOOK_RETRY_WINDOW_SECONDS - elapsed < 3_600, 'the last attempt falls in the last hour');
    }
  });
});
