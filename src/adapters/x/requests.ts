/**
 * Requests to X, built as its web client sends them (paths are relative, so a base URL with a path
 * prefix, such as a forwarding proxy's, keeps it): GraphQL GETs under
 * `/i/api/graphql/<queryId>/<Operation>` with `variables`, `features` and `fieldToggles` as JSON
 * query parameters, the public bearer token, and either a guest token or a logged-in session
 * (cookies `auth_token` and `ct0`, with `ct0` echoed in `x-csrf-token`).
 */
import { buildUrl, cookieHeader } from '../kit/request.ts';
import type { Adapter, ParseOutcome, UpstreamRequest, UpstreamResponse } from '../kit/types.ts';
import type { XConfig } from './config.ts';
import type { XOperation } from './types.ts';

/** A logged-in session from X_ACCOUNTS. */
export interface XSession {
  authToken: string;
  ct0: string;
}

function baseHeaders(config: XConfig): Record<string, string> {
  return {
    authorization: `Bearer ${config.bearerToken}`,
    'user-agent': config.userAgent,
    accept: '*/*',
    'accept-language': 'en-US,en;q=0.9',
    'content-type': 'application/json',
    'x-twitter-active-user': 'yes',
    'x-twitter-client-language': 'en',
  };
}

/** A GraphQL GET without its credential: the client's interceptors add a guest token or a session. */
export function graphqlRequest(config: XConfig, baseUrl: string, operation: XOperation, variables: Record<string, unknown>): UpstreamRequest {
  const op = config.operations[operation];
  const url = buildUrl(baseUrl, `i/api/graphql/${op.queryId}/${operation}`, {
    variables: JSON.stringify({ ...op.variables, ...variables }),
    features: JSON.stringify(op.features),
    fieldToggles: Object.keys(op.fieldToggles).length > 0 ? JSON.stringify(op.fieldToggles) : undefined,
  });
  return { url, method: 'GET', headers: baseHeaders(config) };
}

/** The request, sent with a guest token. */
export function withGuestToken(request: UpstreamRequest, guestToken: string): UpstreamRequest {
  return { ...request, headers: { ...request.headers, 'x-guest-token': guestToken } };
}

/** The request, sent as a logged-in session (`ct0` echoed in `x-csrf-token`). */
export function withSession(request: UpstreamRequest, session: XSession): UpstreamRequest {
  return {
    ...request,
    headers: {
      ...request.headers,
      'x-twitter-auth-type': 'OAuth2Session',
      'x-csrf-token': session.ct0,
      cookie: cookieHeader({ auth_token: session.authToken, ct0: session.ct0 }),
    },
  };
}

/** One GraphQL operation as an adapter; `parse` reads its `data`. */
export function graphqlAdapter<T>(config: XConfig, operation: XOperation, parse: (response: UpstreamResponse) => ParseOutcome<T>): Adapter<{ variables: Record<string, unknown> }, T> {
  return {
    upstream: 'x',
    operation,
    buildRequest: ({ variables }, { baseUrl }) => graphqlRequest(config, baseUrl, operation, variables),
    parse: (response) => parse(response),
  };
}

/** POST /1.1/guest/activate.json on the API host, with the public bearer token. */
export function guestActivationRequest(config: XConfig, apiBaseUrl: string): UpstreamRequest {
  return { url: buildUrl(apiBaseUrl, '1.1/guest/activate.json', {}), method: 'POST', headers: baseHeaders(config), body: '' };
}

/** POST /1.1/guest/activate.json as an adapter: the token, or `blocked` when X gives none. */
export function guestActivationAdapter(config: XConfig): Adapter<Record<string, never>, string> {
  return {
    upstream: 'x',
    operation: 'guest/activate',
    // Activating twice only wastes a token.
    idempotent: true,
    buildRequest: (_params, { baseUrl }) => guestActivationRequest(config, baseUrl),
    parse: (response) => {
      const token = readGuestToken(response.status, response.body);
      return token ? { kind: 'ok', value: token } : { kind: 'blocked', reason: `guest token activation answered ${response.status}` };
    },
  };
}

/** The guest token out of activate.json's answer, or null. */
export function readGuestToken(status: number, body: string): string | null {
  if (status !== 200) return null;
  try {
    const token = (JSON.parse(body) as { guest_token?: unknown }).guest_token;
    return typeof token === 'string' && /^\d+$/.test(token) ? token : null;
  } catch {
    return null;
  }
}

/** X_ACCOUNTS: `auth_token:ct0` pairs, comma-separated. Throws naming the faulty pair by position. */
export function parseSessions(pairs: readonly string[]): XSession[] {
  return pairs.map((pair, index) => {
    const [authToken, ct0, ...rest] = pair.split(':').map((part) => part.trim());
    if (!authToken || !ct0 || rest.length > 0 || !/^[A-Za-z0-9]+$/.test(authToken) || !/^[A-Za-z0-9]+$/.test(ct0)) {
      throw new Error(`X_ACCOUNTS entry ${index + 1} must be auth_token:ct0 (two alphanumeric cookie values).`);
    }
    return { authToken, ct0 };
  });
}
