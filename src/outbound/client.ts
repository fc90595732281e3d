/**
 * The single outbound HTTP client of the service (contract in ./types.ts). Guarantees:
 * only http(s); every connected address is public unless its host is exempted by name; redirects
 * are re-checked hop by hop; decoded body size and total time are capped.
 */
import { raceAbort } from '../core/abort.ts';
import { Agent, request, type Dispatcher } from 'undici';
import { ACCEPT_ENCODING, readBody } from './body.ts';
import { BlockedAddressError, toOutboundError, type AbortState } from './errors.ts';
import { createGuardedConnector } from './guarded-connector.ts';
import { assertProxyCountry, DEFAULT_PROXY_COUNTRY_USERNAME, ProxyPool } from './proxy.ts';
import { DEFAULT_MAX_REDIRECTS, isRedirectStatus, nextHop, type Hop } from './redirect.ts';
import { ownListeners as processListeners, type OwnListeners } from './own-listeners.ts';
import { checkedAddresses, defaultLookup, type DestinationRules, type LookupFunction } from './resolve.ts';
import { OutboundError, type OutboundClient, type OutboundRequest, type OutboundResponse } from './types.ts';
import { bareHostname, HostExemptions, parseHttpUrl, portOf, runUrlCheck } from './url-policy.ts';

export interface OutboundClientOptions {
  /** Hosts exempted from the public-address rule, on every port or as `host:port` (OUTBOUND_ALLOW_HOSTS). */
  allowHosts: string[];
  /** Egress proxy, e.g. http://user:pass@proxy:3128 (PROXY_URL). Every request goes through it. */
  proxyUrl?: string;
  /** Username template for `proxyCountry`; `{username}` and `{country}` are replaced. */
  proxyCountryUsername?: string;
  /** Whole-request deadline (connect + headers + body) when the request sets none. */
  timeoutMs: number;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  /** Sent when the request sets no User-Agent. */
  userAgent?: string;
  /** Replaces `dns.lookup` (tests map names to chosen addresses). Must honour `{ all: true }`. */
  lookup?: LookupFunction;
  /** The listeners never connected to; default: this process's, which the HTTP layer records. */
  ownListeners?: OwnListeners;
}

export interface ClosableOutboundClient extends OutboundClient {
  /** Closes pooled connections; pending requests finish first. */
  close(): Promise<void>;
}

export function createOutboundClient(options: OutboundClientOptions): ClosableOutboundClient {
  return new GuardedOutboundClient(options);
}

class GuardedOutboundClient implements ClosableOutboundClient {
  readonly #options: OutboundClientOptions;
  readonly #lookup: LookupFunction;
  readonly #rules: DestinationRules;
  readonly #direct: Agent | undefined;
  readonly #proxies: ProxyPool | undefined;

