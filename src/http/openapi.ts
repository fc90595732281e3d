/** The OpenAPI 3.1 document, generated from the endpoint table's schemas. */
import { pathParameters, toJsonSchema } from '../validation/schema.ts';
import type { Endpoint } from '../pipeline/endpoint.ts';

const messageBody = (example: string) => ({
  'application/json': { schema: { type: 'object', properties: { message: { type: 'string' } } }, example: { message: example } },
});

const COMMON_ERRORS: Record<number, { description: string; example: string }> = {
  400: { description: 'The input could not be processed (see the message).', example: 'Unable to download the file.' },
  401: { description: 'Missing, malformed, unknown or revoked token.', example: 'Unauthenticated.' },
  403: { description: 'The balance is lower than the cost.', example: 'You do not have enough credits to perform this action.' },
  404: { description: 'Nothing was found.', example: 'Not found.' },
  409: { description: 'It conflicts with what exists (see the message).', example: 'The Stripe customer cus_NffrFeUfNV2Hib is already linked to user 2.' },
  429: { description: 'Too many attempts in the window; see Retry-After.', example: 'Too Many Attempts.' },
  502: { description: 'The upstream did not answer usefully; nothing was charged.', example: 'The search engine did not answer, please retry.' },
  503: { description: 'Every worker is busy and the queue is full; nothing was charged. Retry after Retry-After seconds.', example: 'The server is busy, please retry shortly.' },
};

export function buildOpenApi(endpoints: readonly Endpoint[], info: { version: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const endpoint of endpoints) {
    const schema = toJsonSchema(endpoint.schema);
    const responses: Record<string, unknown> = {
      [endpoint.success.status]: {
        description: endpoint.success.description,
        content: { 'application/json': endpoint.success.example === undefined ? {} : { example: endpoint.success.example } },
      },
      401: { description: COMMON_ERRORS[401].description, content: messageBody(COMMON_ERRORS[401].example) },
      422: {
        description: 'Validation failed: every failing rule of every field is listed.',
        content: {
          'application/json': {
            example: { message: 'The given data was invalid.', errors: { field: ['The field field is required.'] } },
          },
        },
      },
    };
    for (const status of endpoint.errors ?? []) {
      const known = COMMON_ERRORS[status];
      if (known) responses[status] = { description: known.description, content: messageBody(known.example) };
    }
    if (endpoint.access === 'owner') {
      responses[403] = { description: 'The token is not an owner account\'s.', content: messageBody('This action is unauthorized.') };
    }
    const operation: Record<string, unknown> = {
      summary: endpoint.summary,
      description: [
        endpoint.description,
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
      version: info.version,
      description: 'Credit-metered API that turns public web content into structured JSON. Send `Authorization: Bearer <token>`.',
    },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'Sanctum-style token: `<id>|<secret>`' } } },
    paths,
  };
}
