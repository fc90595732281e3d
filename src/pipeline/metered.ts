/**
 * The one pipeline every table route passes through:
 *   authenticate → throttle → validate → hold credits → handler → capture or release → history.
 * No route touches balances itself: a row declares how it is billed, its handler reports units
 * (pipeline/meter.ts turns them into credits), and this file settles.
 */
import { performance } from 'node:perf_hooks';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, httpErrors, MESSAGES, type FieldErrors } from '../core/errors.ts';
import { validate } from '../validation/schema.ts';
import { historyParams } from '../history/params.ts';
import { throttle } from '../throttle/limiter.ts';
import { OBJECT_BODY_ERROR, type Endpoint, type EndpointContext } from './endpoint.ts';
import type { HistoryRecord } from '../credits/ledger.ts';
import type { Services } from '../services.ts';
import { RequestMeter } from './meter.ts';
import { raceAbort } from '../core/abort.ts';
import type { AuthenticatedUser } from '../accounts/store.ts';

/** What the HTTP layer gives each request: how to register it for shutdown, and how its body read. */
export interface RequestScope {
  /** Registers the request's controller so a shutdown can abort it; returns the unregistration. */
  track(controller: AbortController): () => void;
  /** The body was sent but is not valid JSON: answered 400, after authentication. */
  malformedBody: boolean;
  /** The body is over the size limit (and was not read): answered 413, after authentication. */
  bodyTooLarge?: boolean;
  /** Told what a billed request's hold came to: credits charged, and the rest released (metrics). */
  settled?(event: { product: string; charged: number; released: number }): void;
}

export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  // The token starts at a `\S`: `\s+(.+)` tried each split of a long run of whitespace before a line terminator.
  const match = /^Bearer\s+(\S.*)$/i.exec(header.trim());
  return match ? match[1].trim() : null;
}

function rawInput(endpoint: Endpoint, request: FastifyRequest): Record<string, unknown> {
  const query = (request.query ?? {}) as Record<string, unknown>;
  // Path parameters win: a body cannot redirect a call to another user than its URL names.
  const params = (request.params ?? {}) as Record<string, unknown>;
  if (endpoint.input === 'query') return { ...query, ...params };
  const body = request.body;
  const fields = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  return { ...query, ...fields, ...params };
}

/** Fields in the order the schema lists them (then any others), as Laravel reports them. */
function inSchemaOrder(schema: Endpoint['schema'], errors: FieldErrors): FieldErrors {
  const names = [...Object.keys(schema.fields), ...Object.keys(errors)];
  return Object.fromEntries([...new Set(names)].filter((name) => errors[name]?.length).map((name) => [name, errors[name]]));
}

export function routeUrl(request: FastifyRequest, path: string): string {
  return `${request.protocol}://${request.host}${path}`;
}

