/**
 * The admin API (contract §2): what the operator's command line does (contract §8), over HTTP, for
 * an owner account's token only. Same stores, same rules, same answers as `gleaner <command>
 * --json`; lists come as `{"data": [...]}`. Nothing here is billed or recorded in request history.
 */
import { httpErrors, HttpError } from '../core/errors.ts';
import { custom, email, integer, max, min, oneOf, required, string } from '../validation/rules.ts';
import { PRODUCTS, type Product } from '../credits/products.ts';
import { findPlan, PLANS } from '../credits/plans.ts';
import { assignPlan, renewPlans } from '../credits/renewal.ts';
import type { Field } from '../validation/schema.ts';
import type { Endpoint, EndpointContext, EndpointResult, HttpMethod, OperatorHandlerServices } from '../pipeline/endpoint.ts';
import { EmailTakenError } from '../accounts/store.ts';

/** Balances are BIGINT; a cap far above any plan keeps amounts exact in JSON numbers. */
const MAX_AMOUNT = 1_000_000_000_000;
/** Ids beyond this are no rows (and would not fit PostgreSQL's BIGINT). */
const MAX_ID = Number.MAX_SAFE_INTEGER;
const STRIPE_CUSTOMER = /^cus_[A-Za-z0-9]+$/;

const userParam: Field = { in: 'path', rules: [required(), integer(), min(1), max(MAX_ID)], description: 'User id.', example: 2 };
const tokenParam: Field = { in: 'path', rules: [required(), integer(), min(1), max(MAX_ID)], description: 'Token id (the part before `|`).', example: 8 };
const productField = (where?: 'path'): Field => ({ ...(where ? { in: where } : {}), rules: [required(), string(), oneOf(PRODUCTS)], example: 'scraping' });

function admin<I>(row: {
  method: HttpMethod;
  path: string;
  summary: string;
  description?: string;
  input?: 'body' | 'query';
  fields?: Record<string, Field>;
  status?: number;
  example?: unknown;
  errors?: number[];
  handler(context: Omit<EndpointContext<I>, 'services'> & { services: OperatorHandlerServices }): Promise<unknown>;
}): Endpoint {
  const status = row.status ?? 200;
  return {
    method: row.method,
    path: row.path,
    summary: row.summary,
    description: row.description,
    tag: 'Admin',
    input: row.input ?? (row.method === 'GET' || row.method === 'DELETE' ? 'query' : 'body'),
    schema: { fields: row.fields ?? {} },
    access: 'owner',
    history: false,
    success: { status, description: row.summary, example: row.example },
    errors: row.errors,
    async handler(context): Promise<EndpointResult> {
      // Owner rows run operator operations, which reach the ledger; the pipeline hands every row
      // the whole service container.
      return { status, body: await row.handler({ ...(context as unknown as EndpointContext<I>), services: context.services as OperatorHandlerServices }) };
    },
  };
}

/** 404 for a user id that names nobody (ids come from the path, already validated). */
async function existingUser(services: Pick<OperatorHandlerServices, 'accounts'>, id: number): Promise<number> {
  if (!(await services.accounts.userExists(id))) throw httpErrors.notFound(`There is no user ${id}.`);
  return id;
}

const conflict = (message: string) => new HttpError(409, { message });

const userExample = { id: 2, name: 'Ada', email: 'ada@example.com', stripe_customer: null, created_at: '2026-11-22T10:15:30.123456Z' };

