/**
 * Turning what goes wrong inside the browser into the outbound client's `OutboundError` codes, so
 * callers treat a rendered fetch and a plain fetch alike.
 */
import { runUrlCheck } from '../outbound/url-policy.ts';
import { OutboundError, type OutboundErrorCode } from '../outbound/types.ts';
import type { GuardProxy } from './guard-proxy.ts';

/** Chromium network errors (net::ERR_*) that have a more precise code than `network`. */
const NET_ERROR_CODES: Record<string, OutboundErrorCode> = {
  ERR_TIMED_OUT: 'timeout',
  ERR_CONNECTION_TIMED_OUT: 'timeout',
  ERR_TOO_MANY_REDIRECTS: 'too_many_redirects',
  ERR_UNSAFE_REDIRECT: 'invalid_url',
  ERR_INVALID_REDIRECT: 'invalid_url',
  ERR_INVALID_URL: 'invalid_url',
  ERR_UNKNOWN_URL_SCHEME: 'invalid_url',
  ERR_DISALLOWED_URL_SCHEME: 'invalid_url',
};

/** The outbound client's per-hop check, so a refused URL fails alike in both. */
export const invokeCheckUrl = runUrlCheck;

/** Runs the caller's host rule on a URL's host; whatever it throws becomes `blocked_host`. */
export function invokeCheckHost(checkHost: ((hostname: string) => void) | undefined, url: URL): void {
  if (checkHost === undefined) return;
  invokeCheckUrl(() => checkHost(url.hostname), url);
}

/** The guard's verdict on the host of `href`, when the guard refused or failed to reach it. */
export function guardFailure(guard: GuardProxy, href: string): OutboundError | undefined {
  let url: URL;
  try {
    url = new URL(href);
  } catch {
    return undefined;
  }
  const port = Number(url.port || (url.protocol === 'https:' || url.protocol === 'wss:' ? 443 : 80));
  const entry = guard.entryFor(url.hostname, port);
  return entry === undefined ? undefined : new OutboundError(entry.code, entry.message, href);
}

/**
 * Maps an error raised while the main document loaded. `mainUrl` is the hop that was being
 * loaded, so a redirect to a refused host is reported against that host.
 */
export function browserFailure(error: unknown, requestUrl: string, mainUrl: string, guard: GuardProxy): OutboundError {
  if (error instanceof OutboundError) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof Error && error.name === 'TimeoutError') {
    return new OutboundError('timeout', firstLine(message), mainUrl, { cause: error });
  }
  const netError = /net::(ERR_[A-Z0-9_]+)/.exec(message)?.[1];
  if (netError !== undefined) {
    const guarded = guardFailure(guard, mainUrl);
    if (guarded !== undefined) return guarded;
    return new OutboundError(NET_ERROR_CODES[netError] ?? 'network', `Chromium failed to load the page: ${netError}`, mainUrl, { cause: error });
  }
  if (/has been closed|browser has disconnected|Target closed/i.test(message)) {
    return new OutboundError('network', 'The browser closed while rendering the page', requestUrl, { cause: error });
  }
  return new OutboundError('network', firstLine(message), requestUrl, { cause: error });
}

function firstLine(text: string): string {
  return text.split('\n')[0];
}