export async function runEndpoint(
  endpoint: Endpoint,
  request: FastifyRequest,
  reply: FastifyReply,
  services: Services,
  scope: RequestScope,
): Promise<void> {
  const started = performance.now();
  // Tracked from the first moment, so a shutdown also stops a request still authenticating.
  const controller = new AbortController();
  const untrack = scope.track(controller);
  let user: AuthenticatedUser | null;
  try {
    const bearer = bearerToken(request);
    user = bearer ? await raceAbort(services.accounts.authenticate(bearer), controller.signal) : null;
    if (!user) throw httpErrors.unauthenticated();
    if (endpoint.access === 'owner' && !(await raceAbort(services.accounts.isOwner(user.id), controller.signal))) throw httpErrors.unauthorized();
  } catch (error) {
    untrack();
    // Stopped by a shutdown before it was known whose request it is: nothing to record.
    if (controller.signal.aborted && !(error instanceof HttpError)) throw httpErrors.busy();
    throw error;
  }
  const caller = user;

  const requestId = request.id;
  // The response stream closing before we answered means the client went away: stop the work.
  let clientGone = false;
  const onClose = () => {
    if (reply.raw.writableFinished) return;
    clientGone = true;
    controller.abort(new Error('The client closed the connection.'));
  };
  reply.raw.once('close', onClose);
  // A client that hung up while it was being authenticated closed the stream before this
  // listener existed, and 'close' is not emitted twice: without this its work would run, and be
  // charged, for nobody.
  if (reply.raw.destroyed) onClose();

  const input = rawInput(endpoint, request);
  let meter: RequestMeter | undefined;
  let charge = 0;
  let status = 500;

  const finish = async () => {
    const history: HistoryRecord | undefined = endpoint.history
      ? {
          userId: caller.id,
          requestId,
          method: endpoint.method, // after a method override, the one that ran
          endpoint: endpoint.path,
          product: endpoint.billing?.product ?? null,
          status,
          durationMs: Math.round(performance.now() - started),
          params: historyParams(endpoint.schema, input),
        }
      : undefined;
    try {
      if (meter && meter.heldCredits > 0) {
        const charged = await services.ledger.settle(requestId, charge, history);
        if (endpoint.billing) scope.settled?.({ product: endpoint.billing.product, charged, released: Math.max(0, meter.heldCredits - charged) });
        return { ok: true, charged };
      }
      if (history) await services.ledger.record(history);
      return { ok: true, charged: 0 };
    } catch (error) {
      // The hold stays behind and the sweeper returns it: the user is never charged by mistake.
      request.log.error({ err: error, requestId }, 'settling credits or recording history failed');
      return { ok: false, charged: 0 };
    }
  };

  try {
    if (endpoint.throttle) {
      const per = endpoint.throttle.per === 'token' ? `t${caller.tokenId}` : `u${caller.id}`;
      // Fail closed: without its counters (Redis away) a throttled route answers 503, it never
      // lets unlimited attempts through (PATCH /me guards a secret key).
      const decision = await throttle(services.throttle, `${endpoint.method}:${endpoint.path}:${per}`, endpoint.throttle.maxAttempts, endpoint.throttle.windowSeconds).catch(
        (error: unknown) => {
          request.log.warn({ err: error, requestId }, 'the throttle counters are unreachable; refusing the throttled request');
          throw httpErrors.busy();
        },
      );
      reply.headers(decision.headers);
      if (!decision.allowed) throw httpErrors.tooManyAttempts(decision.headers);
    }

    if (scope.bodyTooLarge) throw new HttpError(413, { message: MESSAGES.bodyTooLarge });
    if (scope.malformedBody) throw httpErrors.badRequest(MESSAGES.invalidJson);
    const body = request.body;
    if (endpoint.objectBody && body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) {
      throw httpErrors.fieldInvalid(OBJECT_BODY_ERROR.field, OBJECT_BODY_ERROR.message);
    }
    const validation = await validate(endpoint.schema, input, services.outbound);
    const errors = validation.ok ? {} : { ...validation.errors };
    if (endpoint.afterValidation) await endpoint.afterValidation({ input, user: caller, services }, errors);
    if (!validation.ok || Object.keys(errors).length) throw httpErrors.validation(inSchemaOrder(endpoint.schema, errors), validation.ok ? {} : validation.expected);

    if (endpoint.available && !endpoint.available(services)) throw httpErrors.notConfigured();
    meter = new RequestMeter({
      billing: endpoint.billing,
      input: validation.value,
      prices: await services.prices.current(),
      ledger: services.ledger,
      requestId,
      userId: caller.id,
      route: endpoint.path,
    });
    await meter.holdUpFront();

    const context: EndpointContext<Record<string, unknown>> = {
      input: validation.value,
      user: caller,
      requestId,
      signal: controller.signal,
      services,
      meter,
      routeUrl: routeUrl(request, endpoint.path),
      log: request.log,
      upstream: { signal: controller.signal, log: request.log, requestId, tenant: String(caller.id) },
    };
    const result = await endpoint.handler(context);
    status = result.status ?? endpoint.success.status;
    // Only a client that went away forfeits a finished result; one aborted by a shutdown after the
    // work completed is answered, and charged, as usual.
    if (status >= 200 && status < 300 && !clientGone) charge = meter.charge(result.units);
    if (clientGone) {
      charge = 0;
      status = 499; // nginx's "client closed request": recorded, never sent
    }
    // A success that could not be charged is not answered as one: the work is not given away.
    const settled = await finish();
    if (charge > 0 && (!settled.ok || settled.charged < charge)) {
      // Its hold was swept meanwhile (a long renewal failure): history must not keep the 200 the
      // capture wrote, and what was charged, if anything, goes back.
      if (settled.ok) {
        const product = endpoint.billing?.product;
        const correction = settled.charged > 0 && product
          ? services.ledger.refund(requestId, caller.id, product, settled.charged, 500)
          : services.ledger.correctStatus(requestId, 500);
        await correction.catch((error: unknown) => request.log.error({ err: error, requestId }, 'correcting the history of an uncharged success failed'));
      }
      throw new Error(`${endpoint.path}: the credits of a successful request could not be captured (charged ${settled.charged} of ${charge}).`);
    }
    const product = endpoint.billing?.product;
    if (clientGone && settled.charged > 0 && product) {
      // The client hung up while its credits were being captured: the answer will not reach it.
      await services.ledger.refund(requestId, caller.id, product, settled.charged).catch((error: unknown) => {
        request.log.error({ err: error, requestId }, 'refunding a request whose client hung up failed');
      });
      status = 499;
    }
    reply.code(status).send(result.body);
  } catch (error) {
    charge = 0;
    // A client that went away is recorded as such, whatever its abandoned work failed with.
    status = clientGone ? 499 : error instanceof HttpError ? error.status : 500;
    await finish();
    throw error;
  } finally {
    reply.raw.off('close', onClose);
    untrack();
  }
}
