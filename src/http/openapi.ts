/**
 * The OpenAPI 3.1 document, generated from the endpoint table: request schemas from each row's
 * validation schema, answers from each row's `success.schema` (TypeBox, the same object that types
 * its handler's result), errors from the shared wire shapes, and the prices rows quote from the
 * price table. Tools build on it: the typed client in client/ is generated from it (with the
 * default prices), and `npm test` lints it with Redocly (test/unit/openapi.test.ts).
 */
import { pathParameters, toJsonSchema } from '../validation/schema.ts';
import { OPERATION_DEFAULTS, type PriceTable } from '../credits/prices.ts';
import { priceText, type DocumentedError, type Endpoint } from '../pipeline/endpoint.ts';

/** Every error answer: Laravel's `{"message": …}`. */
const ERROR_SCHEMA = {
  type: 'object',
  required: ['message'],
  properties: { message: { type: 'string', description: 'What went wrong, for a person.' } },
};

/** A 422: every failing rule of every field. */
const VALIDATION_ERROR_SCHEMA = {
  type: 'object',
  required: ['message', 'errors'],
  properties: {
    message: { type: 'string', example: 'The given data was invalid.' },
    errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } }, description: 'Messages by field name.' },
    expected: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'What a failing field should hold, by field name, where its messages do not say it (the allowed values, the URL schemes, the setting that lets a local host through). Not in the original service: sent beside `errors`, whose wording is fixed.',
    },
  },
};

/** A 403 for credits: Laravel's message, and beside it which balance fell short and by how much. */
const CREDITS_ERROR_SCHEMA = {
  type: 'object',
  required: ['message', 'product', 'required', 'balance'],
  properties: {
    message: { type: 'string', example: 'You do not have enough credits to perform this action.' },
    product: { type: 'string', enum: ['scraping', 'extraction', 'blockchain'], description: 'The balance the request is billed to.' },
    required: { type: 'integer', description: 'Credits the request needs in all (so far: a PDF needs one per page once its pages are counted).' },
    balance: { type: 'integer', description: 'The balance of that product when the request was refused.' },
  },
};

const COMMON_ERRORS: Record<number, { description: string; example: string }> = {
  400: { description: 'The input could not be processed (see the message).', example: 'Unable to download the file.' },
  401: { description: 'Missing, malformed, unknown or revoked token.', example: 'Unauthenticated.' },
  403: { description: 'The balance is lower than the cost.', example: 'You do not have enough credits to perform this action.' },
  404: { description: 'Nothing was found.', example: 'Not found.' },
  409: { description: 'It conflicts with what exists (see the message).', example: 'The Stripe customer cus_NffrFeUfNV2Hib is already linked to user 2.' },
  429: { description: 'Too many attempts in the window; see Retry-After.', example: 'Too Many Attempts.' },
  502: { description: 'The upstream did not answer usefully; nothing was charged.', example: 'The upstream service is unavailable, please retry.' },
  503: { description: 'Every worker is busy and the queue is full; nothing was charged. Retry after Retry-After seconds.', example: 'The server is busy, please retry shortly.' },
};

/** Descriptions of the tags rows use; a tag not listed here is still declared, with a generic one. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  Scraping: 'Structured data from public web pages and services. Billed to the scraping balance, only on success.',
  Extraction: 'Text from documents and images. Billed to the extraction balance, only on success.',
  Account: 'The caller\'s profile, balances, request history and usage. Never billed.',
  Admin: 'What the operator\'s command line does, over HTTP. Owner tokens only.',
};

const errorResponse = (description: string, message: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, example: { message } } },
});

/** `POST /admin/users/{user}/tokens` → `postAdminUsersByUserTokens`. */
export function defaultOperationId(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      const parameter = /^\{(.+)\}$/.exec(segment);
      return parameter ? `by-${parameter[1]}` : segment;
    })
    .join('-')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return method.toLowerCase() + words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}

/**
 * A JSON Schema describing `example`, for rows that declare no `success.schema`: the types of what
 * they answer, every key present. `null` stays open (the example cannot tell what else it may be).
 */
export function schemaFromExample(value: unknown): Record<string, unknown> {
  if (value === null || value === undefined) return {};
  if (Array.isArray(value)) return { type: 'array', items: value.length ? schemaFromExample(value[0]) : {} };
  switch (typeof value) {
    case 'string':
      return { type: 'string' };
    case 'number':
      return { type: Number.isInteger(value) ? 'integer' : 'number' };
    case 'boolean':
      return { type: 'boolean' };
    case 'object': {
      const entries = Object.entries(value as Record<string, unknown>);
      return {
        type: 'object',
        properties: Object.fromEntries(entries.map(([key, item]) => [key, schemaFromExample(item)])),
        required: entries.filter(([, item]) => item !== null && item !== undefined).map(([key]) => key),
      };
    }
    default:
      return {};
  }
}

function documentedError(error: DocumentedError): { status: number; description: string; message: string } | undefined {
  if (typeof error === 'number') {
    const known = COMMON_ERRORS[error];
    return known && { status: error, description: known.description, message: known.example };
  }
  return { status: error.status, description: error.description ?? COMMON_ERRORS[error.status]?.description ?? 'See the message.', message: error.message };
}

export interface OpenApiOptions {
  version: string;
  /** Where the API is served; relative by default, so the document works behind any host name. */
  serverUrl?: string;
  /** The prices descriptions quote; the defaults (`OPERATION_DEFAULTS`) when left out. */
  prices?: PriceTable;
}

export type OpenApi = ReturnType<typeof buildOpenApi>;

