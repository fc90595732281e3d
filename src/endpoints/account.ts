/** Account endpoints (docs/spec/contract.md §2, §4): profile and balances, e-mail change, request history. */
import { httpErrors } from '../core/errors.ts';
import { between, custom, email, integer, min, required, string } from '../validation/rules.ts';
import { defineEndpoint, type HandlerServices } from '../pipeline/endpoint.ts';
import { EMAIL_TAKEN_MESSAGE } from '../accounts/store.ts';
import { RequestsResponse, UserResponse } from './responses.ts';

const userExample = {
  user: {
    id: 1,
    name: 'Ada',
    email: 'ada@example.com',
    credits: 10000,
    created_at: '2026-11-22T10:15:30.123456Z',
    updated_at: '2026-11-22T10:15:30.123456Z',
    balances: { scraping: 10000, extraction: 55000, blockchain: 0 },
  },
};

/** The caller's own profile, as `/me` answers it; a user deleted meanwhile is unauthenticated. */
async function meAnswer(services: HandlerServices, userId: number) {
  const view = await services.accounts.view(userId);
  if (!view) throw httpErrors.unauthenticated();
  return { body: { user: view } };
}

export const getMe = defineEndpoint({
  method: 'GET',
  path: '/me',
  operationId: 'getMe',
  summary: 'Profile and credit balances',
  description: '`credits` is the scraping balance; `balances` lists all three products.',
  tag: 'Account',
  input: 'query',
  schema: { fields: {} },
  history: false,
  success: { status: 200, description: 'The user.', schema: UserResponse, example: userExample },
  handler: ({ user, services }) => meAnswer(services, user.id),
});

export const patchMe = defineEndpoint({
  method: 'PATCH',
  path: '/me',
  operationId: 'updateMe',
  summary: 'Change the e-mail address',
  description: 'Needs the account secret key. At most 6 attempts a minute per token.',
  tag: 'Account',
  input: 'body',
  schema: {
    fields: {
      email: { rules: [required(), string(), email()], example: 'new@example.com' },
      secret_key: { rules: [required(), string()], secret: true },
    },
  },
  throttle: { maxAttempts: 6, windowSeconds: 60, per: 'token' },
  history: false,
  success: { status: 200, description: 'The updated user.', schema: UserResponse, example: userExample },
  errors: [429],
  // The unique e-mail and the secret key are checked beside the format rules: a wrong key is
  // reported even when the e-mail is also malformed.
  async afterValidation({ input, user, services }, errors) {
    const email = typeof input.email === 'string' ? input.email.trim() : '';
    if (email && (await services.accounts.emailTaken(email, user.id))) (errors.email ??= []).push(EMAIL_TAKEN_MESSAGE);
    const secretKey = input.secret_key;
    if (typeof secretKey === 'string' && secretKey !== '' && !(await services.accounts.checkSecretKey(user.id, secretKey))) {
      (errors.secret_key ??= []).push('The secret key is incorrect.');
    }
  },
  async handler({ input, user, services }) {
    try {
      await services.accounts.updateEmail(user.id, input.email);
    } catch (error) {
      // Taken by another account between the check and the update (unique index).
      if ((error as { code?: string }).code === '23505') throw httpErrors.fieldInvalid('email', EMAIL_TAKEN_MESSAGE);
      throw error;
    }
    return meAnswer(services, user.id);
  },
});

export const listRequests = defineEndpoint({
  method: 'GET',
  path: '/requests',
  operationId: 'listRequests',
  summary: 'Request history',
  description: 'Newest first, simple pagination (no total), optional filters by endpoint path and HTTP status.',
  tag: 'Account',
  input: 'query',
  schema: {
    fields: {
      page: { rules: [integer(), min(1)], default: 1 },
      per_page: { rules: [integer(), between(1, 100)], default: 15 },
      endpoint: { rules: [string()], description: 'Exact path, e.g. /v1/pdf', example: '/v1/pdf' },
      status: { rules: [integer(), custom('status', (v) => Number(v) >= 100 && Number(v) <= 599, 'The status must be an HTTP status code.')] },
    },
  },
  history: false,
  success: {
    status: 200,
    description: "Laravel's simplePaginate shape.",
    schema: RequestsResponse,
    example: {
      current_page: 1,
      data: [
        {
          id: 42,
          request_id: '0b8f…',
          method: 'POST',
          endpoint: '/v1/pdf',
          product: 'extraction',
          status: 200,
          credits: 3,
          duration_ms: 812,
          params: { url: 'https://example.com/a.pdf' },
          created_at: '2026-11-22T10:15:30.123456Z',
        },
      ],
      first_page_url: 'http://localhost:8080/requests?page=1',
      from: 1,
      next_page_url: null,
      path: 'http://localhost:8080/requests',
      per_page: 15,
      prev_page_url: null,
      to: 1,
    },
  },
  async handler({ input, user, services, routeUrl }) {
    const { rows, hasMore } = await services.history.page(user.id, {
      page: input.page,
      perPage: input.per_page,
      endpoint: input.endpoint,
      status: input.status,
    });
    const link = (page: number) => {
      const query = new URLSearchParams();
      if (input.endpoint) query.set('endpoint', input.endpoint);
      if (input.status !== undefined) query.set('status', String(input.status));
      if (input.per_page !== 15) query.set('per_page', String(input.per_page));
      query.set('page', String(page));
      return `${routeUrl}?${query}`;
    };
    const from = rows.length ? (input.page - 1) * input.per_page + 1 : null;
    return {
      body: {
        current_page: input.page,
        data: rows,
        first_page_url: link(1),
        from,
        next_page_url: hasMore ? link(input.page + 1) : null,
        path: routeUrl,
        per_page: input.per_page,
        prev_page_url: input.page > 1 ? link(input.page - 1) : null,
        to: from === null ? null : from + rows.length - 1,
      },
    };
  },
});
