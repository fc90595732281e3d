/**
 * Assembles the HTTP server: Laravel 8 wire conventions (JSON everywhere, exact error bodies,
 * 404/405 with Allow), request ids, body limits, and one route per endpoint-table row, each run
 * through the metered pipeline; plus the Stripe webhook (outside the table: no token, no metering).
 */
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteHandlerMethod } from 'fastify';
import { HttpError, MESSAGES } from '../core/errors.ts';
import { trimTrailing } from '../core/text.ts';
import { OpenApiDocument } from './openapi.ts';
import { InFlight } from './in-flight.ts';
import { runEndpoint } from '../pipeline/metered.ts';
import { ownListeners } from '../outbound/own-listeners.ts';
import { registerStripeWebhook, STRIPE_WEBHOOK_PATH } from './stripe-webhook.ts';
import { registerMetrics } from './metrics.ts';
import { readiness } from './readiness.ts';
import { BRAND, registerDashboard } from './dashboard.ts';
import { MCP_PATH, registerMcpRoute } from '../mcp/server.ts';
import type { Endpoint } from '../pipeline/endpoint.ts';
import type { Services } from '../services.ts';

/** The parsed body of a request whose body is not valid JSON: answered 400 once authenticated. */
export const MALFORMED_BODY: Readonly<Record<string, never>> = Object.freeze({});

export interface ServerOptions {
  endpoints: readonly Endpoint[];
  version: string;
  /** The service's logger; each request logs through a child of it that carries the request id. None: silent. */
  logger?: FastifyBaseLogger;
}

export interface GleanerServer {
  app: FastifyInstance;
  inFlight: InFlight;
  /** Where the METRICS_PORT listener serves /metrics, once listening (undefined when it is off). */
  metricsUrl(): string | undefined;
  /**
   * The drain before a shutdown: /ready answers 503 so a load balancer stops sending traffic,
   * while the listener keeps accepting and serving (each answer closes its connection).
   */
  drain(): void;
  /** Whether drain() was called. */
  draining(): boolean;
  /** Stops accepting, answers what is in flight (closing each connection after its answer). */
  close(): Promise<void>;
}