export const ADMIN_ENDPOINTS: readonly Endpoint[] = [
  admin({
    method: 'GET',
    path: '/admin/users',
    summary: 'List users',
    example: { data: [userExample] },
    handler: async ({ services }) => ({ data: await services.accounts.listUsers() }),
  }),
  admin<{ name: string; email: string }>({
    method: 'POST',
    path: '/admin/users',
    summary: 'Create a user',
    description: 'Answers the new user\'s id, its first API token and its secret key: shown once, stored only as hashes.',
    fields: {
      name: { rules: [required(), string(), max(255)], example: 'Ada' },
      email: { rules: [required(), string(), email(), max(255)], example: 'ada@example.com' },
    },
    status: 201,
    example: { id: 2, token: '7|pQ3...', secret_key: 'x9F...' },
    handler: async ({ input, services }) => {
      if (await services.accounts.emailTaken(input.email)) throw httpErrors.fieldInvalid('email', 'The email has already been taken.');
      return services.accounts.createUser({ name: input.name, email: input.email }).catch((error: unknown) => {
        if (error instanceof EmailTakenError) throw httpErrors.fieldInvalid('email', 'The email has already been taken.');
        throw error;
      });
    },
  }),
  admin<{ user: number }>({
    method: 'GET',
    path: '/admin/users/{user}',
    summary: 'A user, with balances',
    description: 'The same view as the user\'s own `GET /me`.',
    fields: { user: userParam },
    errors: [404],
    handler: async ({ input, services }) => {
      const view = await services.accounts.view(await existingUser(services, input.user));
      return { user: view };
    },
  }),
  admin<{ user: number }>({
    method: 'GET',
    path: '/admin/users/{user}/tokens',
    summary: 'List a user\'s tokens',
    description: 'Without their secrets; revoked tokens show when they were revoked.',
    fields: { user: userParam },
    errors: [404],
    handler: async ({ input, services }) => ({ data: await services.accounts.listTokens(await existingUser(services, input.user)) }),
  }),
  admin<{ user: number; name?: string }>({
    method: 'POST',
    path: '/admin/users/{user}/tokens',
    summary: 'Issue a token',
    description: 'The plain token is shown once.',
    fields: { user: userParam, name: { rules: [string(), max(255)], default: 'default', example: 'ci' } },
    status: 201,
    errors: [404],
    example: { id: 8, user: 2, token: '8|Zk1...' },
    handler: async ({ input, services }) => {
      const userId = await existingUser(services, input.user);
      const created = await services.accounts.createToken(userId, input.name);
      return { id: created.id, user: userId, token: created.token };
    },
  }),
  admin<{ token: number }>({
    method: 'DELETE',
    path: '/admin/tokens/{token}',
    summary: 'Revoke a token',
    description: 'Refused at once by every server process.',
    fields: { token: tokenParam },
    errors: [404],
    example: { revoked: 8 },
    handler: async ({ input, services }) => {
      if (!(await services.accounts.revokeToken(input.token))) throw httpErrors.notFound(`There is no active token ${input.token}.`);
      return { revoked: input.token };
    },
  }),
  admin<{ token: number }>({
    method: 'POST',
    path: '/admin/tokens/{token}/rotate',
    summary: 'Rotate a token',
    description: 'Revokes the token and issues a new one of the same user and name, in one step. The new plain token is shown once.',
    fields: { token: tokenParam },
    status: 201,
    errors: [404],
    example: { id: 9, user: 2, token: '9|Qw7...', replaced: 8 },
    handler: async ({ input, services }) => {
      const rotated = await services.accounts.rotateToken(input.token);
      if (!rotated) throw httpErrors.notFound(`There is no active token ${input.token}.`);
      return rotated;
    },
  }),
  admin<{ user: number }>({
    method: 'GET',
    path: '/admin/users/{user}/credits',
    summary: 'A user\'s balances',
    description: 'Per product: the balance, the credits held by requests in flight, and the plan.',
    fields: { user: userParam },
    errors: [404],
    example: { user: 2, balances: [{ product: 'scraping', balance: 9990, held: 10, plan: 'starter' }] },
    handler: async ({ input, services }) => {
      const userId = await existingUser(services, input.user);
      return { user: userId, balances: await services.ledger.balances(userId) };
    },
  }),
  admin<{ user: number; product: Product; amount: number }>({
    method: 'POST',
    path: '/admin/users/{user}/credits',
    summary: 'Grant credits',
    description: 'Adds `amount` to the balance.',
    fields: { user: userParam, product: productField(), amount: { rules: [required(), integer(), min(1), max(MAX_AMOUNT)], example: 1000 } },
    errors: [404],
    example: { user: 2, product: 'scraping', balance: 1000 },
    handler: async ({ input, services }) => {
      const userId = await existingUser(services, input.user);
      return { user: userId, product: input.product, balance: await services.ledger.grant(userId, input.product, input.amount) };
    },
  }),
  admin<{ user: number; product: Product; amount: number }>({
    method: 'PUT',
    path: '/admin/users/{user}/credits/{product}',
    summary: 'Set a balance',
    description: 'Sets the balance to `amount` (credits held by requests in flight are counted as spent).',
    fields: { user: userParam, product: productField('path'), amount: { rules: [required(), integer(), min(0), max(MAX_AMOUNT)], example: 500 } },
    errors: [404],
    example: { user: 2, product: 'scraping', balance: 500 },
    handler: async ({ input, services }) => {
      const userId = await existingUser(services, input.user);
      return { user: userId, product: input.product, balance: await services.ledger.setTo(userId, input.product, input.amount, 'set') };
    },
  }),
  admin<{ user: number; product: Product; plan: string }>({
    method: 'PUT',
    path: '/admin/users/{user}/plans/{product}',
    summary: 'Assign a plan',
    description: 'Sets the product\'s plan and resets the balance to the plan\'s credits (no roll-over).',
    fields: { user: userParam, product: productField('path'), plan: { rules: [required(), string()], example: 'growth' } },
    errors: [404],
    example: { user: 2, product: 'scraping', plan: 'growth', balance: 55000 },
    handler: async ({ input, services }) => {
      const userId = await existingUser(services, input.user);
      const plan = findPlan(input.product, input.plan);
      if (!plan) throw httpErrors.fieldInvalid('plan', 'The selected plan is invalid.');
      return assignPlan(services.ledger, userId, input.product, plan);
    },
  }),
  admin<{ user?: number; product?: Product }>({
    method: 'POST',
    path: '/admin/plans/renew',
    summary: 'Renew plans',
    description: 'Resets every balance that has a plan to that plan\'s credits; `user` and `product` narrow it.',
    fields: { user: { rules: [integer(), min(1), max(MAX_ID)], example: 2 }, product: { rules: [string(), oneOf(PRODUCTS)], example: 'scraping' } },
    errors: [404],
    example: { renewed: [{ user: 2, product: 'scraping', plan: 'growth', balance: 55000 }] },
    handler: async ({ input, services }) => {
      const userId = input.user === undefined ? null : await existingUser(services, input.user);
      return { renewed: await renewPlans(services.ledger, { userId, product: input.product ?? null }) };
    },
  }),
  admin({
    method: 'GET',
    path: '/admin/plans',
    summary: 'The plans of each product',
    example: { data: PLANS },
    handler: async () => ({ data: PLANS }),
  }),
  admin({
    method: 'GET',
    path: '/admin/prices',
    summary: 'The price table',
    description: 'Credits per operation (contract §3 gives the defaults).',
    example: { data: [{ operation: 'search', credits: 3 }] },
    handler: async ({ services }) => ({ data: await services.prices.list() }),
  }),
  admin<{ operation: string; credits: number }>({
    method: 'PUT',
    path: '/admin/prices/{operation}',
    summary: 'Change a price',
    description: 'Every server process uses the new price within 5 seconds.',
    fields: {
      operation: { in: 'path', rules: [required(), string()], description: 'An operation of `GET /admin/prices`.', example: 'pdf_page' },
      credits: { rules: [required(), integer(), min(0), max(MAX_AMOUNT)], example: 1 },
    },
    example: { operation: 'pdf_page', credits: 1 },
    handler: async ({ input, services }) => {
      const known = (await services.prices.list()).map((p) => p.operation);
      if (!known.includes(input.operation)) throw httpErrors.fieldInvalid('operation', 'The selected operation is invalid.');
      await services.prices.set(input.operation, input.credits);
      return { operation: input.operation, credits: input.credits };
    },
  }),
  admin<{ user?: number }>({
    method: 'GET',
    path: '/admin/audit',
    summary: 'Recompute balances from the ledger',
    description: 'Every stored balance against the sum of its ledger; `mismatches` lists those that differ (none, normally).',
    fields: { user: { rules: [integer(), min(1), max(MAX_ID)], example: 2 } },
    errors: [404],
    example: { checked: 3, mismatches: [] },
    handler: async ({ input, services }) => {
      const userId = input.user === undefined ? undefined : await existingUser(services, input.user);
      const rows = await services.ledger.recompute(userId);
      return { checked: rows.length, mismatches: rows.filter((r) => r.stored !== r.ledger) };
    },
  }),
  admin<{ user: number; customer: string }>({
    method: 'PUT',
    path: '/admin/users/{user}/stripe',
    summary: 'Link a Stripe customer',
    description: 'Paid invoices of this customer renew the user\'s plans (`POST /webhooks/stripe`). One customer per user.',
    fields: {
      user: userParam,
      customer: {
        rules: [required(), string(), custom('regex', (value) => STRIPE_CUSTOMER.test(String(value)), (attr) => `The ${attr} format is invalid.`, { needsValid: true })],
        example: 'cus_NffrFeUfNV2Hib',
      },
    },
    errors: [404, 409],
    example: { user: 2, stripe_customer: 'cus_NffrFeUfNV2Hib' },
    handler: async ({ input, services }) => {
      const userId = await existingUser(services, input.user);
      const linked = await services.accounts.linkStripeCustomer(userId, input.customer);
      if (!linked.ok) throw conflict(`The Stripe customer ${input.customer} is already linked to user ${linked.userId}.`);
      return { user: userId, stripe_customer: input.customer };
    },
  }),
  admin<{ user: number }>({
    method: 'DELETE',
    path: '/admin/users/{user}/stripe',
    summary: 'Unlink the Stripe customer',
    fields: { user: userParam },
    errors: [404],
    example: { user: 2, stripe_customer: null, previous: 'cus_NffrFeUfNV2Hib' },
    handler: async ({ input, services }) => {
      const userId = await existingUser(services, input.user);
      return { user: userId, stripe_customer: null, previous: await services.accounts.unlinkStripeCustomer(userId) };
    },
  }),
];
