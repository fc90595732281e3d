/**
 * A programmable upstream on loopback: tests answer each request with a function and can read
 * back what was asked. Serves fake search engines, documents and images.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface UpstreamHit {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface UpstreamAnswer {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  delayMs?: number;
}

export interface FakeUpstream {
  url: string;
  hits: UpstreamHit[];
  handle(answer: (hit: UpstreamHit) => UpstreamAnswer | Promise<UpstreamAnswer>): void;
  close(): Promise<void>;
}

export async function startFakeUpstream(): Promise<FakeUpstream> {
  let answer: (hit: UpstreamHit) => UpstreamAnswer | Promise<UpstreamAnswer> = () => ({ status: 404, body: 'not found' });
  const hits: UpstreamHit[] = [];
  const server = http.createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const url = new URL(request.url ?? '/', 'http://fake');
    const hit: UpstreamHit = {
      method: request.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      headers: request.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    hits.push(hit);
    try {
      const reply = await answer(hit);
      if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
      response.writeHead(reply.status ?? 200, reply.headers ?? { 'content-type': 'text/html; charset=utf-8' });
      response.end(reply.body ?? '');
    } catch (error) {
      response.writeHead(500);
      response.end(String(error));
    }
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    handle(fn) {
      answer = fn;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
