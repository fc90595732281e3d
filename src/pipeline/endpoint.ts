/**
 * The endpoint contract: one row of the endpoint table (src/endpoints/table.ts) and what its
 * handler is given. Rows are written with `defineEndpoint`, which types the handler's input from
 * the request schema, so a handler cannot read a field the schema does not declare.
 *
 * Money is the pipeline's alone: a row declares how it is billed (`billing`), a handler only says
 * how many units its work needs (`meter.cover`) or used (`units`), never credits.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Static, TSchema } from '@sinclair/typebox';
import type { FieldErrors, HttpError } from '../core/errors.ts';
import { validatedInput, type Fields, type InputOf, type Schema } from '../validation/schema.ts';
import type { Product } from '../credits/products.ts';
import { OPERATION_DEFAULTS, type Operation, type PriceTable } from '../credits/prices.ts';
import type { AuthenticatedUser } from '../accounts/store.ts';
import type { Services } from '../services.ts';
import type { CallContext } from '../adapters/kit/types.ts';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** What a handler may use: capabilities and account stores; never the database or the ledger. */
export type HandlerServices = Pick<Services, 'config' | 'accounts' | 'history' | 'outbound' | 'capabilities' | 'operations' | 'webhookSecrets' | 'jobs'>;

/** The 422 of a route with `objectBody` whose body is not a JSON object. */
export const OBJECT_BODY_ERROR = { field: 'body', message: 'The request body must be a JSON object.' } as const;

/** Units held before the work: exactly `n`, or as many as the balance allows within the range. */
export type UnitHold = number | { min: number; max: number };

export interface Billing<I> {
  product: Product;
  /**
   * The price-table row a unit costs (the operator changes prices there, not in code), or how the
   * request picks it (a page through a geo proxy costs `web_geo`).
   */
  operation: Operation | ((input: I) => Operation);
  /** Units of `operation` held before the work. Default 1. */
  units?(input: I): UnitHold;
  /**
   * Credits for `units` at `unitPrice`, when the cost is not simply their product (the search
   * floor `max(price, round(per_page / 3))`). Only for rows that hold a fixed number of units.
   */
  credits?(units: number, unitPrice: number, input: I): number;
}

/** The credits side of one request, as its handler sees it: units, never credits. */
export interface Meter {
  /** Units of `operation` (the row's by default) held for this request so far. */
  held(operation?: Operation): number;
  /**
   * Grows the hold so that it covers `total` units of `operation` (the row's by default), for work
   * whose size is learned on the way (a PDF's pages, its scanned pages). Throws the 403 "not enough
   * credits" error when the balance cannot cover them; nothing is held then.
   */
  cover(total: number, operation?: Operation): Promise<void>;
  /** Units of `operation` the user could have held for this request: what is held plus the balance. */
  affordable(operation?: Operation): Promise<number>;
  /** The 403 "not enough credits" for `units` of `operation` (the row's by default), naming the product, the credits needed and the balance. */
  shortOf(units: number, operation?: Operation): Promise<HttpError>;
}

export interface EndpointContext<I> {
  input: I;
  user: AuthenticatedUser;
  requestId: string;
  /** Aborted when the client goes away or the server shuts down: stop and throw. */
  signal: AbortSignal;
  services: HandlerServices;
  meter: Meter;
  /** Absolute URL of this route, for links in the answer (pagination). */
  routeUrl: string;
  log: FastifyBaseLogger;
  /** What every upstream call of this request is given: its signal, logger and id. */
  upstream: Required<CallContext>;
}

export interface EndpointResult<B = unknown> {
  status?: number;
  body: B;
  /** Units of the row's operation the success used, when fewer than were held. Default: all of them. */
  units?: number;
}

/**
 * An error answer a row documents: a status (described with the generic message of that status),
 * or a status with the row's own message (search's 404 is "No results found!", not "Not found.").
 */
export type DocumentedError = number | { status: number; message: string; description?: string };

/**
 * The price table as a row's description may quote it. Prices change at run time (`gleaner prices
 * set`), so a description that names one is a function of this, filled in from the current table
 * when /openapi.json is asked for.
 */
export interface PriceText {
  /** The price of one unit of `operation`, in credits. */
  price(operation: Operation): number;
  /** The same as words: "3 credits", "1 credit". */
  credits(operation: Operation): string;
}

/** The price table as descriptions quote it; an operation the table lacks is quoted at its default. */
export function priceText(table: PriceTable): PriceText {
  const price = (operation: Operation) => table[operation] ?? OPERATION_DEFAULTS[operation];
  return {
    price,
    credits: (operation) => {
      const credits = price(operation);
      return `${credits} credit${credits === 1 ? '' : 's'}`;
    },
  };
}

