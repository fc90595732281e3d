/**
 * Errors that map to an HTTP answer. Bodies follow Laravel 8's wire strings exactly
 * (contract §1), because existing clients of the original service parse them.
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

export const MESSAGES = {
  unauthenticated: 'Unauthenticated.',
  unauthorized: 'This action is unauthorized.',
  invalid: 'The given data was invalid.',
  insufficientCredits: 'You do not have enough credits to perform this action.',
  domainNotSupported: 'Domain not supported',
  notFoundRoute: 'Not Found.',
  notFound: 'Not found.',
  tooManyAttempts: 'Too Many Attempts.',
  invalidJson: 'The request body is not valid JSON.',
  bodyTooLarge: 'The request body is too large.',
  serverError: 'Server Error',
  noResults: 'No results found!',
  searchUnavailable: 'The search engine did not answer, please retry.',
  downloadFailed: 'Unable to download the file.',
  pdfFailed: 'Unable to extract text from the PDF.',
  pdfTooManyPages: 'The PDF has more than 30 pages.',
  imageFailed: 'Unable to process the image.',
  busy: 'The server is busy, please retry shortly.',
} as const;

export const httpErrors = {
  unauthenticated: () => new HttpError(401, { message: MESSAGES.unauthenticated }),
  validation: (errors: FieldErrors) => new HttpError(422, { message: MESSAGES.invalid, errors }),
  /** A single-field 422, for checks that only the handler can make (e.g. a wrong secret key). */
  fieldInvalid: (field: string, message: string) =>
    new HttpError(422, { message: MESSAGES.invalid, errors: { [field]: [message] } }),
  insufficientCredits: () => new HttpError(403, { message: MESSAGES.insufficientCredits }),
  /** Laravel's AuthorizationException: the token is valid but may not do this. */
  unauthorized: () => new HttpError(403, { message: MESSAGES.unauthorized }),
  domainNotSupported: () => new HttpError(403, { message: MESSAGES.domainNotSupported }),
  badRequest: (message: string) => new HttpError(400, { message }),
  notFound: (message: string = MESSAGES.notFound) => new HttpError(404, { message }),
  badGateway: (message: string, extra: Record<string, unknown> = {}) =>
    new HttpError(502, { message, ...extra }),
  busy: () => new HttpError(503, { message: MESSAGES.busy }, { 'Retry-After': '5' }),
  tooManyAttempts: (headers: Record<string, string>) =>
    new HttpError(429, { message: MESSAGES.tooManyAttempts }, headers),
};
