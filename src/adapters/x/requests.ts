/**
 * Requests to X, built as its web client sends them (paths are relative, so a base URL with a path
 * prefix, such as a forwarding proxy's, keeps it): GraphQL GETs under
 * `/i/api/graphql/<queryId>/<Operation>` with `variables`, `features` and `fieldToggles` as JSON
 * query parameters, the public bearer token, and either a guest token or a logged-in session
 * (cookies `auth_token` and `ct0`, with `ct0` echoed in `x-csrf-token`).
 */
import { buildUrl, cookieHeader } from '../kit/request.ts';
import type { UpstreamRequest } from '../kit/types.ts';
import type { XConfig } from './config.ts';
import type { XOperation } from './types.ts';

/** A logged-in session from X_ACCOUNTS. */
export interface XSession {
  authToken: string;
  ct0: string;
}

export type XAuth = { kind: 'guest'; guestToken: string } | { kind: 'session'; session: XSession };

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

export function graphqlRequest(config: XConfig, baseUrl: string, operation: XOperation, variables: Record<string, unknown>, auth: XAuth): UpstreamRequest {
  const op = config.operations[operation];
  const url = buildUrl(baseUrl, `i/api/graphql/${op.queryId}/${operation}`, {
    variables: JSON.stringify({ ...op.variables, ...variables }),
    features: JSON.stringify(op.features),
    fieldToggles: Object.keys(op.fieldToggles).length > 0 ? JSON.stringify(op.fieldToggles) : undefined,
  });
  const headers = baseHeaders(config);
  if (auth.kind === 'guest') {
    headers['x-guest-token'] = auth.guestToken;
  } else {
    headers['x-twitter-auth-type'] = 'OAuth2Session';
    headers['x-csrf-token'] = auth.session.ct0;
    headers.cookie = cookieHeader({ auth_token: auth.session.authToken, ct0: auth.session.ct0 });
  }
  return { url, method: 'GET', headers };
}

/** POST /1.1/guest/activate.json on the API host, with the public bearer token. */
export function guestActivationRequest(config: XConfig, apiBaseUrl: string): UpstreamRequest {
  return { url: buildUrl(apiBaseUrl, '1.1/guest/activate.json', {}), method: 'POST', headers: baseHeaders(config), body: '' };
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
