/**
 * The admin API (contract §2): the operator's operations (src/operations) over HTTP, for an owner
 * account's token only; the command line (contract §8) is the other front end over the same
 * operations. Lists come as `{"data": [...]}`. Nothing here is billed or recorded in request history.
 *
 * What this file adds to the operations: the schemas (Laravel 8 validation answers and the OpenAPI
 * document, with the operations' limits) and the HTTP form of their failures (404, 409, 422).
 * A filter that is present must be a real one, and routes that act on many rows refuse fields they
 * do not take: a malformed script gets a 422, never an operation widened to every user.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { HttpError, httpErrors, type FieldErrors } from '../core/errors.ts';
import { custom, email, integer, isBlank, max, min, oneOf, required, string } from '../validation/rules.ts';
import { attributeName, field, type Fields, type InputOf } from '../validation/schema.ts';
import { PRODUCTS } from '../credits/products.ts';
import { PLANS } from '../credits/plans.ts';
import * as operations from '../operations/index.ts';
import { OperationError, type OperationStores } from '../operations/index.ts';
import { defineEndpoint, type Endpoint, type HttpMethod } from '../pipeline/endpoint.ts';

const { MAX_AMOUNT, MAX_ID, MAX_PRICE, MAX_TEXT_LENGTH, MIN_BALANCE, MIN_GRANT, MIN_PRICE, STRIPE_CUSTOMER, STRIPE_CUSTOMER_EXAMPLE, DEFAULT_TOKEN_NAME } = operations.rules;

/**
 * Laravel's `filled`: the field may be left out, but when present it may not be empty. An empty
 * string or null in a filter would otherwise count as "not sent", and so as "every user".
 */
export const filled = () =>
  custom('filled', (value) => value === undefined || !isBlank(value), (attr) => `The ${attr} field must have a value.`, { implicit: true, needsValid: false });

const id = (description: string, example: number) => field({ in: 'path', rules: [required(), integer(), min(1), max(MAX_ID)], description, example });
const userParam = id('User id.', 2);
const tokenParam = id('Token id (the part before `|`).', 8);
const productRules = [required(), string(), oneOf(PRODUCTS)] as const;
const productField = field({ rules: productRules, example: 'scraping' });
const productParam = field({ in: 'path', rules: productRules, example: 'scraping' });
const amountField = (least: number, example: number) => field({ rules: [required(), integer(), min(least), max(MAX_AMOUNT)], example });
/** Optional filters of operations that otherwise act on every user. */
export const userFilter = field({ rules: [filled(), integer(), min(1), max(MAX_ID)], description: 'Only this user (leave it out for every user).', example: 2 });
const productFilter = field({ rules: [filled(), string(), oneOf(PRODUCTS)], description: 'Only this product (leave it out for every product).', example: 'scraping' });

/** The HTTP form of an operation's failure. */
export function toHttpError(error: OperationError): HttpError {
  switch (error.kind) {
    case 'not_found':
      return httpErrors.notFound(error.message);
    case 'conflict':
      // A conflict on a field (an e-mail already taken) is Laravel's `unique` rule: a 422.
      return error.issues.length ? httpErrors.validation(error.errors) : new HttpError(409, { message: error.message });
    case 'invalid':
      return httpErrors.validation(error.errors);
  }
}

/**
 * Runs an operation for an admin route, its failures in their HTTP form. `ownRouteNotFound`: an
 * unknown id is worded as the user's own routes word it (`Not found.`), not with the operation's
 * message.
 */
export async function operationAnswer<T>(operation: () => Promise<T>, options: { ownRouteNotFound?: boolean } = {}): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (!(error instanceof OperationError)) throw error;
    throw options.ownRouteNotFound && error.kind === 'not_found' ? httpErrors.notFound() : toHttpError(error);
  }
}

/** Fields a request sent that the route does not take (`_method` is the method override's). */
export function prohibitUnknownFields(fields: Fields) {
  return async ({ input }: { input: Record<string, unknown> }, errors: FieldErrors) => {
    for (const name of Object.keys(input)) {
      if (name in fields || name === '_method') continue;
      (errors[name] ??= []).push(`The ${attributeName(name)} field is prohibited.`);
    }
  };
}

/**
 * One admin row, declared with `defineEndpoint` so that its handler's input is typed from its
 * fields (and its answer from `schema`, when given), answered by an operation whose failures
 * become HTTP answers.
 */
