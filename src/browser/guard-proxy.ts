/**
 * The address guard in front of the headless browser: a forward proxy on a random loopback port
 * that Chromium is told to use for every request (`--proxy-server`). HTTPS and WebSockets arrive
 * as CONNECT tunnels, plain HTTP as absolute-URI requests. Every target is reached through the
 * outbound client's own connectors (src/outbound/guarded-connector.ts), under the outbound
 * client's rules: each address public unless OUTBOUND_ALLOW_HOSTS exempts the host on that port,
 * never a listener of this process (the API, metrics, or a guard itself). Directly, the socket is
 * opened to the address that was checked; through PROXY_URL, the proxy is asked for a tunnel to
 * the checked address (`CONNECT ip:port`), never the name. Either way no second look-up can
 * rebind the name between check and connect.
 *
 * The bind is the access control: only local processes can reach the port, and the proxy grants
 * nothing a local process could not do on its own (it only reaches public or exempted hosts).
 */
import http from 'node:http';
import type net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { buildConnector } from 'undici';
import { BlockedAddressError } from '../outbound/errors.ts';
import { createGuardedConnector, createProxyTunnelConnector } from '../outbound/guarded-connector.ts';
import { ownListeners as processListeners, type OwnListeners } from '../outbound/own-listeners.ts';
import { defaultLookup, type DestinationRules, type LookupFunction } from '../outbound/resolve.ts';
import { bareHostname, HostExemptions } from '../outbound/url-policy.ts';

/** Sent with every refusal; lets the page renderer tell the guard's 403 from an origin's. */
export const GUARD_REFUSAL_HEADER = 'x-guard-refused';

export interface GuardProxyOptions {
  /**
   * Hosts exempted from the public-address rule (OUTBOUND_ALLOW_HOSTS), as the outbound client
   * reads them: `host` on every port, `host:port` on that port only.
   */
  allowHosts?: readonly string[];
  /** The process's own listeners, never connected to. Default: the process registry. */
  ownListeners?: OwnListeners;
  /** Replaces `dns.lookup`; called with `{ all: true }`. */
  lookup?: LookupFunction;
  /** Refuse every target: for the browser-wide proxy that no page traffic should ever use. */
  refuseAll?: boolean;
  /**
   * The caller's rule on host names (the /v1/web blocked domains), run on every target before it
   * is resolved: throwing refuses it (`blocked_host`). Every request of the page comes through
   * here, subresources, `fetch()`, WebSockets and workers included, so no script can get past it.
   */
  checkHost?: (hostname: string) => void;
  /** Per-address TCP connect deadline. Default 10 s. */
  connectTimeoutMs?: number;
  /** Cap on bytes relayed from targets to the browser; past it every connection is cut. */
  transferLimitBytes?: number;
  /** Called once when `transferLimitBytes` is passed. */
  onTransferLimit?: () => void;
  /**
   * Send admitted traffic through this proxy (PROXY_URL, credentials in the URL) instead of
   * connecting directly: every target, plain http included, through a `CONNECT` tunnel to the
   * address checked here, the name kept for TLS and `Host` (the browser speaks both itself).
   */
  upstreamProxy?: URL;
}

export type GuardOutcome = 'blocked_address' | 'blocked_host' | 'network' | 'invalid_url';

/** One target the guard refused (`blocked_address`, `blocked_host`, `invalid_url`) or could not reach (`network`). */
export interface GuardLogEntry {
  hostname: string;
  port: number;
  code: GuardOutcome;
  message: string;
}

export interface GuardProxy {
  /** `http://127.0.0.1:<port>`, for `--proxy-server` or a browser context's proxy. */
  readonly url: string;
  readonly port: number;
  /** Refused or failed targets, oldest first (the first `LOG_LIMIT` only). */
  readonly log: readonly GuardLogEntry[];
  /** Targets refused by the address rule or the caller's host rule, counted past the log limit too. */
  readonly refusedCount: number;
  /** Bytes relayed from targets to the browser. */
  readonly bytesIn: number;
  /** The latest log entry about `hostname:port`, if any. */
  entryFor(hostname: string, port: number): GuardLogEntry | undefined;
  /** Stops listening and cuts every open connection. */
  close(): Promise<void>;
}

