/**
 * The operator's command line, run as `node bin/gleaner ...` child processes:
 * - while a server holds the embedded database, commands go through its admin socket and the
 *   server keeps the DATA_DIR lock throughout (the CLI never opens the database itself);
 * - with no server, the CLI opens the embedded database directly;
 * - with DATABASE_URL, it talks to PostgreSQL directly.
 * One DATA_DIR serves the embedded groups (PGlite's first open of a directory takes seconds).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freshPostgresDatabase } from '../support/service.ts';
import { cliEnv, runGleaner, type CliResult } from '../support/cli.ts';
import { listMigrations } from '../../src/storage/migrate.ts';

const BIN = new URL('../../bin/gleaner', import.meta.url).pathname;
const SANCTUM_TOKEN = /^\d+\|[A-Za-z0-9]{40}$/;

const gleaner = (env: Record<string, string>, ...args: string[]): Promise<CliResult> => runGleaner(args, cliEnv(env));

/** Runs a command that must succeed and returns its JSON output. */
async function ok(env: Record<string, string>, ...args: string[]): Promise<any> {
  const result = await gleaner(env, ...args, '--json');
  assert.equal(result.code, 0, `gleaner ${args.join(' ')} exited ${result.code}: ${result.stdout}${result.stderr}`);
  return result.json;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

interface Server {
  child: ChildProcess;
  url: string;
  output(): string;
  stop(): Promise<number | null>;
}

/** Starts `gleaner serve` and waits until it answers /health. */
async function serve(env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve'], {
    // One OCR engine is enough to warm: these tests never send an image.
    env: cliEnv({ OCR_WORKERS: '1', ...env, PORT: String(port), HOST: '127.0.0.1' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (d) => (output += d));
  child.stderr!.setEncoding('utf8').on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gleaner serve exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`gleaner serve did not answer /health within 60 s:\n${output}`);
    }
    const health = await fetch(`${url}/health`).catch(() => null);
    if (health?.ok) break;
    await sleep(100);
  }
  return {
    child,
    url,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}

