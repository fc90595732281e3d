/**
 * Scaled mode: two server processes share one PostgreSQL database and one Redis. Balances,
 * holds and throttles hold across processes; a killed process's holds are swept by the other.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { createPlatformServices, type Services } from '../../src/services.ts';
import { freshPostgresDatabase } from '../support/service.ts';
import { spawnServer, waitUntil, type ServerProcess } from '../support/processes.ts';

const adminUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
const skip = !adminUrl || !redisUrl ? 'set TEST_DATABASE_URL and TEST_REDIS_URL (a PostgreSQL server and a Redis) to run the scaled tier' : false;

describe('two server processes on PostgreSQL + Redis', { skip }, () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let services: Services;
  let servers: ServerProcess[] = [];

  before(async () => {
    database = await freshPostgresDatabase(adminUrl!);
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl!,
      REDIS_PREFIX: `gleaner-scaled-${Math.random().toString(36).slice(2)}:`,
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'gleaner-scaled-')),
      HOLD_TTL_SECONDS: '2',
      HOLD_SWEEP_INTERVAL_MS: '200',
      // Far beyond the test: only the revocation broadcast can make a server refuse a cached token.
      TOKEN_CACHE_MS: '600000',
    };
    services = await createPlatformServices(loadConfig(env)); // migrates before the servers start
    servers = await Promise.all([spawnServer(env), spawnServer(env)]);
  });

  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await services?.close();
    await database?.drop();
  });

  async function user(scraping: number) {
    const created = await services.accounts.createUser({ name: 'Scaled', email: `s${Math.random().toString(36).slice(2)}@example.com` });
    if (scraping) await services.ledger.grant(created.id, 'scraping', scraping);
    return created;
  }

  const post = (server: ServerProcess, route: string, token: string, body: unknown, method = 'POST') =>
    fetch(server.url + route, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  test('200 concurrent requests split over both processes against a balance of 50: exactly 50 succeed', async () => {
    const u = await user(50);
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => post(servers[i % 2], '/v1/test/work', u.token, { delay_ms: 5 })));
    const ok = answers.filter((a) => a.status === 200).length;
    assert.equal(ok, 50);
    assert.equal(answers.filter((a) => a.status === 403).length, 150);
    assert.equal(await services.ledger.balance(u.id, 'scraping'), 0);
    for (const row of await services.ledger.recompute(u.id)) assert.equal(row.stored, row.ledger);
  });

  test('the PATCH /me throttle is shared: 6 attempts a minute over both processes', async () => {
    const u = await user(0);
    const statuses = [];
    for (let i = 0; i < 7; i++) statuses.push((await post(servers[i % 2], '/me', u.token, { email: 'x' }, 'PATCH')).status);
    assert.deepEqual(statuses, [422, 422, 422, 422, 422, 422, 429]);
  });

  test('a token revoked by another process is refused by every server at once, though it is cached', async () => {
    const u = await user(0);
    const me = (server: ServerProcess) => fetch(server.url + '/me', { headers: { authorization: `Bearer ${u.token}` } }).then((r) => r.status);
    assert.deepEqual(await Promise.all(servers.map(me)), [200, 200]);
    await services.accounts.revokeToken(Number(u.token.split('|')[0]));
    await waitUntil(async () => (await Promise.all(servers.map(me))).every((s) => s === 401), 10_000, 'both servers to refuse the token');
  });

  test('a rotated token is refused by every server at once; its successor works', async () => {
    const u = await user(0);
    const me = (server: ServerProcess, token: string) => fetch(server.url + '/me', { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
    assert.deepEqual(await Promise.all(servers.map((s) => me(s, u.token))), [200, 200]);
    const rotated = await services.accounts.rotateToken(Number(u.token.split('|')[0]));
    assert.ok(rotated);
    await waitUntil(async () => (await Promise.all(servers.map((s) => me(s, u.token)))).every((s) => s === 401), 10_000, 'both servers to refuse the old token');
    assert.deepEqual(await Promise.all(servers.map((s) => me(s, rotated.token))), [200, 200]);
  });

  test('a server whose listening connection was cut listens again, and revocations reach it', async () => {
    const listeners = async () => {
      const [row] = await services.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN gleaner_token_revoked' AND pid <> pg_backend_pid()`,
      );
      return row.n;
    };
    // Ours (this test's services) and the two servers'.
    await waitUntil(async () => (await listeners()) === 3, 10_000, 'three listeners');
    await services.db.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN gleaner_token_revoked'`);
    await waitUntil(async () => (await listeners()) === 3, 20_000, 'every process to listen again');
    const u = await user(0);
    const me = (server: ServerProcess) => fetch(server.url + '/me', { headers: { authorization: `Bearer ${u.token}` } }).then((r) => r.status);
    assert.deepEqual(await Promise.all(servers.map(me)), [200, 200]);
    await services.accounts.revokeToken(Number(u.token.split('|')[0]));
    await waitUntil(async () => (await Promise.all(servers.map(me))).every((s) => s === 401), 10_000, 'both servers to refuse the token');
  });

  test('a process killed with SIGKILL while holding credits: the other returns them after the TTL', async () => {
    const u = await user(30);
    const victim = servers[1];
    const pending = Array.from({ length: 2 }, () => post(victim, '/v1/test/work', u.token, { cost: 7, delay_ms: 60_000 }).catch(() => null));
    await waitUntil(async () => (await services.ledger.balance(u.id, 'scraping')) === 16, 10_000, 'two holds');
    victim.child.kill('SIGKILL');
    await once(victim.child, 'exit');
    await Promise.all(pending);
    await waitUntil(async () => (await services.ledger.balance(u.id, 'scraping')) === 30, 15_000, 'the survivor to sweep the holds');
    for (const row of await services.ledger.recompute(u.id)) assert.equal(row.stored, row.ledger);
    const r = await post(servers[0], '/v1/test/work', u.token, { cost: 3 });
    assert.equal(r.status, 200);
    assert.equal(await services.ledger.balance(u.id, 'scraping'), 27);
  });
});
