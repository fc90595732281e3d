/**
 * The embedded database can be opened by one process only. While a server holds it, operator
 * commands reach it through this Unix socket in DATA_DIR (mode 0600: only the account that runs
 * the server may use it). One JSON line in (`{"argv":[...]}`), one JSON line out.
 */
import net from 'node:net';
import { chmodSync, rmSync } from 'node:fs';
import path from 'node:path';
import { OperatorError, runOperatorCommand, UsageError } from './commands.ts';
import type { Services } from '../services.ts';

export const adminSocketPath = (dataDir: string) => path.join(dataDir, 'admin.sock');

type Reply = { ok: true; result: unknown } | { ok: false; error: string; usage: boolean };

export async function listenAdminSocket(services: Services, dataDir: string): Promise<net.Server> {
  const socketPath = adminSocketPath(dataDir);
  rmSync(socketPath, { force: true }); // a stale socket from a process that died
  const server = net.createServer((socket) => {
    let buffer = '';
    let answering = false;
    socket.setEncoding('utf8');
    socket.on('data', async (chunk) => {
      // One command per connection: whatever arrives after its line must not run it again.
      if (answering) return;
      buffer += chunk;
      const newline = buffer.indexOf('\n');
      if (newline === -1) {
        if (buffer.length > 64 * 1024) socket.destroy();
        return;
      }
      answering = true;
      const line = buffer.slice(0, newline);
      let reply: Reply;
      try {
        const { argv } = JSON.parse(line) as { argv: string[] };
        if (!Array.isArray(argv) || !argv.every((a) => typeof a === 'string')) throw new UsageError('Bad request on the admin socket.');
        reply = { ok: true, result: await runOperatorCommand(services, argv) };
      } catch (error) {
        const known = error instanceof UsageError || error instanceof OperatorError;
        reply = { ok: false, error: known ? (error as Error).message : `The command failed: ${(error as Error).message}`, usage: error instanceof UsageError };
      }
      socket.end(JSON.stringify(reply) + '\n');
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  chmodSync(socketPath, 0o600);
  server.unref();
  return server;
}

/** Sends a command to a running server. Resolves null when no server listens on the socket. */
export function sendAdminCommand(dataDir: string, argv: string[]): Promise<Reply | null> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(adminSocketPath(dataDir));
    let data = '';
    let connected = false;
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      connected = true;
      socket.write(JSON.stringify({ argv }) + '\n');
    });
    socket.on('data', (chunk) => (data += chunk));
    socket.on('end', () => {
      try {
        resolve(JSON.parse(data) as Reply);
      } catch {
        reject(new Error('The server answered on the admin socket with something unreadable.'));
      }
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (!connected && (error.code === 'ENOENT' || error.code === 'ECONNREFUSED')) resolve(null);
      else reject(error);
    });
  });
}
