/**
 * A start that fails says why and leaves nothing behind it.
 * - A bad setting is refused before anything exists: `gleaner serve` exits 2 naming the variable,
 *   with no DATA_DIR created, no migration run (no table in PostgreSQL) and no owner printed.
 * - A start that fails later (the port is taken) leaves nothing open: no database connection, no
 *   Redis connection, no thread. Run in a child process, which must then exit by itself: an open
 *   handle would keep it (and a test runner hosting it) alive forever. In the scaled tier the
 *   child uses the real PostgreSQL server and Redis, whose connections are the ones to leak.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freshPostgresDatabase, startTestService } from '../support/service.ts';
import { checkSettings } from '../../src/app.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';

const BIN = fileURLToPath(new URL('../../bin/gleaner', import.meta.url));
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

const SERVICE_HELPER = fileURLToPath(new URL('../support/service.ts', import.meta.url));
// Far beyond a normal start (well under 10 s here): only a leaked handle gets this far.
const HANG_LIMIT_MS = 90_000;

/** Runs startTestService(env) in a fresh Node process; resolves with how the process ended. */
function startInChildProcess(env: Record<string, string>): Promise<{ code: number | null; hung: boolean; stdout: string; stderr: string }> {
  const script = `
    const { startTestService } = await import(${JSON.stringify(SERVICE_HELPER)});
    try {
      await startTestService(${JSON.stringify(env)});
      console.log('started');
    } catch (error) {
      console.log('refused: ' + error.message);
    }
    // No process.exit: the process ends only when nothing is left open.
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    let hung = false;
    const limit = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, HANG_LIMIT_MS);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(limit);
      resolve({ code, hung, stdout, stderr });
    });
  });
}

test('a PDF heap limit too small to run pdf.js stops the start with a clear message', async () => {
  await assert.rejects(startTestService({ PDF_MAX_HEAP_MB: '8' }), /PDF_MAX_HEAP_MB must be at least 64 \(got 8\)/);
});

test('a start refused after the database (and Redis) opened leaves nothing keeping the process alive', async () => {
  // A taken port fails the start at its last step, after the database, Redis and the owner.
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  try {
    const outcome = await startInChildProcess({ PORT: String((taken.address() as AddressInfo).port) });
    assert.match(outcome.stdout, /refused: listen EADDRINUSE/, outcome.stderr);
    assert.equal(outcome.hung, false, `the process was still alive ${HANG_LIMIT_MS / 1000} s after the refused start: a connection or thread was left open`);
    assert.equal(outcome.code, 0, outcome.stderr);
  } finally {
    taken.close();
  }
});

/** `gleaner serve` in a child process; a serve that starts after all is stopped and reported. */
function serve(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...env };
  for (const name of ['DATABASE_URL', 'REDIS_URL']) if (!(name in env)) delete base[name];
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, 'serve'], { env: base, timeout: HANG_LIMIT_MS, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

// One bad value per kind of check: the core config, a capability, the metrics, Stripe, a listener, a store URL.
const BAD_SETTINGS: Array<[string, string]> = [
  ['METRICS_TOKEN', 'too-short'],
  ['PDF_MAX_HEAP_MB', '8'],
  ['SEARCH_ENGINES', 'bing,altavista'],
  ['STRIPE_WEBHOOK_SECRET', 'sk_live_pasted_the_api_key'],
  ['HOLD_TTL_SECONDS', 'ten'],
  ['PORT', '99999'],
  ['LOG_LEVEL', 'loud'],
  ['REDIS_URL', 'localhost:6379'],
  ['OUTBOUND_ALLOW_HOSTS', 'proxy,${OUTBOUND_ALLOW_HOSTS:-}'],
  ['BROWSER_SANDBOX', 'no'],
];

for (const [variable, value] of BAD_SETTINGS) {
  test(`serve with ${variable}=${value} on an empty DATA_DIR creates nothing and exits 2 naming ${variable}`, async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'gleaner-badsetting-')), 'data');
    try {
      const outcome = await serve({ DATA_DIR: dataDir, [variable]: value });
      assert.equal(outcome.code, 2, `exit code (stderr: ${outcome.stderr})`);
      assert.match(outcome.stderr, new RegExp(variable), 'the message names the variable');
      assert.doesNotMatch(outcome.stdout, /API token|owner account/, 'no owner was created');
      assert.equal(existsSync(dataDir), false, 'DATA_DIR was not created');
    } finally {
      rmSync(join(dataDir, '..'), { recursive: true, force: true });
    }
  });
}

test('serve with a bad setting on an empty PostgreSQL database runs no migration', { skip: process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL (the scaled tier)' }, async () => {
  const database = await freshPostgresDatabase(process.env.TEST_DATABASE_URL!);
  try {
    const outcome = await serve({ DATABASE_URL: database.url, METRICS_TOKEN: 'too-short' });
    assert.equal(outcome.code, 2, outcome.stderr);
    assert.match(outcome.stderr, /METRICS_TOKEN must be at least 16 characters/);
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT count(*)::int AS tables FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')");
      assert.equal(rows[0].tables, 0, 'no table was created');
    } finally {
      await client.end();
    }
  } finally {
    await database.drop();
  }
});

/** Every variable read through the typed readers (integer, number, flag, URL) anywhere in src/. */
function typedVariables(): string[] {
  const names = new Set<string>();
  const reads = /\b(?:integer|positiveInteger|number|flag|url|int)\(\s*'([A-Z][A-Z0-9_]*)'/g;
  for (const file of readdirSync(SRC, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts')) continue;
    for (const match of readFileSync(join(SRC, file), 'utf8').matchAll(reads)) names.add(match[1]!);
  }
  return [...names].sort();
}

// Variables read only when another setting turns their feature on.
const ENABLED_BY: Record<string, Record<string, string>> = {
  CAPTCHA_SOLVER_POLL_MS: { CAPTCHA_SOLVER_URL: 'http://127.0.0.1:9/', CAPTCHA_SOLVER_KEY: 'key' },
  CAPTCHA_SOLVER_TIMEOUT_MS: { CAPTCHA_SOLVER_URL: 'http://127.0.0.1:9/', CAPTCHA_SOLVER_KEY: 'key' },
};

test('unchecked: every typed setting in src/ is checked before anything is created', async () => {
  const variables = typedVariables();
  assert.ok(variables.length > 30, `found only ${variables.length} variables: the pattern no longer matches the readers`);
  const unchecked: string[] = [];
  for (const variable of variables) {
    const env = { DATA_DIR: join(tmpdir(), 'gleaner-never-created'), ...ENABLED_BY[variable], [variable]: 'not-a-valid-value' };
    try {
      await checkSettings(loadConfig(env));
      unchecked.push(variable);
    } catch (error) {
      assert.ok(error instanceof ConfigError, `${variable}: ${(error as Error).message}`);
      assert.ok(error.variable === variable || error.message.includes(variable), `${variable} refused with a message that does not name it: ${error.message}`);
    }
  }
  assert.deepEqual(unchecked, [], 'read at start-up but not checked first: add their readers to checkSettings (src/app.ts) or checkCapabilitySettings (src/capabilities.ts)');
});