export function admin<const F extends Fields, S extends TSchema = TSchema>(row: {
  method: HttpMethod;
  path: string;
  summary: string;
  description?: string;
  input?: 'body' | 'query';
  fields: F;
  /**
   * The route answers or changes many rows (a list, the audit, renewal): a field it does not take
   * is refused (422 "The … field is prohibited.") rather than ignored, since an ignored filter
   * (`{"user_id": 2}`) would answer or change more than was asked.
   */
  manyRows?: boolean;
  status?: number;
  /** What the success answer is (default: the summary), its schema and an example. */
  answer?: string;
  schema?: S;
  example?: unknown;
  errors?: number[];
  /** An unknown id is worded as the user's own routes word it (`Not found.`), not with the operation's message. */
  ownRouteNotFound?: boolean;
  handler(context: { input: InputOf<F>; stores: OperationStores }): Promise<Static<S>>;
}): Endpoint {
  const status = row.status ?? 200;
  const input = row.input ?? (row.method === 'GET' || row.method === 'DELETE' ? 'query' : 'body');
  return defineEndpoint<F, S>({
    method: row.method,
    path: row.path,
    summary: row.summary,
    description: row.description,
    tag: 'Admin',
    input,
    // A body that is not a JSON object is refused, never read as "no fields" (which means "every user" to renewal).
    objectBody: input === 'body',
    schema: { fields: row.fields },
    access: 'owner',
    history: false,
    success: { status, description: row.answer ?? row.summary, example: row.example, schema: row.schema },
    errors: row.errors,
    ...(row.manyRows ? { afterValidation: prohibitUnknownFields(row.fields) } : {}),
    async handler(context) {
      const body = await operationAnswer(() => row.handler({ input: context.input, stores: context.services.operations }), { ownRouteNotFound: row.ownRouteNotFound });
      return { status, body };
    },
  });
}

/** The schemas of the record rows: one of `values`, a value or null, a timestamp. */
export const literals = <const T extends readonly string[]>(values: T, description: string) => Type.Union(values.map((value) => Type.Literal(value)), { description });
export const nullable = <T extends TSchema>(schema: T, description: string) => Type.Union([schema, Type.Null()], { description });
export const timestamp = Type.String({ description: 'ISO 8601 UTC with microseconds.', examples: ['2026-11-22T10:15:30.123000Z'] });

/** How one event's delivery went (`DeliveryAttempts`), as the record rows list deliveries. */
export const deliveryAttempts = {
  attempts: Type.Integer(),
  last_status: nullable(Type.Integer(), "The receiver's HTTP status at the last attempt; null when none answered."),
  last_error: nullable(Type.String(), 'Why the last attempt failed.'),
  created_at: timestamp,
  delivered_at: nullable(timestamp, 'Null until delivered.'),
};

/**
 * The two read rows of one kind of record every user has (jobs, wallet monitors):
 * `GET <path>` lists them, newest first, as `{"data": [...]}` (its filters; a field it does not
 * take is a 422), and `GET <path>/{<key>}` shows one as `{"<key>": {...}}` (404 `Not found.`).
 */
export function adminRecordRows<const L extends Fields, const O extends Fields>(rows: {
  path: string;
  key: string;
  list: { summary: string; description: string; fields: L; answer: string; row: TSchema; example: unknown; read(stores: OperationStores, input: InputOf<L>): Promise<unknown[]> };
  show: { summary: string; description: string; fields: O; answer: string; detail: TSchema; example: unknown; read(stores: OperationStores, input: InputOf<O>): Promise<unknown> };
}): Endpoint[] {
  const { path, key, list, show } = rows;
  return [
    admin({
      method: 'GET',
      path,
      summary: list.summary,
      description: list.description,
      fields: list.fields,
      manyRows: true,
      answer: list.answer,
      schema: Type.Object({ data: Type.Array(list.row) }),
      example: { data: [list.example] },
      errors: [404],
      handler: async ({ input, stores }) => ({ data: await list.read(stores, input) }),
    }),
    admin({
      method: 'GET',
      path: `${path}/{${key}}`,
      summary: show.summary,
      description: show.description,
      fields: show.fields,
      answer: show.answer,
      schema: Type.Object({ [key]: show.detail }),
      example: { [key]: show.example },
      errors: [404],
      ownRouteNotFound: true,
      handler: async ({ input, stores }) => ({ [key]: await show.read(stores, input) }),
    }),
  ];
}