export async function buildServer(services: Services, options: ServerOptions): Promise<GleanerServer> {
  const { config } = services;
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    return503OnClosing: true,
    // Laravel matches `/v1/pdf/` as `/v1/pdf`: clients that add the slash must keep working.
    routerOptions: {
      ignoreTrailingSlash: true,
      // A path whose percent-encoding is not UTF-8 names no route: answered as any unknown path.
      onBadUrl: (_path, _request, response) => {
        const body = JSON.stringify({ message: MESSAGES.notFoundRoute });
        response.writeHead(404, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'X-Request-Id': randomUUID() });
        response.end(body);
      },
    },
    forceCloseConnections: 'idle',
    clientErrorHandler: answerClientError,
  });
  const inFlight = new InFlight();
  // --- metrics (METRICS_PORT / METRICS_TOKEN; see ./metrics.ts) ---
  const metrics = await registerMetrics(app, services);
  // --- end metrics ---
  const run = (endpoint: Endpoint, request: FastifyRequest, reply: FastifyReply) =>
    runEndpoint(endpoint, request, reply, services, {
      track: (controller) => inFlight.track(controller),
      malformedBody: request.body === MALFORMED_BODY,
      settled: metrics?.settled,
    });

  // The outbound client never connects to the service's own listeners (docs/outbound.md).
  let forgetListeners = () => {};
  app.addHook('onListen', async () => {
    forgetListeners = ownListeners.add(app.addresses());
  });
  app.addHook('onClose', async () => forgetListeners());

  let closing = false;
  let draining = false;
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  // While draining or shutting down, each answer closes its connection: a keep-alive client
  // reconnects (through its balancer, to another process), and keep-alive sockets do not hold
  // the shutdown open until their idle timeout.
  app.addHook('onSend', async (_request, reply) => {
    if (closing || draining) reply.header('Connection', 'close');
  });

  // One parser for every content type: JSON (strict), form posts, or nothing.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, {});
    const type = String(request.headers['content-type'] ?? '');
    if (type.startsWith('application/x-www-form-urlencoded')) return done(null, Object.fromEntries(new URLSearchParams(text)));
    try {
      done(null, JSON.parse(text));
    } catch {
      // Answered by the pipeline after authentication, as Laravel would (an unknown token is a
      // 401 whatever the body), and recorded in history like any other refused /v1 call.
      done(null, MALFORMED_BODY);
    }
  });

  app.setErrorHandler(async (error: FastifyError | HttpError, request, reply) => {
    if (error instanceof HttpError) {
      reply.code(error.status).headers(error.headers).send(error.body);
      return;
    }
    const unreadBody =
      error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'too_large' : error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? 'malformed' : undefined;
    if (unreadBody) {
      // A table route answers it like any refused call: after authentication (401 first) and the
      // throttle (its headers), recorded in history. The body is never read.
      const endpoint = tableRouteOf(request);
      if (endpoint) {
        try {
          const scope = { track: (controller: AbortController) => inFlight.track(controller), malformedBody: unreadBody === 'malformed', bodyTooLarge: unreadBody === 'too_large' };
          await runEndpoint(endpoint, request, reply, services, scope);
        } catch (refusal) {
          if (refusal instanceof HttpError) return reply.code(refusal.status).headers(refusal.headers).send(refusal.body);
          request.log.error({ err: refusal, requestId: request.id }, 'unhandled error');
          return reply.code(500).send({ message: MESSAGES.serverError });
        }
        return;
      }
      // No route took it: a path or method that does not exist is told so first, as without a body.
      if (request.routeOptions.url === undefined) return answerNoRoute(request, reply);
      if (unreadBody === 'too_large') reply.code(413).send({ message: MESSAGES.bodyTooLarge });
      else reply.code(400).send({ message: MESSAGES.invalidJson });
      return;
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || error.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') {
      reply.code(400).send({ message: MESSAGES.invalidJson });
      return;
    }
    // Fastify's own refusals (a QUERY without Content-Type, for one) are the client's doing, not
    // a fault: a method or path that exists nowhere is told so as any other, the rest keep their 4xx.
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      if (request.routeOptions.url === undefined) return answerNoRoute(request, reply);
      request.log.info({ err: error, requestId: request.id }, 'request refused by the framework');
      reply.code(status).send({ message: status === 400 ? MESSAGES.malformedRequest : error.message });
      return;
    }
    request.log.error({ err: error, requestId: request.id }, 'unhandled error');
    reply.code(500).send({ message: MESSAGES.serverError });
  });

  // Laravel answers 405 (with Allow) when the path exists under other methods, else 404.
  // Paths are OpenAPI templates: `{user}` matches one path segment.
  const methodsByPath = new Map<string, { pattern: RegExp; methods: string[] }>();
  const allow = (path: string, method: string) => {
    let entry = methodsByPath.get(path);
    if (!entry) {
      const pattern = new RegExp(`^${path.split(/\{[^/}]+\}/).map(escapeRegExp).join('[^/]+')}$`);
      entry = { pattern, methods: [] };
      methodsByPath.set(path, entry);
    }
    if (method === 'GET') entry.methods.push('GET', 'HEAD');
    else entry.methods.push(method);
  };
  const allowedMethods = (path: string): string[] | undefined => {
    const exact = methodsByPath.get(path);
    if (exact) return exact.methods;
    const methods = [...methodsByPath.values()].filter((e) => e.pattern.test(path)).flatMap((e) => e.methods);
    return methods.length ? [...new Set(methods)] : undefined;
  };
  const methodNotAllowed = (reply: FastifyReply, method: string, methods: string[]) =>
    reply
      .code(405)
      .header('Allow', methods.join(', '))
      .send({ message: `The ${method} method is not supported for this route. Supported methods: ${methods.join(', ')}.` });
  function answerNoRoute(request: FastifyRequest, reply: FastifyReply) {
    const path = trimTrailing(request.url.split('?')[0], '/') || '/';
    const methods = allowedMethods(path);
    if (methods) return methodNotAllowed(reply, request.method, methods);
    return reply.code(404).send({ message: MESSAGES.notFoundRoute });
  }
  app.setNotFoundHandler(answerNoRoute);

  // The table's routes. Every path answers POST too: there, as in Laravel, a method override
  // (`X-HTTP-Method-Override`, or `_method` in the body or query) picks the route, so clients that
  // can only send POST reach PATCH /me.
  const endpointsByPath = new Map<string, Map<string, Endpoint>>();
  /** The table row a request was routed to, for answers given before its handler runs. */
  const tableRouteOf = (request: FastifyRequest): Endpoint | undefined => {
    const template = request.routeOptions.url;
    if (template === undefined) return undefined;
    const byMethod = endpointsByPath.get(template.replace(/:([^/]+)/g, '{$1}'));
    if (!byMethod) return undefined;
    // The body is unread: only the header can override a POST's method.
    const header = request.headers['x-http-method-override'];
    const method = request.method === 'POST' && typeof header === 'string' && header.trim() ? header.trim().toUpperCase() : request.method;
    return byMethod.get(method === 'HEAD' ? 'GET' : method);
  };
  for (const endpoint of options.endpoints) {
    allow(endpoint.path, endpoint.method);
    const byMethod = endpointsByPath.get(endpoint.path) ?? new Map<string, Endpoint>();
    byMethod.set(endpoint.method, endpoint);
    endpointsByPath.set(endpoint.path, byMethod);
  }
  for (const [path, byMethod] of endpointsByPath) {
    const url = path.replace(/\{([^/}]+)\}/g, ':$1');
    for (const [method, endpoint] of byMethod) {
      if (method !== 'POST') app.route({ method, url, handler: (request, reply) => run(endpoint, request, reply) });
    }
    app.route({
      method: 'POST',
      url,
      handler: (request, reply) => {
        const method = effectiveMethod(request);
        const endpoint = byMethod.get(method === 'HEAD' ? 'GET' : method);
        if (endpoint) return run(endpoint, request, reply);
        return methodNotAllowed(reply, method, allowedMethods(path) ?? []);
      },
    });
  }

  // MCP for AI agents: one tool per row, each call run through its route (docs/mcp.md).
  allow(MCP_PATH, 'POST');
  registerMcpRoute(app, services, { endpoints: options.endpoints, version: options.version, malformedBody: MALFORMED_BODY });

  // Payments: Stripe reports paid invoices here (only when its signing secret is configured).
  if (config.stripeWebhook) {
    allow(STRIPE_WEBHOOK_PATH, 'POST');
    await registerStripeWebhook(app, services, { config: config.stripeWebhook, inFlight });
  }

  // Operations: liveness, readiness, the API description and its interactive page.
  // Quotes the current price table: rebuilt when it changed (`gleaner prices set`), else kept.
  const openapi = new OpenApiDocument(options.endpoints, { version: options.version, prices: services.prices });
  const get = (path: string, handler: RouteHandlerMethod) => {
    allow(path, 'GET');
    app.get(path, handler);
  };
  get('/health', async () => ({ status: 'ok' }));
  // Readiness (./readiness.ts): database, Redis, migrations, pools; /health stays liveness only.
  get('/ready', async (_request: FastifyRequest, reply: FastifyReply) => {
    const state = await readiness(services, { draining });
    return state.ready ? { status: 'ready' } : reply.code(503).send({ status: 'unavailable', message: state.reason });
  });
  get('/openapi.json', () => openapi.current());
  // The user dashboard (./dashboard.ts): static files under a strict Content-Security-Policy.
  registerDashboard(app, allow);
  await app.register(import('@fastify/swagger'), { mode: 'static', specification: { document: openapi.latest() as never } });
  // The docs page reads the same document, brought up to date with the prices before it is sent.
  await app.register(import('@fastify/swagger-ui'), {
    routePrefix: '/docs',
    // gleaner's name and mark, not the UI library's.
    logo: { type: 'image/svg+xml', content: BRAND.wordmark, href: '/docs', target: '_self' },
    theme: {
      title: 'gleaner · API docs',
      favicon: [{ filename: 'gleaner.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: BRAND.mark }],
    },
    uiHooks: { preHandler: async () => void (await openapi.current()) },
    transformSpecification: () => openapi.latest(),
    transformSpecificationClone: false,
  });

  return {
    app,
    inFlight,
    metricsUrl: () => metrics?.url(),
    drain() {
      draining = true;
    },
    draining: () => draining,
    close() {
      closing = true;
      return app.close();
    },
  };
}

/**
 * Requests Node's HTTP parser refuses before any route sees them (headers too large, a request
 * that never finished arriving, malformed HTTP) are answered in the house shape too: a JSON
 * `message` and an `X-Request-Id`, and the connection is closed (the parser cannot resume).
 */
function answerClientError(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', MESSAGES.headersTooLarge]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', MESSAGES.requestTimeout]
        : [400, 'Bad Request', MESSAGES.malformedRequest];
  const requestId = randomUUID();
  this.log.info({ err: error, requestId, status }, 'client error');
  const body = JSON.stringify({ message });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A POST's method after Laravel's override: the X-HTTP-Method-Override header, else `_method`. */
function effectiveMethod(request: FastifyRequest): string {
  const header = request.headers['x-http-method-override'];
  const body = request.body;
  const fromBody = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>)._method : undefined;
  const fromQuery = (request.query as Record<string, unknown> | undefined)?._method;
  const method = [header, fromBody, fromQuery].find((value): value is string => typeof value === 'string' && value.trim() !== '');
  return method ? method.trim().toUpperCase() : 'POST';
}
