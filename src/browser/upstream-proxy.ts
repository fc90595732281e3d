/**
 * Egress through the operator's proxy (PROXY_URL) for the browser's traffic, the way the outbound
 * client does it: a CONNECT tunnel for https and WebSockets, absolute-URI forwarding for plain
 * http, credentials from the proxy URL. The proxy itself is trusted and never address-checked.
 */
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { isIPv6 } from 'node:net';
import { bareHostname } from '../outbound/url-policy.ts';

/** Opens `CONNECT hostname:port` through `proxy`; resolves with the tunnelled socket. */
export function openProxyTunnel(proxy: URL, hostname: string, port: number, timeoutMs: number): Promise<net.Socket> {
  const authority = `${isIPv6(hostname) ? `[${hostname}]` : hostname}:${port}`;
  return new Promise((resolve, reject) => {
    const request = transportFor(proxy).request({
      ...proxyEndpoint(proxy),
      method: 'CONNECT',
      path: authority,
      headers: { host: authority, ...proxyAuthorization(proxy) },
      agent: false,
      timeout: timeoutMs,
    });
    request.once('connect', (response, socket, head) => {
      if (response.statusCode !== 200) {
        socket.destroy();
        reject(new Error(`The upstream proxy refused CONNECT ${authority} with ${response.statusCode}`));
        return;
      }
      if (head.length > 0) socket.unshift(head);
      socket.setTimeout(0);
      resolve(socket);
    });
    request.once('timeout', () => request.destroy(new Error(`The upstream proxy did not answer within ${timeoutMs} ms`)));
    request.once('error', reject);
    request.end();
  });
}

/** A plain-http request for `target` sent to `proxy` in absolute-URI form. */
export function proxiedHttpRequest(proxy: URL, target: URL, method: string | undefined, rawHeaders: string[]): http.ClientRequest {
  const credentials = proxyAuthorization(proxy);
  const headers = [...rawHeaders];
  if (credentials['proxy-authorization'] !== undefined) headers.push('proxy-authorization', credentials['proxy-authorization']);
  return transportFor(proxy).request({
    ...proxyEndpoint(proxy),
    method,
    path: target.href,
    headers,
    setHost: false,
    agent: false,
  });
}

function transportFor(proxy: URL): typeof http | typeof https {
  return proxy.protocol === 'https:' ? https : http;
}

function proxyEndpoint(proxy: URL): { host: string; port: number; servername?: string } {
  const host = bareHostname(proxy.hostname);
  const port = Number(proxy.port || (proxy.protocol === 'https:' ? 443 : 80));
  return proxy.protocol === 'https:' ? { host, port, servername: host } : { host, port };
}

function proxyAuthorization(proxy: URL): { 'proxy-authorization'?: string } {
  if (proxy.username === '' && proxy.password === '') return {};
  const token = Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString('base64');
  return { 'proxy-authorization': `Basic ${token}` };
}
