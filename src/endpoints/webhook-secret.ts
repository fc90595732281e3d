/**
 * The webhook signing secret (contract §9, docs/webhooks.md): shown on request, as Stripe's are,
 * and rotated on request. Not billed and not recorded in request history, as GET /me.
 */
import { Type } from '@sinclair/typebox';
import { defineEndpoint } from '../pipeline/endpoint.ts';

const WebhookSecretResponse = Type.Object({
  secret: Type.String({ description: '`whsec_` and 32 random characters: the HMAC-SHA256 key of the `Gleaner-Signature` header.', pattern: '^whsec_[A-Za-z0-9]{32}$' }),
});

const example = { secret: 'whsec_3xAmPLe0nLyN0tARealSecret4UsXyZ1' };

export const getWebhookSecret = defineEndpoint({
  method: 'GET',
  path: '/me/webhook-secret',
  operationId: 'getWebhookSecret',
  summary: 'Webhook signing secret',
  description: 'The secret that signs every webhook sent to you (`Gleaner-Signature` header). Created on first request; the same until rotated.',
  tag: 'Account',
  input: 'query',
  schema: { fields: {} },
  history: false,
  success: { status: 200, description: 'The secret.', schema: WebhookSecretResponse, example },
  async handler({ user, services }) {
    return { body: { secret: await services.webhookSecrets.get(user.id) } };
  },
});

export const rotateWebhookSecret = defineEndpoint({
  method: 'POST',
  path: '/me/webhook-secret/rotate',
  operationId: 'rotateWebhookSecret',
  summary: 'Rotate the webhook signing secret',
  description:
    'Replaces the secret with a new one and answers it. The old secret stops signing at once: every delivery from now on, retries of earlier events included, is signed with the new one, so let your receiver accept both until it has the new one.',
  tag: 'Account',
  input: 'body',
  schema: { fields: {} },
  history: false,
  success: { status: 200, description: 'The new secret.', schema: WebhookSecretResponse, example },
  async handler({ user, services }) {
    return { body: { secret: await services.webhookSecrets.rotate(user.id) } };
  },
});

export const WEBHOOK_SECRET_ENDPOINTS = [getWebhookSecret, rotateWebhookSecret];
