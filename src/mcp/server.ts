/**
 * The MCP server: the endpoint table's tools (./tools.ts) served over Streamable HTTP at
 * `POST /mcp` on the main port. Each tool call is an in-process request to the row's own route
 * (Fastify's `inject`) with the caller's bearer token, so authentication, throttles, validation,
 * holds, capture, release and history are exactly the API's: MCP adds no second path to the money.
 *
 * Stateless: every POST carries its own token and is served by a fresh server and transport, so
 * nothing is kept between requests and any replica can answer any request (docs/mcp.md).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { httpErrors } from '../core/errors.ts';
import { bearerToken } from '../pipeline/metered.ts';
import type { Endpoint } from '../pipeline/endpoint.ts';
import type { Services } from '../services.ts';
import { buildTools, requestOf, resultOf, type TableTool, type ToolAnswer } from './tools.ts';
import { createToolServer, MCP_PATH, type ToolSource } from './protocol.ts';

export { MCP_PATH };

/** The table's tools, each call answered by the row's route in this process with the caller's token. */
export function tableToolSource(app: FastifyInstance, services: Services, endpoints: readonly Endpoint[], request: FastifyRequest, calls: CallsInFlight): ToolSource {
  const tools = async (): Promise<TableTool[]> => buildTools(endpoints, await services.prices.current());
  return {
    // A row this configuration cannot serve (its upstream's credentials unset) is left out of the
    // list, so agents do not spend turns on it; called anyway, it answers the API's 503.
    list: async () => (await tools()).filter((entry) => entry.endpoint.available?.(services) ?? true).map((entry) => entry.tool),
    async call(name, args, signal) {
      const entry = (await tools()).find((candidate) => candidate.tool.name === name);
      if (!entry) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
      return resultOf(args, await callRoute(app, request, entry.endpoint, args, signal, calls));
    },
  };
}

/**
 * The calls in flight, by the id their injected request carries: when the MCP client goes away
 * (or cancels), the route's reply is hung up as a client closing its connection would, so the
 * pipeline stops the work and charges nothing.
 */
const CALL_HEADER = 'x-gleaner-mcp-call';
type CallsInFlight = Map<string, AbortSignal>;

/** Headers of the MCP request the route should see too: who calls, and how links to it are written. */
const FORWARDED_HEADERS = ['authorization', 'host', 'user-agent', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto'] as const;

async function callRoute(app: FastifyInstance, request: FastifyRequest, endpoint: Endpoint, args: Record<string, unknown>, signal: AbortSignal, callsInFlight: CallsInFlight): Promise<ToolAnswer> {
  const target = requestOf(endpoint, args);
  const headers: Record<string, string> = { accept: 'application/json' };
  for (const name of FORWARDED_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  if (target.body) headers['content-type'] = 'application/json';
  const callId = randomUUID();
  headers[CALL_HEADER] = callId;
  callsInFlight.set(callId, signal);
  let response: Awaited<ReturnType<FastifyInstance['inject']>>;
  try {
    response = await app.inject({
      method: target.method,
      url: target.url,
      headers,
      ...(target.body ? { payload: JSON.stringify(target.body) } : {}),
      remoteAddress: request.ip,
    });
  } catch (error) {
    // Hung up because the MCP client went away: nobody is left to read the answer.
    if (signal.aborted) throw new McpError(ErrorCode.RequestTimeout, 'The call was cancelled.');
    throw error;
  } finally {
    callsInFlight.delete(callId);
  }
  let body: unknown = response.body;
  try {
    body = response.body ? JSON.parse(response.body) : undefined;
  } catch {
    // Not JSON: the text is the answer.
  }
  const requestId = response.headers['x-request-id'];
  return { status: response.statusCode, body, requestId: typeof requestId === 'string' ? requestId : undefined };
}

/** JSON-RPC's answer to a body that is not JSON. */
const PARSE_ERROR = JSON.stringify({ jsonrpc: '2.0', error: { code: ErrorCode.ParseError, message: 'Parse error: the body is not valid JSON.' }, id: null });

export interface McpRouteOptions {
  endpoints: readonly Endpoint[];
  version: string;
  /** The parsed body of a request whose body is not valid JSON (the server's marker). */
  malformedBody: unknown;
}

/**
 * `POST /mcp`. A missing, wrong or revoked token is refused before any MCP message is read, as
 * every API route refuses it (401 `{"message":"Unauthenticated."}`). GET and DELETE (the
 * transport's server-to-client stream and session end) need sessions this stateless server does
 * not keep: the server answers them 405 with `Allow: POST`, which the transport expects.
 */
export function registerMcpRoute(app: FastifyInstance, services: Services, options: McpRouteOptions): void {
  const callsInFlight: CallsInFlight = new Map();
  app.addHook('onRequest', async (request, reply) => {
    const callId = request.headers[CALL_HEADER];
    const signal = typeof callId === 'string' ? callsInFlight.get(callId) : undefined;
    if (!signal) return;
    const hangUp = () => reply.raw.destroy();
    if (signal.aborted) return hangUp();
    signal.addEventListener('abort', hangUp, { once: true });
    reply.raw.once('close', () => signal.removeEventListener('abort', hangUp));
  });
  app.post(MCP_PATH, async (request, reply) => {
    const token = bearerToken(request);
    if (!token || !(await services.accounts.authenticate(token))) throw httpErrors.unauthenticated();
    if (request.body === options.malformedBody) {
      return reply.code(400).header('content-type', 'application/json').send(PARSE_ERROR);
    }
    const server = createToolServer(tableToolSource(app, services, options.endpoints, request, callsInFlight), options.version);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.setHeader('x-request-id', request.id);
    reply.raw.once('close', () => {
      void transport.close().catch(() => {});
      void server.close().catch(() => {});
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (error) {
      request.log.error({ err: error, requestId: request.id }, 'the MCP request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json', 'x-request-id': request.id });
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: ErrorCode.InternalError, message: 'Internal error.' }, id: null }));
      }
    }
  });
}
