/**
 * Runs the `gleaner` command as an operator would, in a child process, for the tests of the
 * command line and of the admin routes that mirror it.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';

const BIN = new URL('../../bin/gleaner', import.meta.url).pathname;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (commands run with --json print exactly one JSON line); undefined otherwise. */
  json: any;
}

/** The environment of a child: ours without database or Redis settings, plus `env`. */
export function cliEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent' };
  delete base.DATABASE_URL;
  delete base.REDIS_URL;
  return { ...base, ...env };
}

/**
 * The environment that points the command at a test server's storage: its admin socket
 * (embedded, through `DATA_DIR`), or its PostgreSQL database directly.
 */
export function storageCliEnv(serviceEnv: Record<string, string>): NodeJS.ProcessEnv {
  const { DATA_DIR, DATABASE_URL } = serviceEnv;
  return cliEnv(DATABASE_URL ? { DATA_DIR, DATABASE_URL } : { DATA_DIR });
}

/** `gleaner <args>` with `env`; resolves when it exits. */
export async function runGleaner(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const [code] = (await once(child, 'close')) as [number | null];
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}
