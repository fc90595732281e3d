/**
 * Shared pieces of the reliability tier (test/reliability): the house rules every answer must
 * keep, the money checks (audit, outstanding holds, what a request was charged), memory figures,
 * and a loopback upstream that serves cheap documents and hostile ones (gzip bombs, tricklers,
 * hanging answers) generated in memory.
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { AddressInfo, Socket } from 'node:net';
import type { TestService } from './service.ts';
import { spawnServer, type ServerProcess } from './processes.ts';
import { bingFixtures, fixtureResults } from './search-fixtures.ts';
import { buildPdf } from './pdf-fixtures.ts';
import { renderTextImage } from './image-fixtures.ts';

/** One answer as the reliability tests look at it. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

export async function readAnswer(response: Response): Promise<Answer> {
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, headers: response.headers, text, body };
}

/**
 * The house rules of an error answer (contract §1, Laravel 8): a JSON object with a `message`
 * string, `errors` as field → non-empty list of strings on a 422, and an `X-Request-Id` header.
 * Returns what is wrong, or null.
 */
export function houseRuleViolation(answer: Answer): string | null {
  if (!answer.headers.get('x-request-id')) return `${answer.status} without X-Request-Id`;
  if (answer.status < 400) return null;
  const body = answer.body as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return `${answer.status} body is not a JSON object: ${answer.text.slice(0, 120)}`;
  if (typeof body.message !== 'string' || body.message === '') return `${answer.status} without a message: ${answer.text.slice(0, 120)}`;
  if (answer.status === 422) {
    const errors = body.errors as Record<string, unknown> | undefined;
    if (!errors || typeof errors !== 'object' || Array.isArray(errors) || Object.keys(errors).length === 0) return `422 without errors: ${answer.text.slice(0, 120)}`;
    for (const [field, messages] of Object.entries(errors)) {
      if (!Array.isArray(messages) || messages.length === 0 || messages.some((m) => typeof m !== 'string')) return `422 errors.${field} is not a list of strings`;
    }
  } else if ('errors' in body) {
    return `${answer.status} carries errors (only 422 does)`;
  }
  return null;
}

/** Balances that differ from the sum of their ledger rows (`gleaner credits audit`): none, normally. */
export async function auditMismatches(service: TestService) {
  return (await service.services.ledger.recompute()).filter((row) => row.stored !== row.ledger);
}

/** Credits still held by requests (nothing should be once every request has answered). */
export async function outstandingHolds(service: TestService): Promise<number> {
  const rows = await service.services.db.query<{ n: string }>('SELECT count(*)::text AS n FROM credit_holds');
  return Number(rows[0].n);
}

/** The history row of one request (by its X-Request-Id), or undefined. */
export async function historyRow(service: TestService, requestId: string): Promise<{ status: number; credits: number } | undefined> {
  const rows = await service.services.db.query<{ status: number; credits: number }>('SELECT status, credits FROM request_history WHERE request_id = $1', [requestId]);
  return rows[0] ? { status: Number(rows[0].status), credits: Number(rows[0].credits) } : undefined;
}

/** Which of `requestIds` have a history row. */
export async function requestIdsInHistory(service: TestService, requestIds: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < requestIds.length; i += 500) {
    const rows = await service.services.db.query<{ request_id: string }>('SELECT request_id FROM request_history WHERE request_id = ANY($1::text[])', [requestIds.slice(i, i + 500)]);
    for (const row of rows) found.add(row.request_id);
  }
  return found;
}

export const rssMb = () => Math.round(process.memoryUsage.rss() / 1024 / 1024);

/** Resident memory of another process, from /proc (Linux), in MB. */
export function processRssMb(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmRSS:\s+(\d+) kB/.exec(status);
    return match ? Math.round(Number(match[1]) / 1024) : undefined;
  } catch {
    return undefined;
  }
}

/** Runs `tasks` with at most `concurrency` at once; results in task order. */
export async function runPool<T, R>(items: readonly T[], concurrency: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index], index);
    }
  });
  await Promise.all(workers);
  return results;
}

