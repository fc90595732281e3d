/**
 * Internal failure signals raised deep inside the connection and body machinery, and the single
 * place that turns any failure into the public `OutboundError`.
 */
import { OutboundError } from './types.ts';

/**
 * Raised by the connect-time guard: the host is, or resolved to, a non-public address, or one of
 * this process's own listeners (`ownListener`).
 */
export class BlockedAddressError extends Error {
  readonly code = 'ERR_OUTBOUND_BLOCKED_ADDRESS';
  readonly host: string;
  readonly address: string;
  constructor(host: string, address: string, message?: string) {
    super(
      message ?? (host === address
        ? `${address} is not a public address`
        : address === 'a private-use name'
          ? `${host} is a private-use name`
          : `${host} resolves to the non-public address ${address}`),
    );
    this.name = 'BlockedAddressError';
    this.host = host;
    this.address = address;
  }

  static ownListener(host: string, address: string, port: number): BlockedAddressError {
    return new BlockedAddressError(host, address, `${host}:${port} is this service's own listener`);
  }
}

/** Raised while streaming once the decoded body passes the caller's cap. */
export class BodyTooLargeError extends Error {
  readonly code = 'ERR_OUTBOUND_TOO_LARGE';
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`The response body exceeds ${maxBytes} bytes`);
    this.name = 'BodyTooLargeError';
    this.maxBytes = maxBytes;
  }
}

/** Which of the request's own deadlines had fired when the failure surfaced. */
export interface AbortState {
  timedOut: boolean;
  callerAborted: boolean;
  timeoutMs: number;
}

const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

/** Maps anything thrown while fetching `url` to an `OutboundError`; the most specific cause wins. */
export function toOutboundError(error: unknown, url: string, state: AbortState): OutboundError {
  if (error instanceof OutboundError) return error;

  const blocked = findInChain(error, (e) => e instanceof BlockedAddressError);
  if (blocked instanceof BlockedAddressError) {
    return new OutboundError('blocked_address', blocked.message, url, { cause: error });
  }
  const tooLarge = findInChain(error, (e) => e instanceof BodyTooLargeError);
  if (tooLarge instanceof BodyTooLargeError) {
    return new OutboundError('too_large', tooLarge.message, url, { cause: error });
  }
  if (state.timedOut) {
    return new OutboundError('timeout', `The request did not complete within ${state.timeoutMs} ms`, url, { cause: error });
  }
  if (state.callerAborted) {
    return new OutboundError('timeout', 'The request was aborted by the caller', url, { cause: error });
  }
  const timeout = findInChain(error, (e) => TIMEOUT_CODES.has(errorCode(e)));
  if (timeout) {
    return new OutboundError('timeout', messageOf(timeout), url, { cause: error });
  }
  return new OutboundError('network', messageOf(error), url, { cause: error });
}

function findInChain(error: unknown, match: (e: unknown) => boolean): unknown {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0) {
    const current = pending.shift();
    if (current === undefined || current === null || seen.has(current)) continue;
    seen.add(current);
    if (match(current)) return current;
    if (current instanceof AggregateError) pending.push(...current.errors);
    if (current instanceof Error) pending.push(current.cause);
  }
  return undefined;
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

function messageOf(error: unknown): string {
  if (error instanceof Error && error.message !== '') {
    const code = errorCode(error);
    return code !== '' && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
  }
  return String(error);
}