/** A `GET` of one user's record (the user, its tokens), answered as `{"<key>": …}`; an unknown user is 404. */
function userRead(row: { path: string; summary: string; description: string; key: 'user' | 'data'; read(stores: OperationStores, input: { user: number }): Promise<unknown> }): Endpoint {
  return admin({
    method: 'GET',
    path: row.path,
    summary: row.summary,
    description: row.description,
    fields: { user: userParam },
    errors: [404],
    handler: async ({ input, stores }) => ({ [row.key]: await row.read(stores, input) }),
  });
}

/** The two rows that change a user's balance of a product by `amount` (at least `least`): adding to it, or setting it. */
function balanceRow(row: {
  method: HttpMethod;
  path: string;
  summary: string;
  description: string;
  product: typeof productField | typeof productParam;
  least: number;
  example: number;
  change: typeof operations.grantCredits;
}): Endpoint {
  return admin({
    method: row.method,
    path: row.path,
    summary: row.summary,
    description: row.description,
    fields: { user: userParam, product: row.product, amount: amountField(row.least, row.example) },
    errors: [404],
    example: { user: 2, product: 'scraping', balance: row.example },
    handler: ({ input, stores }) => row.change(stores, input),
  });
}

const userExample = { id: 2, name: 'Ada', email: 'ada@example.com', stripe_customer: null, created_at: '2026-11-22T10:15:30.123456Z' };