const LOG_LIMIT = 200;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** Connection-scoped request headers that a proxy must not forward (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

type Admission = { ok: true } | { ok: false; entry: GuardLogEntry };
type Connector = buildConnector.connector & { close?(): Promise<void> };

export async function startGuardProxy(options: GuardProxyOptions = {}): Promise<GuardProxy> {
  const guard = new Guard(options);
  await guard.listen();
  return guard;
}

class Guard implements GuardProxy {
  readonly log: GuardLogEntry[] = [];
  refusedCount = 0;
  bytesIn = 0;
  port = 0;

  readonly #options: GuardProxyOptions;
  readonly #rules: DestinationRules;
  readonly #connector: Connector;
  readonly #server: http.Server;
  #unlisten: (() => void) | undefined;
  readonly #sockets = new Set<Duplex>();
  #limitReached = false;
  #closed = false;

  constructor(options: GuardProxyOptions) {
    this.#options = options;
    this.#rules = { exemptions: new HostExemptions(options.allowHosts ?? []), ownListeners: options.ownListeners ?? processListeners };
    const lookup: LookupFunction = options.lookup ?? defaultLookup;
    const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.#connector =
      options.upstreamProxy !== undefined
        ? createProxyTunnelConnector({ proxyUrl: options.upstreamProxy, lookup, rules: this.#rules, connectTimeoutMs })
        : createGuardedConnector({ lookup, rules: this.#rules, connectTimeoutMs });
    this.#server = http.createServer();
    this.#server.on('connection', (socket: net.Socket) => this.#track(socket));
    this.#server.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      void this.#tunnel(req, socket, head);
    });
    this.#server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      void this.#forward(req, res);
    });
    this.#server.on('clientError', (_error: Error, socket: Duplex) => socket.destroy());
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(0, '127.0.0.1', () => {
        this.#server.off('error', reject);
        this.port = (this.#server.address() as AddressInfo).port;
        // A guard is a listener of this process: no page (and no outbound fetch) may loop into one.
        this.#unlisten = this.#rules.ownListeners.add([{ address: '127.0.0.1', port: this.port }]);
        resolve();
      });
    });
  }

  entryFor(hostname: string, port: number): GuardLogEntry | undefined {
    const host = bareHostname(hostname.toLowerCase());
    return this.log.findLast((entry) => entry.hostname === host && entry.port === port);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unlisten?.();
    const stopped = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    await Promise.all([stopped, this.#connector.close?.()]);
  }

  /** HTTPS, WSS and WS: `CONNECT host:port`, answered 200 and spliced once the target is checked. */
  async #tunnel(req: http.IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    this.#track(client);
    // The browser may reset the socket while the target is being checked: an 'error' with no
    // listener would take the whole process down.
    client.on('error', () => client.destroy());
    const target = parseAuthority(req.url ?? '');
    if (target === undefined) {
      this.#record('', 0, 'invalid_url', `Malformed CONNECT target "${req.url}"`);
      client.end(statusLine(400, 'Bad Request', 'invalid_url'));
      return;
    }
    const admission = this.#admit(target.hostname, target.port);
    if (!admission.ok) {
      client.end(refusalHead(admission.entry));
      return;
    }
    let upstream: net.Socket;
    try {
      upstream = await this.#open(target.hostname, target.port);
    } catch (error) {
      client.end(refusalHead(this.#recordFailure(target.hostname, target.port, error)));
      return;
    }
    if (client.destroyed || this.#closed) {
      upstream.destroy();
      return;
    }
    this.#track(upstream);
    upstream.on('data', (chunk: Buffer) => this.#count(chunk.length));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  }

  /** Plain HTTP: `GET http://host/path`, re-sent from here to the checked address. */
  async #forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      target = new URL('invalid:');
    }
    if (target.protocol !== 'http:' || target.hostname === '') {
      this.#record(target.hostname, 0, 'invalid_url', `Not an absolute http:// request target: "${req.url}"`);
      respondRefusal(res, 400, 'invalid_url', 'Only absolute http:// request targets and CONNECT are proxied');
      return;
    }
    const port = Number(target.port || 80);
    const hostname = bareHostname(target.hostname);
    const admission = this.#admit(hostname, port);
    if (!admission.ok) {
      respondRefusal(res, admission.entry.code === 'network' ? 502 : 403, admission.entry.code, admission.entry.message);
      return;
    }
    let socket: net.Socket;
    try {
      socket = await this.#open(hostname, port);
    } catch (error) {
      const entry = this.#recordFailure(hostname, port, error);
      respondRefusal(res, entry.code === 'network' ? 502 : 403, entry.code, entry.message);
      return;
    }
    this.#track(socket);
    const upstream = http.request({
      createConnection: () => socket,
      method: req.method,
      path: `${target.pathname}${target.search}`,
      headers: forwardableHeaders(req.rawHeaders),
      setHost: false,
    });
    if (res.destroyed || this.#closed) {
      // The browser hung up (a page closed mid-request) while the target was being admitted.
      // Destroying a request that has no answer yet emits 'error' ("socket hang up"), which with
      // no listener would take the whole service down.
      upstream.on('error', () => undefined);
      upstream.destroy();
      return;
    }
    upstream.on('response', (answer) => {
      answer.on('data', (chunk: Buffer) => this.#count(chunk.length));
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardableHeaders(answer.rawHeaders));
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    upstream.on('error', (error) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const entry = this.#record(hostname, port, 'network', messageOf(error));
      respondRefusal(res, 502, entry.code, entry.message);
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  }

  /** The caller's host rule, before anything is resolved. */
  #admit(hostname: string, port: number): Admission {
    if (this.#options.refuseAll) {
      return { ok: false, entry: this.#record(hostname, port, 'blocked_address', 'This proxy accepts no traffic') };
    }
    if (this.#options.checkHost !== undefined) {
      try {
        this.#options.checkHost(hostname);
      } catch (error) {
        return { ok: false, entry: this.#record(hostname, port, 'blocked_host', messageOf(error) || 'The host was refused') };
      }
    }
    return { ok: true };
  }

  /**
   * A TCP stream to `hostname:port` through the outbound client's connector: resolved and checked
   * once, then opened to the checked address (directly, or as `CONNECT ip:port` at the upstream
   * proxy). Rejects with `BlockedAddressError` when the rules refuse the target.
   */
  #open(hostname: string, port: number): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      this.#connector({ hostname, host: hostname, port: String(port), protocol: 'http:' }, (error, socket) => {
        if (error !== null) reject(error);
        else resolve(socket as net.Socket);
      });
    });
  }

  /** Logs why a target could not be opened: refused by the rules, or unreachable. */
  #recordFailure(hostname: string, port: number, error: unknown): GuardLogEntry {
    if (error instanceof BlockedAddressError) return this.#record(hostname, port, 'blocked_address', error.message);
    const code = (error as { code?: unknown } | null)?.code;
    const message = code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? `DNS lookup failed: ${messageOf(error)}` : messageOf(error);
    return this.#record(hostname, port, 'network', message);
  }

  #count(bytes: number): void {
    this.bytesIn += bytes;
    const limit = this.#options.transferLimitBytes;
    if (limit !== undefined && this.bytesIn > limit && !this.#limitReached) {
      this.#limitReached = true;
      for (const socket of this.#sockets) socket.destroy();
      this.#options.onTransferLimit?.();
    }
  }

  #record(hostname: string, port: number, code: GuardOutcome, message: string): GuardLogEntry {
    const entry: GuardLogEntry = { hostname: bareHostname(hostname.toLowerCase()), port, code, message };
    if (code === 'blocked_address' || code === 'blocked_host') this.refusedCount += 1;
    if (this.log.length < LOG_LIMIT) this.log.push(entry);
    return entry;
  }

  #track(socket: Duplex): void {
    if (this.#closed || this.#limitReached) {
      socket.destroy();
      return;
    }
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
  }
}

