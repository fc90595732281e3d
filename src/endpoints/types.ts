/** The shape of one row of the endpoint table (src/endpoints/table.ts). */
import type { FastifyBaseLogger } from 'fastify';
import type { Schema } from '../validation/schema.ts';
import type { FieldErrors } from '../http/errors.ts';
import type { Product } from '../credits/products.ts';
import type { PriceTable } from '../credits/prices.ts';
import type { AuthenticatedUser } from '../accounts/store.ts';
import type { Services } from '../services.ts';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** Credits a request may need: held before the work (403 when the balance is below `min`). */
export interface CostRange {
  min: number;
  max: number;
}

export interface EndpointContext<I = Record<string, any>> {
  input: I;
  user: AuthenticatedUser;
  requestId: string;
  /** Aborted when the client goes away or the server shuts down: stop and throw. */
  signal: AbortSignal;
  services: Services;
  /** Credits held for this request (0 on unbilled routes). A result's `cost` may not exceed it. */
  readonly held: number;
  /**
   * Grows the hold to `total` credits when the work reveals its real cost (a PDF's page count).
   * Throws the 403 "not enough credits" error when the balance cannot cover it.
   */
  holdUpTo(total: number): Promise<void>;
  /** Credits the user could still have held for this request: what is held plus the balance. */
  affordable(): Promise<number>;
  /** Absolute URL of this route, for links in the answer (pagination). */
  routeUrl: string;
  log: FastifyBaseLogger;
}

export interface EndpointResult {
  status?: number;
  body: unknown;
  /** Credits to charge when the answer is a success; defaults to the held amount. */
  cost?: number;
}

export interface Endpoint<I = Record<string, any>> {
  method: HttpMethod;
  /** OpenAPI style: path parameters in braces (`/admin/users/{user}`), each a schema field with `in: 'path'`. */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  /** Where the input comes from: the JSON body (merged over the query string) or the query. */
  input: 'body' | 'query';
  schema: Schema;
  billing?: {
    product: Product;
    cost(input: I, prices: PriceTable): CostRange | number;
  };
  throttle?: { maxAttempts: number; windowSeconds: number; per: 'user' | 'token' };
  /** `owner`: only tokens of an owner account (the operator) may call it; others get 403. */
  access?: 'owner';
  /**
   * The body, when one is sent, must be a JSON object (or a form): an array, number, string or
   * `null` is refused with a 422 on the field `body` (`OBJECT_BODY_ERROR`) instead of being read
   * as "no fields", which on some routes means "everything" (renewing every plan). Honoured by the
   * pipeline before validation; a missing or empty body is not refused.
   */
  objectBody?: boolean;
  /** Recorded in request history (every /v1 route). */
  history: boolean;
  /**
   * Checks that need the caller or the database (a unique e-mail, the caller's secret key). They
   * run after the schema's rules whatever those found, as Laravel's `after` hooks do, so that every
   * failure is reported in one 422. `input` is the request as sent: check types before use.
   */
  afterValidation?(context: { input: Record<string, unknown>; user: AuthenticatedUser; services: Services }, errors: FieldErrors): Promise<void>;
  handler(context: EndpointContext<I>): Promise<EndpointResult>;
  /** For the OpenAPI document: what a success looks like. */
  success: { status: number; description: string; example?: unknown };
  /** Error statuses this route can answer besides 401/422/500, for the docs. */
  errors?: number[];
}

/** The 422 of a route with `objectBody` whose body is not a JSON object. */
export const OBJECT_BODY_ERROR = { field: 'body', message: 'The request body must be a JSON object.' } as const;