interface RowShape<I, F extends Fields, S extends TSchema> {
  method: HttpMethod;
  /**
   * The operation's name in /openapi.json and the typed client (`search`, `getUsage`). Default:
   * derived from the method and path (`POST /admin/users/{user}/tokens` → `postAdminUsersByUserTokens`).
   */
  operationId?: string;
  /**
   * The row's tool name on the MCP server (src/mcp/tools.ts). Default: derived from the path
   * (`/v1/forum/search` → `forum_search`); set it only when the path reads badly as a tool name.
   */
  toolName?: string;
  /** OpenAPI style: path parameters in braces (`/admin/users/{user}`), each a schema field with `in: 'path'`. */
  path: string;
  summary: string;
  /** For the docs; a function of the price table when it quotes prices (see `PriceText`). */
  description?: string | ((prices: PriceText) => string);
  tag: string;
  /** Where the input comes from: the JSON body (merged over the query string) or the query. */
  input: 'body' | 'query';
  schema: Schema<F>;
  billing?: Billing<I>;
  throttle?: { maxAttempts: number; windowSeconds: number; per: 'user' | 'token' };
  /** `owner`: only tokens of an owner account (the operator) may call it; others get 403. */
  access?: 'owner';
  /**
   * The body, when one is sent, must be a JSON object (or a form): an array, number, string or
   * `null` is refused with a 422 on the field `body` (`OBJECT_BODY_ERROR`) instead of being read
   * as "no fields", which on some routes means "everything" (renewing every plan). A missing or
   * empty body is not refused.
   */
  objectBody?: boolean;
  /** Recorded in request history (every /v1 route). */
  history: boolean;
  /**
   * Checks that need the caller or the database (a unique e-mail, the caller's secret key). They
   * run after the schema's rules whatever those found, as Laravel's `after` hooks do, so that every
   * failure is reported in one 422. `input` is the request as sent: check types before use.
   */
  afterValidation?(context: { input: Record<string, unknown>; user: AuthenticatedUser; services: HandlerServices }, errors: FieldErrors): Promise<void>;
  /**
   * False when the row cannot serve with this configuration (an upstream's credentials unset): it
   * then answers 503 "This endpoint is not configured." before any credit is held, so the answer
   * is the same whatever the caller's balance.
   */
  available?(services: HandlerServices): boolean;
  handler(context: EndpointContext<I>): Promise<EndpointResult<NoInfer<Static<S>>>>;
  /**
   * For the OpenAPI document: what a success looks like. `schema` (TypeBox) is the single source
   * of the answer's JSON Schema and of the handler's return type; without it the document derives
   * a schema from `example`.
   */
  success: { status: number; description: string; example?: unknown; schema?: S };
  /** Error statuses this route can answer besides 401/422/500, for the docs. */
  errors?: DocumentedError[];
}

/** A row as the table, the pipeline and the OpenAPI generator hold it. */
export type Endpoint = RowShape<Record<string, unknown>, Fields, TSchema>;

/** A row whose handler and billing are typed from its own schema. */
export type EndpointDefinition<F extends Fields, S extends TSchema = TSchema> = RowShape<InputOf<F>, F, S>;

/**
 * Declares one row. The handler's `input` is typed from `schema`; the table holds the row untyped,
 * its handler and billing reading what the pipeline hands them (only what that same schema
 * validated and coerced) as their schema's rules type it.
 */
export function defineEndpoint<const F extends Fields, S extends TSchema = TSchema>(definition: EndpointDefinition<F, S>): Endpoint {
  const typed = (input: Record<string, unknown>) => validatedInput(definition.schema, input);
  const { handler, billing } = definition;
  return {
    ...definition,
    billing: billing && billingReading(billing, typed),
    handler: (context) => handler({ ...context, input: typed(context.input) }),
  };
}

/** A row's billing with each function reading the validated input as its schema types it. */
function billingReading<I>(billing: Billing<I>, typed: (input: Record<string, unknown>) => I): Billing<Record<string, unknown>> {
  const { operation, units, credits } = billing;
  return {
    product: billing.product,
    operation: typeof operation === 'function' ? (input) => operation(typed(input)) : operation,
    ...(units && { units: (input: Record<string, unknown>) => units(typed(input)) }),
    ...(credits && { credits: (count: number, unitPrice: number, input: Record<string, unknown>) => credits(count, unitPrice, typed(input)) }),
  };
}
