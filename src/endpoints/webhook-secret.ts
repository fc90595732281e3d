/**
 * The webhook signing secret (contract §9, docs/webhooks.md): shown on request, as Stripe's are,
 * and rotated on request. Not billed and not recorded in request history, as GET /me.
 */
import { Type } from '@sinclair/typebox';
import { defineEndpoint, type HandlerServices } from '../pipeline/endpoint.ts';

const WebhookSecretResponse = Type.Object({
  secret: Type.String({ description: '`whsec_` and 32 random characters: the HMAC-SHA256 key of the `Gleaner-Signature` header.', pattern: '^whsec_[A-Za-z0-9]{32}$' }),
});

const example = { secret: 'whsec_3xAmPLe0nLyN0tARealSecret4UsXyZ1' };

/** A row answering the caller's signing secret, as `secret` reads it (or replaces it first). */
function secretRow(row: {
  method: 'GET' | 'POST';
  path: string;
  operationId: string;
  summary: string;
  description: string;
  answer: string;
  secret(services: HandlerServices, userId: number): Promise<string>;
}) {
  return defineEndpoint({
    method: row.method,
    path: row.path,
    operationId: row.operationId,
    summary: row.summary,
    description: row.description,
    tag: 'Account',
    input: row.method === 'GET' ? 'query' : 'body',
    schema: { fields: {} },
    history: false,
    success: { status: 200, description: row.answer, schema: WebhookSecretResponse, example },
    handler: async ({ user, services }) => ({ body: { secret: await row.secret(services, user.id) } }),
  });
}

export const getWebhookSecret = secretRow({
  method: 'GET',
  path: '/me/webhook-secret',
  operationId: 'getWebhookSecret',
  summary: 'Webhook signing secret',
  description: 'The secret that signs every webhook sent to you (`Gleaner-Signature` header). Created on first request; the same until rotated.',
  answer: 'The secret.',
  secret: (services, userId) => services.webhookSecrets.get(userId),
});

export const rotateWebhookSecret = secretRow({
  method: 'POST',
  path: '/me/webhook-secret/rotate',
  operationId: 'rotateWebhookSecret',
  summary: 'Rotate the webhook signing secret',
  description:
    'Replaces the secret with a new one and answers it. The old secret stops signing at once: every delivery from now on, retries of earlier events included, is signed with the new one, so let your receiver accept both until it has the new one.',
  answer: 'The new secret.',
  secret: (services, userId) => services.webhookSecrets.rotate(userId),
});

export const WEBHOOK_SECRET_ENDPOINTS = [getWebhookSecret, rotateWebhookSecret];