async function getMe(server: Server, token: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}/me`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
  return { status: response.status, body: await response.json() };
}

const balanceOf = (show: { balances: Array<{ product: string; balance: number }> }, product: string) =>
  show.balances.find((b) => b.product === product)?.balance;

describe('gleaner CLI on the embedded database', () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-cli-'));
  const env = { DATA_DIR: dataDir };
  const lockFile = path.join(dataDir, 'gleaner.lock');
  /** The pid the lock file names (it holds JSON: pid, start time, boot id, host). */
  const lockPid = (): number => JSON.parse(readFileSync(lockFile, 'utf8')).pid;
  let server: Server | undefined;
  let owner: { id: number; token: string; secretKey: string };

  after(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe('while a server runs on the same DATA_DIR', () => {
    // Sampled all along: any moment the lock names another process (a CLI opening the
    // database itself) or is missing is recorded.
    const lockSamples: string[] = [];
    let lockWatch: NodeJS.Timeout | undefined;

    before(async () => {
      server = await serve(env);
      const pid = String(server.child.pid);
      lockWatch = setInterval(() => {
        let holder: string;
        try {
          holder = String(lockPid());
        } catch {
          holder = 'missing';
        }
        if (holder !== pid) lockSamples.push(holder);
      }, 20);
    });

    after(() => clearInterval(lockWatch));

    test('the first start prints the owner account once: id, token and secret key', () => {
      const output = server!.output();
      const id = /user id:\s+(\d+)/.exec(output)?.[1];
      const token = /API token:\s+(\S+)/.exec(output)?.[1];
      const secretKey = /secret key:\s+(\S+)/.exec(output)?.[1];
      assert.ok(id && token && secretKey, `no owner banner in:\n${output}`);
      assert.match(token, SANCTUM_TOKEN);
      assert.ok(secretKey.length >= 48, `secret key of ${secretKey.length} characters`);
      assert.equal(output.split('API token:').length, 2, 'the token is printed exactly once');
      owner = { id: Number(id), token, secretKey };
    });

    test('the owner token authenticates against the server', async () => {
      const me = await getMe(server!, owner.token);
      assert.equal(me.status, 200);
      assert.equal(me.body.user.id, owner.id);
      assert.deepEqual(me.body.user.balances, { scraping: 0, extraction: 0, blockchain: 0 });
    });

    test('the lock file holds the server pid', () => {
      assert.equal(lockPid(), server!.child.pid);
    });

    test('credits granted through the CLI show on GET /me at once', async () => {
      const granted = await ok(env, 'credits', 'grant', '--user', String(owner.id), '--product', 'scraping', '--amount', '250');
      assert.deepEqual(granted, { user: owner.id, product: 'scraping', balance: 250 });
      const me = await getMe(server!, owner.token);
      assert.equal(me.body.user.credits, 250);
      assert.equal(me.body.user.balances.scraping, 250);
      assert.equal(lockPid(), server!.child.pid, 'the server still holds the lock');
    });

    test('a user created through the CLI can call the server; a token revoked through the CLI is refused at once', async () => {
      const user = await ok(env, 'users', 'create', '--name', 'Live', '--email', 'live@example.com');
      assert.deepEqual(Object.keys(user), ['id', 'token', 'secret_key']);
      assert.equal((await getMe(server!, user.token)).body.user.email, 'live@example.com');

      const second = await ok(env, 'tokens', 'create', '--user', String(user.id), '--name', 'ci');
      assert.match(second.token, SANCTUM_TOKEN);
      assert.equal(second.id, Number(second.token.split('|')[0]));
      assert.equal((await getMe(server!, second.token)).status, 200);

      assert.deepEqual(await ok(env, 'tokens', 'revoke', '--token-id', String(second.id)), { revoked: second.id });
      const refused = await getMe(server!, second.token);
      assert.equal(refused.status, 401);
      assert.deepEqual(refused.body, { message: 'Unauthenticated.' });
      assert.equal((await getMe(server!, user.token)).status, 200, 'the user\'s other token still works');

      const tokens = await ok(env, 'tokens', 'list', '--user', String(user.id));
      assert.deepEqual(
        tokens.map((t: any) => [t.id, t.name, t.revoked_at !== null]),
        [
          [Number(user.token.split('|')[0]), 'default', false],
          [second.id, 'ci', true],
        ],
      );
      assert.ok(tokens.every((t: any) => !('token' in t) && !('token_hash' in t)), 'no token material is listed');

      const again = await gleaner(env, 'tokens', 'revoke', '--token-id', String(second.id), '--json');
      assert.equal(again.code, 1);
      assert.deepEqual(again.json, { error: `There is no active token ${second.id}.` });
    });

    test('plans renew resets to the plan\'s credits: unspent credits do not roll over', async () => {
      const assigned = await ok(env, 'plans', 'assign', '--user', String(owner.id), '--product', 'extraction', '--plan', 'growth');
      assert.deepEqual(assigned, { user: owner.id, product: 'extraction', plan: 'growth', balance: 55_000 });
      await ok(env, 'credits', 'grant', '--user', String(owner.id), '--product', 'extraction', '--amount', '500');
      const renewed = await ok(env, 'plans', 'renew', '--user', String(owner.id));
      assert.deepEqual(renewed, { renewed: [{ user: owner.id, product: 'extraction', plan: 'growth', balance: 55_000 }] });
      assert.equal((await getMe(server!, owner.token)).body.user.balances.extraction, 55_000);
    });

    test('plans renew with an empty filter is a usage error (exit 2) and renews nobody', async () => {
      // The owner's extraction plan (growth) is assigned above; spend it down so a renewal would show.
      await ok(env, 'credits', 'set', '--user', String(owner.id), '--product', 'extraction', '--amount', '321');
      const cases: Array<{ args: string[]; error: RegExp }> = [
        { args: ['plans', 'renew', '--user', ''], error: /^--user is required\.$/ },
        { args: ['plans', 'renew', '--user', '  '], error: /^--user is required\.$/ },
        { args: ['plans', 'renew', '--user=abc'], error: /^--user must be a whole number \(got "abc"\)\.$/ },
        { args: ['plans', 'renew', '--user', '0'], error: /^--user must be at least 1\.$/ },
        { args: ['plans', 'renew', '--product', ' '], error: /^--product is required\.$/ },
        { args: ['plans', 'renew', '--product', 'gold'], error: /^--product must be one of scraping, extraction, blockchain \(got "gold"\)\.$/ },
        { args: ['plans', 'renew', '--users', '2'], error: /--users/ },
        { args: ['credits', 'audit', '--user', ''], error: /^--user is required\.$/ },
      ];
      const results = await Promise.all(cases.map((c) => gleaner(env, ...c.args, '--json')));
      results.forEach((result, i) => {
        assert.equal(result.code, 2, `${cases[i].args.join(' ')}: ${result.stdout}${result.stderr}`);
        assert.match(result.json.error, cases[i].error, cases[i].args.join(' '));
      });
      const show = await ok(env, 'credits', 'show', '--user', String(owner.id));
      assert.equal(balanceOf(show, 'extraction'), 321, 'no renewal ran');
      assert.equal((await getMe(server!, owner.token)).body.user.balances.extraction, 321);
    });

    test('the operations\' limits, worded for the command line', async () => {
      const user = String(owner.id);
      const cases: Array<{ args: string[]; error: string }> = [
        { args: ['tokens', 'revoke', '--token-id', '0'], error: '--token-id must be at least 1.' },
        { args: ['credits', 'grant', '--user', user, '--product', 'scraping', '--amount', '0'], error: '--amount must be at least 1.' },
        { args: ['credits', 'set', '--user', user, '--product', 'scraping', '--amount', '1000000000001'], error: '--amount must be at most 1000000000000.' },
        { args: ['prices', 'set', '--operation', 'teleport', '--credits', '1'], error: '--operation must be one of ' },
      ];
      const results = await Promise.all(cases.map((c) => gleaner(env, ...c.args, '--json')));
      results.forEach((result, i) => {
        assert.equal(result.code, 2, `${cases[i].args.join(' ')}: ${result.stdout}${result.stderr}`);
        assert.ok(result.json.error.startsWith(cases[i].error), `${cases[i].args.join(' ')}: ${result.json.error}`);
      });
      assert.equal((await getMe(server!, owner.token)).body.user.balances.scraping, 250, 'nothing changed');
    });

    test('users link-stripe and unlink-stripe through the server: one customer per user, shown by users list', async () => {
      // The user created by the test above.
      const other = (await ok(env, 'users', 'list')).find((u: any) => u.email === 'live@example.com');
      assert.deepEqual(await ok(env, 'users', 'link-stripe', '--user', String(owner.id), '--customer', 'cus_Owner1'), {
        user: owner.id,
        stripe_customer: 'cus_Owner1',
      });
      // Linking again is harmless; a customer already linked to another user is refused.
      assert.deepEqual(await ok(env, 'users', 'link-stripe', '--user', String(owner.id), '--customer', 'cus_Owner1'), {
        user: owner.id,
        stripe_customer: 'cus_Owner1',
      });
      const taken = await gleaner(env, 'users', 'link-stripe', '--user', String(other.id), '--customer', 'cus_Owner1', '--json');
      assert.equal(taken.code, 1);
      assert.deepEqual(taken.json, { error: `The Stripe customer cus_Owner1 is already linked to user ${owner.id}.` });
      const bad = await gleaner(env, 'users', 'link-stripe', '--user', String(other.id), '--customer', 'sk_live_123', '--json');
      assert.equal(bad.code, 2);
      assert.match(bad.json.error, /^--customer must be a Stripe customer id such as cus_\w+ \(got "sk_live_123"\)\.$/);
      const missing = await gleaner(env, 'users', 'link-stripe', '--user', String(other.id), '--json');
      assert.equal(missing.code, 2);
      assert.deepEqual(missing.json, { error: '--customer is required.' });

      const listed = await ok(env, 'users', 'list');
      assert.equal(listed.find((u: any) => u.id === owner.id).stripe_customer, 'cus_Owner1');
      assert.equal(listed.find((u: any) => u.id === other.id).stripe_customer, null);

      assert.deepEqual(await ok(env, 'users', 'unlink-stripe', '--user', String(owner.id)), { user: owner.id, stripe_customer: null, previous: 'cus_Owner1' });
      assert.deepEqual(await ok(env, 'users', 'unlink-stripe', '--user', String(owner.id)), { user: owner.id, stripe_customer: null, previous: null });
      // Free again: the other user may take it.
      assert.deepEqual(await ok(env, 'users', 'link-stripe', '--user', String(other.id), '--customer', 'cus_Owner1'), {
        user: other.id,
        stripe_customer: 'cus_Owner1',
      });
    });

    test('the admin socket runs one command per connection, whatever the client sends after it', async () => {
      const socket = net.connect(path.join(dataDir, 'admin.sock'));
      socket.setEncoding('utf8');
      let reply = '';
      const line = JSON.stringify({ argv: ['credits', 'grant', '--user', String(owner.id), '--product', 'blockchain', '--amount', '7'] });
      socket.on('connect', () => socket.write(line + '\n'));
      socket.on('data', (chunk) => {
        // A client that keeps talking after its command must not get it run twice.
        if (!reply) socket.write('{"argv":["credits","show"]}\n');
        reply += chunk;
      });
      socket.on('error', () => {});
      await once(socket, 'close');
      assert.deepEqual(JSON.parse(reply), { ok: true, result: { user: owner.id, product: 'blockchain', balance: 7 } });
      await sleep(200);
      assert.equal((await getMe(server!, owner.token)).body.user.balances.blockchain, 7);
    });

    test('bad arguments exit 2 with a clear message; an unknown user exits 1', async () => {
      const user = String(owner.id);
      const cases: Array<{ args: string[]; code: number; error: RegExp }> = [
        { args: ['credits', 'frobnicate'], code: 2, error: /^Unknown command "credits frobnicate"\./ },
        { args: ['credits', 'grant', '--product', 'scraping', '--amount', '5'], code: 2, error: /^--user is required\.$/ },
        { args: ['credits', 'grant', '--user', user, '--product', 'scraping', '--amount', 'lots'], code: 2, error: /^--amount must be a whole number \(got "lots"\)\.$/ },
        { args: ['credits', 'grant', '--user', user, '--product', 'scraping', '--amount', '-5'], code: 2, error: /--amount/ },
        { args: ['credits', 'grant', '--user', user, '--product', 'gold', '--amount', '5'], code: 2, error: /^--product must be one of scraping, extraction, blockchain \(got "gold"\)\.$/ },
        { args: ['plans', 'assign', '--user', user, '--product', 'scraping', '--plan', 'platinum'], code: 2, error: /^--plan must be one of starter, growth, business, enterprise, scale for scraping\.$/ },
        { args: ['credits', 'show', '--user', user, '--bogus', 'x'], code: 2, error: /--bogus/ },
        { args: ['credits', 'show', '--user', '999999'], code: 1, error: /^There is no user 999999\.$/ },
        { args: ['users', 'create', '--name', 'Dup', '--email', 'LIVE@example.com'], code: 1, error: /already taken/ },
      ];
      const results = await Promise.all(cases.map((c) => gleaner(env, ...c.args, '--json')));
      results.forEach((result, i) => {
        const { args, code, error } = cases[i];
        assert.equal(result.code, code, `${args.join(' ')}: ${result.stdout}${result.stderr}`);
        assert.deepEqual(Object.keys(result.json ?? {}), ['error'], `${args.join(' ')} prints {"error": ...}: ${result.stdout}`);
        assert.match(result.json.error, error, args.join(' '));
        assert.doesNotMatch(result.json.error, /\n\s+at /, 'no stack trace');
      });
    });

    test('without --json an error goes to stderr, the output stays empty', async () => {
      const result = await gleaner(env, 'credits', 'show', '--user', 'abc');
      assert.equal(result.code, 2);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, /--user must be a whole number \(got "abc"\)\./);
    });

    test('the server held the lock throughout and stops cleanly, releasing it', async () => {
      clearInterval(lockWatch);
      assert.deepEqual(lockSamples, [], 'the lock never named another process');
      assert.equal(lockPid(), server!.child.pid);
      assert.equal(await server!.stop(), 0);
      assert.equal(existsSync(lockFile), false);
      server = undefined;
    });
  });

  describe('with no server running (the CLI opens the database itself)', () => {
    let userId: number;

    test('migrate has nothing left to apply', async () => {
      assert.deepEqual(await ok(env, 'migrate'), { applied: [] });
    });

    test('users create prints {"id","token","secret_key"} and releases the lock', async () => {
      const created = await ok(env, 'users', 'create', '--name', 'A', '--email', 'a@example.com');
      assert.deepEqual(Object.keys(created), ['id', 'token', 'secret_key']);
      assert.ok(Number.isInteger(created.id) && created.id > 0);
      assert.match(created.token, SANCTUM_TOKEN);
      assert.ok(created.secret_key.length >= 48, `secret key of ${created.secret_key.length} characters`);
      assert.equal(existsSync(lockFile), false, 'the CLI released the lock on exit');
      userId = created.id;
    });

    test('credits grant, plans assign, credits set (spent), plans renew, credits show', async () => {
      const user = String(userId);
      assert.deepEqual(await ok(env, 'credits', 'grant', '--user', user, '--product', 'scraping', '--amount', '100'), {
        user: userId,
        product: 'scraping',
        balance: 100,
      });
      // The plan's credits replace the balance (case-insensitive plan name).
      assert.deepEqual(await ok(env, 'plans', 'assign', '--user', user, '--product', 'scraping', '--plan', 'Starter'), {
        user: userId,
        product: 'scraping',
        plan: 'starter',
        balance: 10_000,
      });
      // Spent down to 1234, as requests would.
      assert.deepEqual(await ok(env, 'credits', 'set', '--user', user, '--product', 'scraping', '--amount', '1234'), {
        user: userId,
        product: 'scraping',
        balance: 1234,
      });
      const renewed = await ok(env, 'plans', 'renew', '--user', user, '--product', 'scraping');
      assert.deepEqual(renewed, { renewed: [{ user: userId, product: 'scraping', plan: 'starter', balance: 10_000 }] });
      const show = await ok(env, 'credits', 'show', '--user', user);
      assert.equal(show.user, userId);
      assert.deepEqual(show.balances, [
        { product: 'blockchain', balance: 0, held: 0, plan: null },
        { product: 'extraction', balance: 0, held: 0, plan: null },
        { product: 'scraping', balance: 10_000, held: 0, plan: 'starter' },
      ]);
    });

    test('users link-stripe works directly on the database; an unknown user exits 1', async () => {
      assert.deepEqual(await ok(env, 'users', 'link-stripe', '--user', String(userId), '--customer', 'cus_Direct2'), {
        user: userId,
        stripe_customer: 'cus_Direct2',
      });
      const listed = await ok(env, 'users', 'list');
      assert.equal(listed.find((u: any) => u.id === userId).stripe_customer, 'cus_Direct2');
      const unknown = await gleaner(env, 'users', 'link-stripe', '--user', '4242', '--customer', 'cus_Direct3', '--json');
      assert.equal(unknown.code, 1);
      assert.deepEqual(unknown.json, { error: 'There is no user 4242.' });
    });

    test('tokens create, rotate and revoke', async () => {
      const created = await ok(env, 'tokens', 'create', '--user', String(userId), '--name', 'deploy');
      assert.match(created.token, SANCTUM_TOKEN);
      assert.equal(created.user, userId);
      const rotated = await ok(env, 'tokens', 'rotate', '--token-id', String(created.id));
      assert.match(rotated.token, SANCTUM_TOKEN);
      assert.deepEqual([rotated.user, rotated.replaced], [userId, created.id]);
      assert.notEqual(rotated.id, created.id);
      const tokens = await ok(env, 'tokens', 'list', '--user', String(userId));
      const byId = new Map(tokens.map((t: any) => [t.id, t]));
      assert.ok((byId.get(created.id) as any).revoked_at, 'the old token is revoked');
      assert.deepEqual([(byId.get(rotated.id) as any).name, (byId.get(rotated.id) as any).revoked_at], ['deploy', null]);
      const again = await gleaner(env, 'tokens', 'rotate', '--token-id', String(created.id), '--json');
      assert.equal(again.code, 1);
      assert.deepEqual(await ok(env, 'tokens', 'revoke', '--token-id', String(rotated.id)), { revoked: rotated.id });
    });

    test('prices set and list', async () => {
      assert.deepEqual(await ok(env, 'prices', 'set', '--operation', 'search', '--credits', '4'), { operation: 'search', credits: 4 });
      const prices = await ok(env, 'prices', 'list');
      assert.ok(Array.isArray(prices) && prices.length >= 10);
      assert.deepEqual(
        prices.find((p: any) => p.operation === 'search'),
        { operation: 'search', credits: 4 },
      );
    });

    test('credits audit finds the ledger and the balances in agreement', async () => {
      const audit = await ok(env, 'credits', 'audit');
      assert.equal(audit.checked, 3 * 3, 'three users, three products each');
      assert.deepEqual(audit.mismatches, []);
    });

    test('errors: an unknown user exits 1 with {"error": ...}', async () => {
      const unknown = await gleaner(env, 'credits', 'grant', '--user', '4242', '--product', 'scraping', '--amount', '5', '--json');
      assert.equal(unknown.code, 1);
      assert.deepEqual(unknown.json, { error: 'There is no user 4242.' });
    });

    test('an unknown command exits 2 before any database is opened', async () => {
      // Even with a DATABASE_URL nobody answers, the answer is the usage, not a connection error.
      const result = await gleaner({ ...env, DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none' }, 'credits', 'give', '--json');
      assert.equal(result.code, 2);
      assert.match(result.json.error, /^Unknown command "credits give"\.\n\nUsage: gleaner/);
      assert.equal(existsSync(lockFile), false);
    });
  });

  describe('a second start on the same DATA_DIR', () => {
    test('prints no owner account, and the first owner token still works', async () => {
      server = await serve(env);
      assert.doesNotMatch(server.output(), /API token|secret key/);
      const me = await getMe(server, owner.token);
      assert.equal(me.status, 200);
      assert.equal(me.body.user.credits, 250);
      assert.equal(await server.stop(), 0);
      server = undefined;
    });
  });
});

/** PostgreSQL from TEST_DATABASE_URL or the local server. libpq defaults the user name to the
 *  account's; node-postgres only reads $USER, so the URL gets it explicitly. */
function postgresAdminUrl(): string {
  const url = new URL(process.env.TEST_DATABASE_URL || 'postgres://127.0.0.1:5432/postgres');
  if (!url.username) url.username = os.userInfo().username;
  return url.toString();
}

async function postgresSkipReason(adminUrl: string): Promise<string | false> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return false;
  } catch (error) {
    return `PostgreSQL is not reachable at ${adminUrl} (${(error as Error).message}); set TEST_DATABASE_URL to run these tests`;
  } finally {
    await client.end().catch(() => {});
  }
}

const adminUrl = postgresAdminUrl();
const postgresSkip = await postgresSkipReason(adminUrl);

describe('gleaner CLI on PostgreSQL (DATABASE_URL)', { skip: postgresSkip }, () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-cli-pg-'));
  let database: { url: string; drop(): Promise<void> };
  let env: Record<string, string>;

  before(async () => {
    database = await freshPostgresDatabase(adminUrl);
    env = { DATA_DIR: dataDir, DATABASE_URL: database.url };
  });

  after(async () => {
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('migrate, users create, credits grant and show work directly', async () => {
    assert.deepEqual(await ok(env, 'migrate'), { applied: listMigrations().map((m) => m.version) });
    const created = await ok(env, 'users', 'create', '--name', 'Pg', '--email', 'pg@example.com');
    assert.match(created.token, SANCTUM_TOKEN);
    assert.ok(created.secret_key.length >= 48);
    assert.deepEqual(await ok(env, 'credits', 'grant', '--user', String(created.id), '--product', 'blockchain', '--amount', '77'), {
      user: created.id,
      product: 'blockchain',
      balance: 77,
    });
    const show = await ok(env, 'credits', 'show', '--user', String(created.id));
    assert.equal(balanceOf(show, 'blockchain'), 77);
    assert.equal(balanceOf(show, 'scraping'), 0);
    assert.deepEqual((await ok(env, 'credits', 'audit')).mismatches, []);
  });

  test('nothing is written to DATA_DIR: no embedded database, no lock', () => {
    assert.equal(existsSync(path.join(dataDir, 'pg')), false);
    assert.equal(existsSync(path.join(dataDir, 'gleaner.lock')), false);
  });
});