export const ADMIN_ENDPOINTS: readonly Endpoint[] = [
  admin({
    method: 'GET',
    path: '/admin/users',
    summary: 'List users',
    fields: {},
    manyRows: true,
    example: { data: [userExample] },
    handler: async ({ stores }) => ({ data: await operations.listUsers(stores) }),
  }),
  admin({
    method: 'POST',
    path: '/admin/users',
    summary: 'Create a user',
    description: 'Answers the new user\'s id, its first API token and its secret key: shown once, stored only as hashes.',
    fields: {
      name: { rules: [required(), string(), max(MAX_TEXT_LENGTH)], example: 'Ada' },
      email: { rules: [required(), string(), email(), max(MAX_TEXT_LENGTH)], example: 'ada@example.com' },
    },
    status: 201,
    example: { id: 2, token: '7|pQ3...', secret_key: 'x9F...' },
    handler: ({ input, stores }) => operations.createUser(stores, input),
  }),
  userRead({
    path: '/admin/users/{user}',
    summary: 'A user, with balances',
    description: 'The same view as the user\'s own `GET /me`.',
    key: 'user',
    read: operations.showUser,
  }),
  userRead({
    path: '/admin/users/{user}/tokens',
    summary: 'List a user\'s tokens',
    description: 'Without their secrets; revoked tokens show when they were revoked.',
    key: 'data',
    read: operations.listTokens,
  }),
  admin({
    method: 'POST',
    path: '/admin/users/{user}/tokens',
    summary: 'Issue a token',
    description: 'The plain token is shown once.',
    fields: { user: userParam, name: { rules: [string(), max(MAX_TEXT_LENGTH)], default: DEFAULT_TOKEN_NAME, example: 'ci' } },
    status: 201,
    errors: [404],
    example: { id: 8, user: 2, token: '8|Zk1...' },
    handler: ({ input, stores }) => operations.createToken(stores, input),
  }),
  admin({
    method: 'DELETE',
    path: '/admin/tokens/{token}',
    summary: 'Revoke a token',
    description: 'Refused at once by every server process.',
    fields: { token: tokenParam },
    errors: [404],
    example: { revoked: 8 },
    handler: ({ input, stores }) => operations.revokeToken(stores, input),
  }),
  admin({
    method: 'POST',
    path: '/admin/tokens/{token}/rotate',
    summary: 'Rotate a token',
    description: 'Revokes the token and issues a new one of the same user and name, in one step. The new plain token is shown once.',
    fields: { token: tokenParam },
    status: 201,
    errors: [404],
    example: { id: 9, user: 2, token: '9|Qw7...', replaced: 8 },
    handler: ({ input, stores }) => operations.rotateToken(stores, input),
  }),
  admin({
    method: 'GET',
    path: '/admin/users/{user}/credits',
    summary: 'A user\'s balances',
    description: 'Per product: the balance, the credits held by requests in flight, and the plan.',
    fields: { user: userParam },
    errors: [404],
    example: { user: 2, balances: [{ product: 'scraping', balance: 9990, held: 10, plan: 'starter' }] },
    handler: ({ input, stores }) => operations.showCredits(stores, input),
  }),
  balanceRow({
    method: 'POST',
    path: '/admin/users/{user}/credits',
    summary: 'Grant credits',
    description: 'Adds `amount` to the balance.',
    product: productField,
    least: MIN_GRANT,
    example: 1000,
    change: operations.grantCredits,
  }),
  balanceRow({
    method: 'PUT',
    path: '/admin/users/{user}/credits/{product}',
    summary: 'Set a balance',
    description: 'Sets the balance to `amount` (credits held by requests in flight are counted as spent).',
    product: productParam,
    least: MIN_BALANCE,
    example: 500,
    change: operations.setCredits,
  }),
  admin({
    method: 'PUT',
    path: '/admin/users/{user}/plans/{product}',
    summary: 'Assign a plan',
    description: 'Sets the product\'s plan and resets the balance to the plan\'s credits (no roll-over).',
    fields: { user: userParam, product: productParam, plan: { rules: [required(), string()], example: 'growth' } },
    errors: [404],
    example: { user: 2, product: 'scraping', plan: 'growth', balance: 55000 },
    handler: ({ input, stores }) => operations.assignPlan(stores, input),
  }),
  admin({
    method: 'POST',
    path: '/admin/plans/renew',
    summary: 'Renew plans',
    description:
      'Resets every balance that has a plan to that plan\'s credits; `user` and `product` narrow it. Only leaving them out ' +
      '(an empty object, or no body) renews every user: an empty or null filter, a body that is not a JSON object, or a ' +
      'field the route does not take is a 422.',
    fields: { user: userFilter, product: productFilter },
    manyRows: true,
    errors: [404],
    example: { renewed: [{ user: 2, product: 'scraping', plan: 'growth', balance: 55000 }] },
    handler: ({ input, stores }) => operations.renewPlans(stores, input),
  }),
  admin({
    method: 'GET',
    path: '/admin/plans',
    summary: 'The plans of each product',
    fields: {},
    manyRows: true,
    example: { data: PLANS },
    handler: async () => ({ data: operations.listPlans() }),
  }),
  admin({
    method: 'GET',
    path: '/admin/prices',
    summary: 'The price table',
    fields: {},
    description: 'Credits per operation (contract §3 gives the defaults).',
    manyRows: true,
    example: { data: [{ operation: 'search', credits: 3 }] },
    handler: async ({ stores }) => ({ data: await operations.listPrices(stores) }),
  }),
  admin({
    method: 'PUT',
    path: '/admin/prices/{operation}',
    summary: 'Change a price',
    description: 'Every server process uses the new price within 5 seconds.',
    fields: {
      operation: { in: 'path', rules: [required(), string()], description: 'An operation of `GET /admin/prices`.', example: 'pdf_page' },
      credits: { rules: [required(), integer(), min(MIN_PRICE), max(MAX_PRICE)], example: 1 },
    },
    example: { operation: 'pdf_page', credits: 1 },
    handler: ({ input, stores }) => operations.setPrice(stores, input),
  }),
  admin({
    method: 'GET',
    path: '/admin/audit',
    summary: 'Recompute balances from the ledger',
    description: 'Every stored balance against the sum of its ledger; `mismatches` lists those that differ (none, normally). `user` narrows it; an empty `user` is a 422.',
    fields: { user: userFilter },
    manyRows: true,
    errors: [404],
    example: { checked: 3, mismatches: [] },
    handler: ({ input, stores }) => operations.auditCredits(stores, input),
  }),
  admin({
    method: 'PUT',
    path: '/admin/users/{user}/stripe',
    summary: 'Link a Stripe customer',
    description: 'Paid invoices of this customer renew the user\'s plans (`POST /webhooks/stripe`). One customer per user.',
    fields: {
      user: userParam,
      customer: {
        rules: [required(), string(), custom('regex', (value) => STRIPE_CUSTOMER.test(String(value)), (attr) => `The ${attr} format is invalid.`, { needsValid: true })],
        example: STRIPE_CUSTOMER_EXAMPLE,
      },
    },
    errors: [404, 409],
    example: { user: 2, stripe_customer: STRIPE_CUSTOMER_EXAMPLE },
    handler: ({ input, stores }) => operations.linkStripeCustomer(stores, input),
  }),
  admin({
    method: 'DELETE',
    path: '/admin/users/{user}/stripe',
    summary: 'Unlink the Stripe customer',
    fields: { user: userParam },
    errors: [404],
    example: { user: 2, stripe_customer: null, previous: STRIPE_CUSTOMER_EXAMPLE },
    handler: ({ input, stores }) => operations.unlinkStripeCustomer(stores, input),
  }),
];
