/**
 * JSON-RPC as pure adapter pairs: one call, or a batch of calls in one HTTP request. Reads only,
 * so every request is safe to send twice (the runtime retries those that failed on the network).
 *
 * Verdicts, for the runtime and the breaker:
 * - HTTP 429, 401, 403, and JSON-RPC errors that say "rate limit", "too many requests",
 *   "exceeded" or "capacity": `blocked` (the upstream refuses us; the breaker backs off);
 * - a method the node does not have (-32601, Hardhat's -32004, "not supported", "does not exist"):
 *   `not_found`, so the client can fall back (eth_getBlockReceipts, batches);
 * - a log query too big for the provider ("query returned more than 10000 results"): `changed`,
 *   never `blocked` (it is no refusal; the client splits the range);
 * - any other JSON-RPC error or unreadable answer: `changed`, with the code and message.
 */
import type { Adapter, ParseOutcome, UpstreamResponse } from '../../kit/types.ts';
import { jsonOrUndefined } from '../../kit/decode.ts';
import { uint256FromHex } from '../../kit/limits.ts';

export interface RpcRequest {
  method: string;
  params: unknown[];
}

interface RpcReply {
  id?: unknown;
  result?: unknown;
  error?: { code?: unknown; message?: unknown };
}

const RATE_LIMITED = /rate.?limit|too many requests|exceeded|capacity|throttl/i;
/** A log query the provider finds too big (Infura's -32005 "query returned more than 10000 results", range caps): not a refusal; the client splits it. */
export const TOO_LARGE = /more than \d+ results|returned more than|block range|range (is )?too (large|wide|big)|too many (results|logs)|limit of \d+ blocks|response (size|is too big)|exceeds? (the )?max(imum)? (block )?range/i;
const UNSUPPORTED = /not supported|does not exist|not available|unsupported|method not found|not found: method/i;

function httpVerdict(response: UpstreamResponse): ParseOutcome<never> | undefined {
  if (response.status === 429) return { kind: 'blocked', reason: 'rate limited (HTTP 429)' };
  if (response.status === 401 || response.status === 403) return { kind: 'blocked', reason: `refused (HTTP ${response.status}): check the endpoint's key` };
  return undefined;
}

/** What an error reply means: blocked (rate limit), not_found (no such method) or changed. */
export function rpcErrorOutcome(error: NonNullable<RpcReply['error']>): ParseOutcome<never> {
  const code = typeof error.code === 'number' ? error.code : undefined;
  const message = typeof error.message === 'string' ? error.message.slice(0, 200) : 'no message';
  if (TOO_LARGE.test(message)) return { kind: 'changed', reason: `too large: ${message}` };
  if (code === 429 || code === -32005 || RATE_LIMITED.test(message)) return { kind: 'blocked', reason: `rate limited: ${message}` };
  if (code === -32601 || code === -32004 || UNSUPPORTED.test(message)) return { kind: 'not_found', reason: `method not supported: ${message}` };
  return { kind: 'changed', reason: `JSON-RPC error ${code ?? '?'}: ${message}` };
}

function isReply(value: unknown): value is RpcReply {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && ('result' in value || 'error' in value);
}

const HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

/** One method as an adapter; `read` turns the result into the value (and throws on a shape it cannot read). */
export function rpcMethod<P, T>(upstream: string, method: string, params: (input: P) => unknown[], read: (result: unknown, input: P) => T): Adapter<P, T> {
  return {
    upstream,
    operation: method,
    idempotent: true,
    buildRequest: (input, { baseUrl }) => ({
      url: baseUrl,
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: params(input) }),
    }),
    parse(response, input) {
      const refused = httpVerdict(response);
      if (refused) return refused;
      const body = jsonOrUndefined(response.body);
      if (!isReply(body)) return { kind: 'changed', reason: `not a JSON-RPC answer (HTTP ${response.status})` };
      if (body.error) return rpcErrorOutcome(body.error);
      return { kind: 'ok', value: read(body.result, input) };
    },
  };
}

/** One item of a batch answer kept with its error (calls that may revert: a contract that is not a token). */
export type RpcItem = { ok: true; result: unknown } | { ok: false; code?: number; message: string };

