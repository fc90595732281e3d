/**
 * Scaled mode: the per-user bound on the shared pools holds across replicas. Two server
 * processes share one PostgreSQL database and one Redis, each with two conversion processes and
 * the default bound of one per user; user A sends two large pages to each. A's leases in Redis
 * (one sorted set per user and pool) never count more than one, though each replica alone would
 * let A run one; user B's small page is served meanwhile; every lease is gone once A is answered.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { loadConfig } from '../../src/config.ts';
import { createPlatformServices, type Services } from '../../src/services.ts';
import { RedisPoolLeases } from '../../src/throttle/pool-leases.ts';
import { freshPostgresDatabase } from '../support/service.ts';
import { spawnServer, type ServerProcess } from '../support/processes.ts';
import { articlePage, largeArticlePage } from '../support/web-fixtures.ts';

const adminUrl = process.env.TEST_DATABASE_URL;
const redisUrl = process.env.TEST_REDIS_URL;
const skip = !adminUrl || !redisUrl ? 'set TEST_DATABASE_URL and TEST_REDIS_URL (a PostgreSQL server and a Redis) to run the scaled tier' : false;

describe('the per-user pool bound across two server processes', { skip }, () => {
  let database: Awaited<ReturnType<typeof freshPostgresDatabase>>;
  let services: Services;
  let servers: ServerProcess[] = [];
  let site: http.Server;
  let siteUrl: string;
  let largeServed = 0;
  let redis: Redis;
  let leases: RedisPoolLeases;
  const prefix = `gleaner-scaled-${Math.random().toString(36).slice(2)}:`;

  before(async () => {
    const large = largeArticlePage(8 * 1024 * 1024);
    const small = articlePage();
    site = http.createServer((request, response) => {
      const large_ = request.url === '/large';
      if (large_) largeServed++;
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(large_ ? large : small);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    database = await freshPostgresDatabase(adminUrl!);
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl!,
      REDIS_PREFIX: prefix,
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'gleaner-scaled-')),
      OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
      WEB_FORMAT_PROCESSES: '2',
      // Far below what the large page needs: each of A's pages holds its process this long.
      WEB_FORMAT_TIMEOUT_MS: '3000',
    };
    services = await createPlatformServices(loadConfig(env)); // migrates before the servers start
    servers = await Promise.all([spawnServer(env, { startTimeoutMs: 60_000 }), spawnServer(env, { startTimeoutMs: 60_000 })]);
    redis = new Redis(redisUrl!, { lazyConnect: true });
    await redis.connect();
    leases = new RedisPoolLeases(redis, { prefix });
  });

  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await services?.close();
    await database?.drop();
    redis?.disconnect();
    await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
  });

  async function user() {
    const created = await services.accounts.createUser({ name: 'Scaled', email: `s${Math.random().toString(36).slice(2)}@example.com` });
    await services.ledger.grant(created.id, 'scraping', 100);
    return created;
  }

  const convert = (server: ServerProcess, token: string, page: string) =>
    fetch(`${server.url}/v1/web`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${siteUrl}${page}`, format: 'markdown' }),
    }).then(async (response) => ({ status: response.status, text: await response.text() }));

  test("A's conversions over both replicas hold one lease at a time; B is served meanwhile", async (t) => {
    const a = await user();
    const b = await user();
    // Both replicas' processes are warm.
    for (const server of servers) assert.equal((await convert(server, b.token, '/small')).status, 200);

    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await leases.held('web', String(a.id)));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();

    let aDone = 0;
    const floods = [0, 1, 0, 1].map((i) =>
      convert(servers[i]!, a.token, '/large').then((answer) => {
        aDone++;
        return answer;
      }),
    );
    // All four pages fetched, and one of them converting under A's lease.
    while (largeServed < 4 || peak === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const started = performance.now();
    const forB = await convert(servers[1]!, b.token, '/small');
    const bMs = Math.round(performance.now() - started);
    const aDoneWhenB = aDone;
    const answers = await Promise.all(floods);
    sampling = false;
    await sampler;
    t.diagnostic(`B's page under A's flood over two replicas: ${bMs} ms; A's answers ${answers.map((x) => x.status).join(', ')}; A's leases at most ${peak}`);

    assert.equal(forB.status, 200, forB.text);
    assert.ok(aDoneWhenB <= 1, `${aDoneWhenB} of A's 4 pages were answered before B's`);
    assert.equal(peak, 1, 'A held one conversion lease at a time over both replicas (the bound is 1: half of two processes)');
    assert.equal(await leases.held('web', String(a.id)), 0, "A's leases were released with its pages");
    assert.equal(await leases.held('web', String(b.id)), 0);
  });
});