  constructor(options: OutboundClientOptions) {
    this.#options = options;
    this.#lookup = options.lookup ?? defaultLookup;
    this.#rules = { exemptions: new HostExemptions(options.allowHosts), ownListeners: options.ownListeners ?? processListeners };

    if (options.proxyUrl !== undefined && options.proxyUrl !== '') {
      this.#proxies = new ProxyPool({
        proxyUrl: options.proxyUrl,
        usernameTemplate: options.proxyCountryUsername ?? DEFAULT_PROXY_COUNTRY_USERNAME,
        connectTimeoutMs: options.connectTimeoutMs,
        headersTimeoutMs: options.headersTimeoutMs,
        bodyTimeoutMs: options.timeoutMs,
        lookup: this.#lookup,
        rules: this.#rules,
      });
    } else {
      this.#direct = new Agent({
        connect: createGuardedConnector({
          lookup: this.#lookup,
          rules: this.#rules,
          connectTimeoutMs: options.connectTimeoutMs,
        }),
        headersTimeout: options.headersTimeoutMs,
        bodyTimeout: options.timeoutMs,
      });
    }
  }

  async fetch(url: string, outbound: OutboundRequest): Promise<OutboundResponse> {
    if (outbound.proxyCountry !== undefined) assertProxyCountry(outbound.proxyCountry);
    const deadline = new Deadline(outbound.timeoutMs ?? this.#options.timeoutMs, outbound.signal);
    const maxRedirects = outbound.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
    const hops: string[] = [];
    let currentUrl = url;
    try {
      let hop: Hop = {
        url: parseHttpUrl(url),
        method: outbound.method ?? 'GET',
        headers: this.#initialHeaders(outbound.headers),
        body: outbound.body,
      };
      for (;;) {
        currentUrl = hop.url.href;
        runUrlCheck(outbound.checkUrl, hop.url);
        hops.push(hop.url.href);

        const response = await this.#send(hop, outbound.proxyCountry, deadline);
        const location = firstValue(response.headers.location);
        if (maxRedirects > 0 && isRedirectStatus(response.statusCode) && location !== undefined) {
          await discard(response.body);
          if (hops.length > maxRedirects) {
            throw new OutboundError('too_many_redirects', `More than ${maxRedirects} redirects`, currentUrl);
          }
          hop = nextHop(hop, response.statusCode, location);
          continue;
        }

        const { body, decoded } = await readResponseBody(hop.method, response, outbound.maxBytes);
        return {
          url: hop.url.href,
          status: response.statusCode,
          headers: flattenHeaders(response.headers, decoded),
          body,
          hops,
        };
      }
    } catch (error) {
      throw toOutboundError(error, currentUrl, deadline.state);
    } finally {
      deadline.clear();
    }
  }

  async isPublicUrl(url: string): Promise<boolean> {
    // A resolver that never answers must not hold validation up longer than a connect would.
    const deadline = new Deadline(this.#options.connectTimeoutMs, undefined);
    let parsed: URL;
    try {
      parsed = parseHttpUrl(url);
    } catch {
      deadline.clear();
      return false;
    }
    try {
      await checkedAddresses(bareHostname(parsed.hostname), portOf(parsed), this.#lookup, this.#rules, deadline.signal);
      return true;
    } catch (error) {
      // Only a known non-public address is refused here. A name that does not resolve (or not in
      // time) is not known to be private: the download then fails on its own, and the
      // connect-time check still guards whatever it finally resolves to.
      return !(error instanceof BlockedAddressError);
    } finally {
      deadline.clear();
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.#direct?.close(), this.#proxies?.close()]);
  }

  async #send(hop: Hop, proxyCountry: string | undefined, deadline: Deadline): Promise<Dispatcher.ResponseData> {
    // Both ways out check the address when connecting (./guarded-connector.ts).
    const dispatcher: Dispatcher = this.#proxies !== undefined ? this.#proxies.agentFor(proxyCountry) : (this.#direct as Agent);
    const pending = request(hop.url, {
      dispatcher,
      method: hop.method,
      headers: hop.headers,
      body: hop.body,
      signal: deadline.signal,
      headersTimeout: this.#options.headersTimeoutMs,
      bodyTimeout: deadline.timeoutMs,
    });
    // undici applies an abort only once a connection exists, so a request still connecting
    // (e.g. stuck in DNS) would outlive its deadline; settle as soon as the signal fires.
    return raceAbort(pending, deadline.signal, (late) => late.body.destroy());
  }

  #initialHeaders(headers: Record<string, string> | undefined): Record<string, string> {
    const result: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers ?? {})) result[name.toLowerCase()] = value;
    result['accept-encoding'] ??= ACCEPT_ENCODING;
    if (this.#options.userAgent !== undefined) result['user-agent'] ??= this.#options.userAgent;
    return result;
  }
}

/** The whole-request deadline merged with the caller's signal, remembering which one fired. */
class Deadline {
  readonly signal: AbortSignal;
  readonly state: AbortState;
  readonly timeoutMs: number;
  readonly #timer: NodeJS.Timeout;
  readonly #callerSignal: AbortSignal | undefined;
  readonly #onCallerAbort: () => void;

  constructor(timeoutMs: number, callerSignal: AbortSignal | undefined) {
    const controller = new AbortController();
    this.signal = controller.signal;
    this.timeoutMs = timeoutMs;
    this.state = { timedOut: false, callerAborted: false, timeoutMs };
    this.#timer = setTimeout(() => {
      this.state.timedOut = true;
      controller.abort(new DOMException(`The request did not complete within ${timeoutMs} ms`, 'TimeoutError'));
    }, timeoutMs);
    this.#callerSignal = callerSignal;
    this.#onCallerAbort = () => {
      this.state.callerAborted = true;
      controller.abort(callerSignal?.reason);
    };
    if (callerSignal?.aborted) this.#onCallerAbort();
    else callerSignal?.addEventListener('abort', this.#onCallerAbort, { once: true });
  }

  clear(): void {
    clearTimeout(this.#timer);
    this.#callerSignal?.removeEventListener('abort', this.#onCallerAbort);
  }
}

/**
 * The decoded, capped body. A HEAD answer or a 204/304 has no body by definition, so its headers
 * (Content-Length of the resource, Content-Encoding) are left as the server sent them.
 */
async function readResponseBody(
  method: Hop['method'],
  response: Dispatcher.ResponseData,
  maxBytes: number,
): Promise<{ body: Buffer; decoded: boolean }> {
  if (method === 'HEAD' || response.statusCode === 204 || response.statusCode === 304) {
    await discard(response.body);
    return { body: Buffer.alloc(0), decoded: false };
  }
  const contentEncoding = firstValue(response.headers['content-encoding']);
  const declaredLength = Number(firstValue(response.headers['content-length']) ?? Number.NaN);
  return readBody(response.body, contentEncoding, maxBytes, declaredLength);
}

/** Drops a redirect's body, keeping the connection reusable when the body is small. */
async function discard(body: Dispatcher.ResponseData['body']): Promise<void> {
  try {
    await body.dump({ limit: 64 * 1024 });
  } catch {
    // The connection is closed instead; nothing to report for a body nobody reads.
  }
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Response headers as single strings; codings undone by the client are no longer announced. */
function flattenHeaders(headers: Dispatcher.ResponseData['headers'], decoded: boolean): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    if (decoded && (name === 'content-encoding' || name === 'content-length')) continue;
    result[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return result;
}
