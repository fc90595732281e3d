/**
 * Errors that map to an HTTP answer, and the wire messages every route shares. Bodies follow
 * Laravel 8's wire strings exactly (docs/spec/contract.md §1), because existing clients of the original service
 * parse them. Messages that belong to one product live next to its endpoints.
 */
export class HttpError extends Error {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) {
    super(String(body.message ?? `HTTP ${status}`));
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

export type FieldErrors = Record<string, string[]>;

/** What the caller fell short of when credits were refused: the product, the credits needed, the balance. */
export interface CreditShortfall {
  product: string;
  required: number;
  balance: number;
}

export const MESSAGES = {
  unauthenticated: 'Unauthenticated.',
  unauthorized: 'This action is unauthorized.',
  invalid: 'The given data was invalid.',
  insufficientCredits: 'You do not have enough credits to perform this action.',
  notFoundRoute: 'Not Found.',
  notFound: 'Not found.',
  tooManyAttempts: 'Too Many Attempts.',
  invalidJson: 'The request body is not valid JSON.',
  bodyTooLarge: 'The request body is too large.',
  headersTooLarge: 'The request headers are too large.',
  requestTimeout: 'The request did not arrive in time.',
  malformedRequest: 'The request is not valid HTTP.',
  serverError: 'Server Error',
  busy: 'The server is busy, please retry shortly.',
  upstreamUnavailable: 'The upstream service is unavailable, please retry.',
  notConfigured: 'This endpoint is not configured.',
} as const;

export const httpErrors = {
  unauthenticated: () => new HttpError(401, { message: MESSAGES.unauthenticated }),
  /** Laravel's 422; `expected` (ours, beside it) says what a failing field should hold where its message does not. */
  validation: (errors: FieldErrors, expected: Record<string, string> = {}) =>
    new HttpError(422, { message: MESSAGES.invalid, errors, ...(Object.keys(expected).length ? { expected } : {}) }),
  /** A single-field 422, for checks that only the handler can make (e.g. a wrong secret key). */
  fieldInvalid: (field: string, message: string) =>
    new HttpError(422, { message: MESSAGES.invalid, errors: { [field]: [message] } }),
  /** Laravel's message, and beside it (ours) which balance fell short and by how much. */
  insufficientCredits: (shortfall?: CreditShortfall) => new HttpError(403, { message: MESSAGES.insufficientCredits, ...shortfall }),
  /** Laravel's AuthorizationException: the token is valid but may not do this. */
  unauthorized: () => new HttpError(403, { message: MESSAGES.unauthorized }),
  forbidden: (message: string) => new HttpError(403, { message }),
  badRequest: (message: string) => new HttpError(400, { message }),
  notFound: (message: string = MESSAGES.notFound) => new HttpError(404, { message }),
  conflict: (message: string) => new HttpError(409, { message }),
  badGateway: (message: string = MESSAGES.upstreamUnavailable, extra: Record<string, unknown> = {}) =>
    new HttpError(502, { message, ...extra }),
  busy: () => new HttpError(503, { message: MESSAGES.busy }, { 'Retry-After': '5' }),
  notConfigured: () => new HttpError(503, { message: MESSAGES.notConfigured }),
  tooManyAttempts: (headers: Record<string, string>) =>
    new HttpError(429, { message: MESSAGES.tooManyAttempts }, headers),
};
