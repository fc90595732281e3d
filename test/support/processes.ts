/** Server processes for tests that need more than one, or need to kill one. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { sendAdminCommand } from '../../src/operator/admin-socket.ts';

const SERVER_SCRIPT = new URL('./serve-test-endpoints.ts', import.meta.url).pathname;

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts a server process with the test endpoints and waits for it to listen. `startTimeoutMs`
 * (default 90 s) only catches a server that never starts: an embedded database's first start on
 * a busy machine can take a minute.
 */
export async function spawnServer(env: Record<string, string>, options: { startTimeoutMs?: number } = {}): Promise<ServerProcess> {
  const startTimeoutMs = options.startTimeoutMs ?? 90_000;
  const child = spawn(process.execPath, [SERVER_SCRIPT], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start within ${startTimeoutMs} ms:\n${output}`));
    }, startTimeoutMs);
    child.stdout!.on('data', () => {
      const match = /LISTENING (\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
  return {
    url,
    child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** Runs an operator command on the server holding DATA_DIR, through its admin socket. */
export async function admin(dataDir: string, ...argv: string[]): Promise<any> {
  const reply = await sendAdminCommand(dataDir, argv);
  if (!reply) throw new Error('no server on the admin socket');
  if (!reply.ok) throw new Error(reply.error);
  return reply.result;
}

export async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}