export function buildOpenApi(endpoints: readonly Endpoint[], options: OpenApiOptions) {
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  const prices = priceText(options.prices ?? OPERATION_DEFAULTS);
  for (const endpoint of endpoints) {
    tags.add(endpoint.tag);
    const schema = toJsonSchema(endpoint.schema);
    const successSchema = endpoint.success.schema ? stripTypeBoxSymbols(endpoint.success.schema) : endpoint.success.example === undefined ? { type: 'object' } : schemaFromExample(endpoint.success.example);
    const responses: Record<string, unknown> = {
      [endpoint.success.status]: {
        description: endpoint.success.description,
        content: { 'application/json': { schema: successSchema, ...(endpoint.success.example === undefined ? {} : { example: endpoint.success.example }) } },
      },
      401: errorResponse(COMMON_ERRORS[401].description, COMMON_ERRORS[401].example),
      422: {
        description: 'Validation failed: every failing rule of every field is listed.',
        content: {
          'application/json': {
            schema: { $ref: '#/components/schemas/ValidationError' },
            example: { message: 'The given data was invalid.', errors: { format: ['The selected format is invalid.'] }, expected: { format: 'one of: raw, text, markdown' } },
          },
        },
      },
    };
    for (const error of endpoint.errors ?? []) {
      const documented = documentedError(error);
      if (!documented) continue;
      responses[documented.status] =
        documented.status === 403 && documented.message === COMMON_ERRORS[403].example
          ? {
              description: documented.description,
              content: {
                'application/json': {
                  schema: { $ref: '#/components/schemas/CreditsError' },
                  example: { message: documented.message, product: endpoint.billing?.product ?? 'scraping', required: 3, balance: 1 },
                },
              },
            }
          : errorResponse(documented.description, documented.message);
    }
    if (endpoint.throttle) responses[429] = errorResponse(COMMON_ERRORS[429].description, COMMON_ERRORS[429].example);
    if (endpoint.access === 'owner') responses[403] = errorResponse('The token is not an owner account\'s.', 'This action is unauthorized.');
    const operation: Record<string, unknown> = {
      operationId: endpoint.operationId ?? defaultOperationId(endpoint.method, endpoint.path),
      summary: endpoint.summary,
      description: [
        typeof endpoint.description === 'function' ? endpoint.description(prices) : endpoint.description,
        endpoint.billing ? `Billed to the **${endpoint.billing.product}** balance, only on success.` : undefined,
        endpoint.throttle ? `Throttled: ${endpoint.throttle.maxAttempts} requests per ${endpoint.throttle.windowSeconds} s per ${endpoint.throttle.per}.` : undefined,
      ]
        .filter(Boolean)
        .join('\n\n'),
      tags: [endpoint.tag],
      security: [{ bearer: [] }],
      responses,
    };
    const parameters: Array<Record<string, unknown>> = pathParameters(endpoint.schema).map((p) => ({ ...p, in: 'path', required: true }));
    const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
    if (endpoint.input === 'body') {
      if (Object.keys(props).length) operation.requestBody = { required: !!schema.required, content: { 'application/json': { schema } } };
    } else {
      parameters.push(...Object.entries(props).map(([name, property]) => ({ name, in: 'query', required: false, schema: property })));
    }
    if (parameters.length) operation.parameters = parameters;
    (paths[endpoint.path] ??= {})[endpoint.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'gleaner',
      version: options.version,
      description:
        'Credit-metered API that turns public web content into structured JSON. Send `Authorization: Bearer <token>`.\n\nThis page is drawn from the OpenAPI 3.1 document at [/openapi.json](/openapi.json) (for code generators and other tools); your balances and request history are on the [dashboard](/dashboard).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: options.serverUrl ?? '/', description: 'This server' }],
    tags: [...tags].sort().map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? `${name} endpoints.` })),
    security: [{ bearer: [] }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Sanctum-style token: `<id>|<secret>`' } },
      schemas: { Error: ERROR_SCHEMA, ValidationError: VALIDATION_ERROR_SCHEMA, CreditsError: CREDITS_ERROR_SCHEMA },
    },
    paths,
  };
}

/** TypeBox schemas are plain JSON Schema plus symbol keys; a JSON round trip drops those. */
function stripTypeBoxSymbols(schema: object): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema));
}

/**
 * /openapi.json (and the docs page's copy) as served: built with the price table of the moment, so
 * the costs it quotes follow `gleaner prices set`. The document is kept, and rebuilt only when the
 * price table it was built from changed.
 */
export class OpenApiDocument {
  readonly #endpoints: readonly Endpoint[];
  readonly #options: OpenApiOptions;
  readonly #prices: { current(): Promise<PriceTable> };
  #builtFrom: string;
  #document: OpenApi;

  constructor(endpoints: readonly Endpoint[], options: Omit<OpenApiOptions, 'prices'> & { prices: { current(): Promise<PriceTable> } }) {
    const { prices, ...rest } = options;
    this.#endpoints = endpoints;
    this.#options = rest;
    this.#prices = prices;
    this.#builtFrom = signature(OPERATION_DEFAULTS);
    this.#document = buildOpenApi(endpoints, rest);
  }

  /**
   * The document with the current prices (the price table is read from memory, refreshed every few
   * seconds). Should the table be unreadable (the database away), the last document is served,
   * with the prices last read.
   */
  async current(): Promise<OpenApi> {
    const table = await this.#prices.current().catch(() => undefined);
    if (table === undefined) return this.#document;
    const key = signature(table);
    if (key !== this.#builtFrom) {
      this.#document = buildOpenApi(this.#endpoints, { ...this.#options, prices: table });
      this.#builtFrom = key;
    }
    return this.#document;
  }

  /** The document as last built (with the default prices before the first `current()`). */
  latest(): OpenApi {
    return this.#document;
  }
}

/** What identifies a price table's contents, whatever the order of its rows. */
function signature(table: PriceTable): string {
  return JSON.stringify(Object.entries(table).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