/**
 * A batch: one item per request, in the requests' order. A node that refuses batches (an error
 * object or an HTTP error instead of an array) is `not_found`, so the client sends the calls one by
 * one. With `keepErrors`, an item's JSON-RPC error is kept in its item (rate limits still block);
 * without, one failed item fails the batch with that item's verdict.
 */
export function rpcBatch(upstream: string, operation: string, keepErrors = false): Adapter<RpcRequest[], RpcItem[]> {
  return {
    upstream,
    operation,
    idempotent: true,
    buildRequest: (calls, { baseUrl }) => ({
      url: baseUrl,
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify(calls.map((call, index) => ({ jsonrpc: '2.0', id: index, method: call.method, params: call.params }))),
    }),
    parse(response, calls) {
      const refused = httpVerdict(response);
      if (refused) return refused;
      const body = jsonOrUndefined(response.body);
      if (!Array.isArray(body)) {
        if (isReply(body) && body.error) {
          const outcome = rpcErrorOutcome(body.error);
          // A single error for the whole batch is the node refusing batches, unless it is a rate limit.
          return outcome.kind === 'blocked' ? outcome : { kind: 'not_found', reason: 'batches not supported' };
        }
        if (response.status >= 400) return { kind: 'not_found', reason: `batches not supported (HTTP ${response.status})` };
        return { kind: 'changed', reason: `not a JSON-RPC batch answer (HTTP ${response.status})` };
      }
      const items: RpcItem[] = new Array(calls.length);
      let answered = 0;
      for (const reply of body) {
        if (!isReply(reply) || typeof reply.id !== 'number' || reply.id < 0 || reply.id >= calls.length || items[reply.id] !== undefined) {
          return { kind: 'changed', reason: 'a batch answer without a known id' };
        }
        answered += 1;
        if (reply.error) {
          const outcome = rpcErrorOutcome(reply.error);
          if (outcome.kind === 'blocked') return outcome;
          if (!keepErrors) return { kind: 'changed', reason: `${calls[reply.id]!.method}: ${'reason' in outcome ? outcome.reason : 'error'}` };
          items[reply.id] = { ok: false, code: typeof reply.error.code === 'number' ? reply.error.code : undefined, message: String(reply.error.message ?? '') };
        } else {
          items[reply.id] = { ok: true, result: reply.result };
        }
      }
      if (answered !== calls.length) return { kind: 'changed', reason: `a batch of ${calls.length} answered ${answered}` };
      return { kind: 'ok', value: items };
    },
  };
}

/** One call whose JSON-RPC error is an answer, not a failure (an `eth_call` that may revert); rate limits still block. */
export function rpcTolerant(upstream: string, method: string): Adapter<unknown[], RpcItem> {
  return {
    upstream,
    operation: method,
    idempotent: true,
    buildRequest: (params, { baseUrl }) => ({ url: baseUrl, method: 'POST', headers: HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) }),
    parse(response) {
      const refused = httpVerdict(response);
      if (refused) return refused;
      const body = jsonOrUndefined(response.body);
      if (!isReply(body)) return { kind: 'changed', reason: `not a JSON-RPC answer (HTTP ${response.status})` };
      if (body.error) {
        const outcome = rpcErrorOutcome(body.error);
        if (outcome.kind !== 'changed') return outcome;
        return { kind: 'ok', value: { ok: false, code: typeof body.error.code === 'number' ? body.error.code : undefined, message: String(body.error.message ?? '') } };
      }
      return { kind: 'ok', value: { ok: true, result: body.result } };
    },
  };
}

// ---- reading results -------------------------------------------------------------------------

/** A hex quantity of at most 256 bits (its length checked before it is read): above is a layout the parser refuses, a `changed` verdict. */
export function quantity(value: unknown, what: string): bigint {
  return uint256FromHex(value, what);
}

export function smallQuantity(value: unknown, what: string): number {
  const big = quantity(value, what);
  if (big > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`${what} is too large`);
  return Number(big);
}

export function hexData(value: unknown, what: string): `0x${string}` {
  if (typeof value !== 'string' || !/^0x[0-9a-fA-F]*$/.test(value)) throw new Error(`${what} is not hex data`);
  return value as `0x${string}`;
}

export function toHex(value: number | bigint): string {
  return `0x${value.toString(16)}`;
}
