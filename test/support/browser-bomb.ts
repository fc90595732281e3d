/**
 * Resource bombs for the headless browser, made in memory, and the memory of a Chromium process
 * tree read from /proc (Linux): the reliability tier's browser tests measure what a page costs
 * the machine, not what the service believes.
 *
 * - `/gzip-bomb`: an HTML page sent with `Content-Encoding: gzip`, about 1 MB on the wire and
 *   `gzipMb` MB once inflated (one text node of the letter "a").
 * - `/script-bomb`: a page of about 150 bytes whose script writes 50 million characters into the DOM.
 * - `/plain`: an ordinary page, to show the browser still renders.
 */
import http from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import { constants, crc32, deflateRawSync } from 'node:zlib';

export const SCRIPT_BOMB = '<!doctype html><html><body><script>document.body.append("a".repeat(5e7));</script></body></html>';
export const PLAIN_PAGE = '<!doctype html><html><head><title>Plain</title></head><body><p id="ok">Rendered normally</p></body></html>';

/**
 * A gzip member whose body inflates to `head`, then `chunkMb` × 1 MB of "a", then `tail`. The
 * repeated part is one compressed megabyte ended by a full flush (which resets the compressor's
 * history), so its bytes are valid wherever they are repeated: no gigabyte is ever held here.
 */
export function gzipBomb(decodedMb: number, head: string, tail: string): Buffer {
  const chunk = Buffer.alloc(1024 * 1024, 'a');
  const flushed = (data: Buffer) => deflateRawSync(data, { level: 9, finishFlush: constants.Z_FULL_FLUSH });
  const headBytes = Buffer.from(head);
  const tailBytes = Buffer.from(tail);
  const compressedChunk = flushed(chunk);
  const parts: Buffer[] = [Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]), flushed(headBytes)];
  let crc = crc32(headBytes);
  for (let i = 0; i < decodedMb; i++) {
    parts.push(compressedChunk);
    crc = crc32(chunk, crc);
  }
  parts.push(deflateRawSync(tailBytes, { level: 9 }));
  crc = crc32(tailBytes, crc);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE((headBytes.length + decodedMb * 1024 * 1024 + tailBytes.length) % 2 ** 32, 4);
  parts.push(trailer);
  return Buffer.concat(parts);
}

export interface BombSite {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Requests seen, by path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

export async function startBombSite(options: { gzipMb?: number } = {}): Promise<BombSite> {
  const bomb = gzipBomb(options.gzipMb ?? 1024, '<!doctype html><html><head><title>Bomb</title></head><body><p>', '</p></body></html>');
  const hits = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server = http.createServer((request, response) => {
    request.resume();
    const path = (request.url ?? '/').split('?')[0];
    hits.set(path, (hits.get(path) ?? 0) + 1);
    response.on('error', () => undefined);
    if (path === '/gzip-bomb') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip', 'content-length': String(bomb.length) });
      response.end(bomb);
    } else if (path === '/script-bomb') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(SCRIPT_BOMB);
    } else if (path === '/plain') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(PLAIN_PAGE);
    } else {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not found');
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Parent pid and resident set size (kB) of every process, from /proc. */
function processTable(): Map<number, { ppid: number; rssKb: number; cmdline: string }> {
  const table = new Map<number, { ppid: number; rssKb: number; cmdline: string }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, 'utf8');
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(status)?.[1] ?? 0);
      const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ');
      table.set(Number(name), { ppid, rssKb, cmdline });
    } catch {
      // The process ended while being read.
    }
  }
  return table;
}

/**
 * Resident memory (MB) of every Chromium process descended from `rootPid` (this process by
 * default: the tests run the service, and so its browser, in-process), and how many there are.
 */
export function chromiumTreeRss(rootPid = process.pid): { mb: number; processes: number; largestMb: number } {
  const table = processTable();
  const children = new Map<number, number[]>();
  for (const [pid, entry] of table) children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), pid]);
  let kb = 0;
  let largest = 0;
  let processes = 0;
  const stack = [...(children.get(rootPid) ?? [])];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    const entry = table.get(pid);
    if (entry === undefined) continue;
    if (/chrom/i.test(entry.cmdline.split(' ')[0])) {
      kb += entry.rssKb;
      largest = Math.max(largest, entry.rssKb);
      processes++;
    }
    stack.push(...(children.get(pid) ?? []));
  }
  return { mb: Math.round(kb / 1024), processes, largestMb: Math.round(largest / 1024) };
}

/** Samples `chromiumTreeRss` every `intervalMs` until stopped; answers the highest tree total seen. */
export function watchChromiumPeak(intervalMs = 100): { stop(): number } {
  let peak = chromiumTreeRss().mb;
  const timer = setInterval(() => {
    peak = Math.max(peak, chromiumTreeRss().mb);
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, chromiumTreeRss().mb);
    },
  };
}