/** How the document upstream answers a path. */
type Route = (request: http.IncomingMessage, response: http.ServerResponse) => void;

export interface DocumentUpstream {
  url: string;
  /** Requests seen, by path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

/** A search results page the fake engine answers, so /v1/engine-search does its real work. */
export const SEARCH_PAGE = bingFixtures.results(fixtureResults('fuzz', 10)).body;

/**
 * A loopback upstream for the reliability tier. Paths:
 * - `/files/doc.pdf`: a one-page PDF; `/files/img.png`: a small image with a word in it;
 * - `/bing/...`: a results page of the fake Bing;
 * - `/hostile/gzip-bomb.pdf|png`: `Content-Encoding: gzip`, ~100 KB on the wire, `decodedMb` decoded;
 * - `/hostile/trickle.pdf`: headers at once, then one byte a second;
 * - `/hostile/hang.pdf`: accepts and never answers;
 * - `/hostile/<name>` registered with `serve()`;
 * - anything else: 404.
 */
export async function startDocumentUpstream(options: { gzipDecodedMb?: number } = {}): Promise<DocumentUpstream & { serve(path: string, body: Uint8Array, type: string): void }> {
  const pdf = await buildPdf({ pages: [['Reliability tier', 'one page']] });
  const png = await renderTextImage(['FUZZ'], { fontSize: 20 }).catch(() => null);
  const decodedMb = options.gzipDecodedMb ?? 200;
  // Zeros compress about 1000:1, so the bomb is tiny on the wire and huge once decoded.
  const bomb = gzipSync(Buffer.alloc(decodedMb * 1024 * 1024), { level: 9 });
  const extra = new Map<string, { body: Uint8Array; type: string }>();
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const hits = new Map<string, number>();

  const routes: Record<string, Route> = {
    '/files/doc.pdf': (_q, r) => send(r, 200, 'application/pdf', pdf),
    '/files/img.png': (_q, r) => (png ? send(r, 200, 'image/png', png) : send(r, 404, 'text/plain', 'no image renderer')),
    '/hostile/gzip-bomb.pdf': (_q, r) => send(r, 200, 'application/pdf', bomb, { 'content-encoding': 'gzip' }),
    '/hostile/gzip-bomb.png': (_q, r) => send(r, 200, 'image/png', bomb, { 'content-encoding': 'gzip' }),
    '/hostile/trickle.pdf': (_q, r) => {
      r.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(1024 * 1024) });
      r.write('%PDF-1.4\n');
      const timer = setInterval(() => r.write(' '), 1000);
      timers.add(timer);
      r.once('close', () => {
        clearInterval(timer);
        timers.delete(timer);
      });
    },
    '/hostile/hang.pdf': () => {
      // Never answered: the request stays open until the server gives up on it.
    },
  };

  const server = http.createServer((request, response) => {
    request.resume();
    const path = (request.url ?? '/').split('?')[0];
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path.startsWith('/bing')) return send(response, 200, 'text/html; charset=utf-8', SEARCH_PAGE);
    const registered = extra.get(path);
    if (registered) return send(response, 200, registered.type, registered.body);
    const route = routes[path];
    if (route) return route(request, response);
    send(response, 404, 'text/plain', 'not found');
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.keepAliveTimeout = 2000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    serve(path, body, type) {
      extra.set(path, { body, type });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearInterval(timer);
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function send(response: http.ServerResponse, status: number, type: string, body: string | Uint8Array, headers: Record<string, string> = {}) {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  response.writeHead(status, { 'content-type': type, 'content-length': String(bytes.length), ...headers });
  response.end(bytes);
}

/** A server process with the test endpoints, given up to three minutes to start (a busy machine). */
export function spawnPatientServer(env: Record<string, string>, startTimeoutMs = 180_000): Promise<ServerProcess> {
  return spawnServer(env, { startTimeoutMs });
}