/** `host:port` of a CONNECT line, canonicalised by the WHATWG parser (numeric hosts included). */
function parseAuthority(authority: string): { hostname: string; port: number } | undefined {
  const match = /^(.+):(\d{1,5})$/.exec(authority);
  if (match === null) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65_535) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${match[1]}/`);
  } catch {
    return undefined;
  }
  if (url.pathname !== '/' || url.port !== '' || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    return undefined;
  }
  return { hostname: bareHostname(url.hostname), port };
}

/** Raw header pairs minus hop-by-hop fields and whatever the Connection header names. */
function forwardableHeaders(rawHeaders: readonly string[]): string[] {
  const named = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i].toLowerCase() === 'connection') {
      for (const token of rawHeaders[i + 1].split(',')) named.add(token.trim().toLowerCase());
    }
  }
  const kept: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase();
    if (!HOP_BY_HOP.has(name) && !named.has(name)) kept.push(rawHeaders[i], rawHeaders[i + 1]);
  }
  return kept;
}

function refusalHead(entry: GuardLogEntry): string {
  return entry.code === 'network' ? statusLine(502, 'Bad Gateway', entry.code) : statusLine(403, 'Forbidden', entry.code);
}

function statusLine(status: number, reason: string, code: GuardOutcome): string {
  return `HTTP/1.1 ${status} ${reason}\r\n${GUARD_REFUSAL_HEADER}: ${code}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`;
}

function respondRefusal(res: http.ServerResponse, status: number, code: GuardOutcome, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    [GUARD_REFUSAL_HEADER]: code,
    connection: 'close',
  });
  res.end(`Refused by the address guard: ${message}\n`);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
