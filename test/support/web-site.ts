/**
 * A loopback web site for the /v1/web tests: routes answered by functions, and an access log of
 * every request that reached it (method, host, path, headers, body), which is how tests show
 * that a refused request never arrived. Listens on 127.0.0.1 and, when the machine has it, on
 * ::1 at the same port, so `localhost` reaches it whichever address it resolves to first.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SiteHit {
  method: string;
  host: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface SiteAnswer {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export type Route = (hit: SiteHit) => SiteAnswer | Promise<SiteAnswer>;

export interface LoopbackSite {
  port: number;
  /** `http://<host>:<port>` */
  url(host?: string): string;
  log: SiteHit[];
  route(path: string, answer: Route): void;
  close(): Promise<void>;
}

export async function startLoopbackSite(): Promise<LoopbackSite> {
  const routes = new Map<string, Route>();
  const log: SiteHit[] = [];
  const handler: http.RequestListener = async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const url = new URL(request.url ?? '/', 'http://site');
    const hit: SiteHit = { method: request.method ?? 'GET', host: request.headers.host ?? '', path: url.pathname + url.search, headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
    log.push(hit);
    const route = routes.get(url.pathname);
    try {
      const answer = route ? await route(hit) : { status: 404, body: 'no such page' };
      response.writeHead(answer.status ?? 200, answer.headers ?? { 'content-type': 'text/html; charset=utf-8' });
      response.end(answer.body ?? '');
    } catch (error) {
      response.writeHead(500);
      response.end(String(error));
    }
  };
  const v4 = http.createServer(handler);
  await new Promise<void>((resolve) => v4.listen(0, '127.0.0.1', resolve));
  const { port } = v4.address() as AddressInfo;
  const v6 = http.createServer(handler);
  const v6Listening = await new Promise<boolean>((resolve) => {
    v6.once('error', () => resolve(false));
    v6.listen(port, '::1', () => resolve(true));
  });
  const servers = v6Listening ? [v4, v6] : [v4];
  return {
    port,
    url: (host = '127.0.0.1') => `http://${host}:${port}`,
    log,
    route: (path, answer) => void routes.set(path, answer),
    close: () =>
      Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.closeAllConnections();
              server.close(() => resolve());
            }),
        ),
      ).then(() => undefined),
  };
}
