/** The Stripe webhook's settings: off unless its signing secret is set; bad values stop the start. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config.ts';

describe('Stripe webhook configuration', () => {
  test('unset (or blank) STRIPE_WEBHOOK_SECRET: no webhook', () => {
    assert.equal(loadConfig({}).stripeWebhook, undefined);
    assert.equal(loadConfig({ STRIPE_WEBHOOK_SECRET: '  ' }).stripeWebhook, undefined);
  });

  test('a whsec_ secret enables it, with a 300 s tolerance unless set', () => {
    assert.deepEqual(loadConfig({ STRIPE_WEBHOOK_SECRET: 'whsec_abc123' }).stripeWebhook, { secret: 'whsec_abc123', toleranceSeconds: 300 });
    assert.deepEqual(loadConfig({ STRIPE_WEBHOOK_SECRET: ' whsec_abc123\n', STRIPE_WEBHOOK_TOLERANCE_SECONDS: '60' }).stripeWebhook, {
      secret: 'whsec_abc123',
      toleranceSeconds: 60,
    });
  });

  test('an API key pasted as the secret stops the start with a message naming the variable', () => {
    for (const secret of ['sk_live_51Habc', 'rk_test_123', 'whsec_', 'abc']) {
      assert.throws(() => loadConfig({ STRIPE_WEBHOOK_SECRET: secret }), (error: Error) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /^STRIPE_WEBHOOK_SECRET must be the webhook endpoint's signing secret \(whsec_\.\.\.\), not an API key\.$/);
        return true;
      });
    }
  });

  test('the tolerance is a whole number of seconds, at least 1 (the check cannot be switched off)', () => {
    for (const value of ['0', '-5', '1.5', 'five']) {
      assert.throws(() => loadConfig({ STRIPE_WEBHOOK_SECRET: 'whsec_abc', STRIPE_WEBHOOK_TOLERANCE_SECONDS: value }), /STRIPE_WEBHOOK_TOLERANCE_SECONDS must be an integer ≥ 1/);
    }
    // Checked even while the webhook is off, like every other variable.
    assert.throws(() => loadConfig({ STRIPE_WEBHOOK_TOLERANCE_SECONDS: '0' }), ConfigError);
  });
});
