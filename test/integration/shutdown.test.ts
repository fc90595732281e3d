/**
 * Graceful shutdown: requests in flight finish within the grace period, or are aborted and
 * released; and `gleaner serve` drains first (SHUTDOWN_DRAIN_MS: /ready 503 while still serving).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config.ts';
import { startService } from '../../src/app.ts';
import { createPlatformServices } from '../../src/services.ts';
import { TEST_ENDPOINTS } from '../support/work-endpoint.ts';
import { DRAINING_REASON } from '../../src/http/readiness.ts';

test('shutdown lets short requests finish and releases the holds of those it aborts', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-shutdown-'));
  // The grace is long enough for the 600 ms request on a loaded machine (its statements share the
  // embedded database with the job workers' polling), and far shorter than the 30 s one.
  const env = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', SHUTDOWN_GRACE_MS: '1500', SEARCH_ENGINES: 'bing' };
  try {
    const service = await startService(loadConfig(env), { endpoints: TEST_ENDPOINTS, logger: false });
    const user = await service.services.accounts.createUser({ name: 'S', email: 's@example.com' });
    await service.services.ledger.grant(user.id, 'scraping', 10);
    const call = (body: unknown) =>
      fetch(service.url + '/v1/test/work', {
        method: 'POST',
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(
        (r) => r.status,
        () => 'no answer',
      );
    const quick = call({ cost: 2, delay_ms: 600 });
    const slow = call({ cost: 3, delay_ms: 30_000 });
    // Both are in flight (received, held) when the shutdown begins; the quick one ends within the grace.
    await new Promise((r) => setTimeout(r, 250));
    const started = Date.now();
    await service.close();
    const took = Date.now() - started;
    assert.ok(took < 10_000, `shutdown waited ${took} ms for the slow request`);
    assert.equal(await quick, 200);
    assert.notEqual(await slow, 200);

    const reopened = await createPlatformServices(loadConfig(env));
    try {
      assert.equal(await reopened.ledger.balance(user.id, 'scraping'), 8, 'only the finished request was charged');
      const holds = await reopened.db.query('SELECT 1 FROM credit_holds');
      assert.equal(holds.length, 0);
    } finally {
      await reopened.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a request still authenticating when the shutdown begins is stopped with the others', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-shutdown-auth-'));
  const env = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', SHUTDOWN_GRACE_MS: '200', SEARCH_ENGINES: 'bing' };
  try {
    const service = await startService(loadConfig(env), { endpoints: TEST_ENDPOINTS, logger: false });
    const user = await service.services.accounts.createUser({ name: 'A', email: 'a@example.com' });
    await service.services.ledger.grant(user.id, 'scraping', 10);
    // A token look-up that hangs (a database stalled for this one query).
    const accounts = service.services.accounts;
    accounts.authenticate = () => new Promise(() => {});
    const pending = fetch(service.url + '/v1/test/work', {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: '{}',
    }).then(
      async (r) => ({ status: r.status, body: await r.json() }),
      () => 'no answer',
    );
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await service.close();
    assert.ok(Date.now() - started < 5_000, 'the shutdown waited for the stalled authentication');
    assert.deepEqual(await pending, { status: 503, body: { message: 'The server is busy, please retry shortly.' } });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

// --- the drain of `gleaner serve` (a real process, real signals) ---

const BIN = new URL('../../bin/gleaner', import.meta.url).pathname;
/** One DATA_DIR for the drain tests: the embedded database's first start is the slow one. */
const drainDataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-drain-'));
after(() => rmSync(drainDataDir, { recursive: true, force: true }));

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

interface Answer {
  status: number;
  connection: string | undefined;
  body: any;
}

/** A GET on a connection of its own (no agent, no keep-alive pool): a new connection each time. */
function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent: false, headers: { accept: 'application/json', ...headers } }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, connection: response.headers.connection, body: JSON.parse(text) }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

interface Serving {
  child: ChildProcess;
  url: string;
  output(): string;
  exited: Promise<number | null>;
}

/** `gleaner serve` on the drain tests' DATA_DIR, once it answers /health. */
async function serve(env: Record<string, string>): Promise<Serving> {
  const port = await freePort();
  const childEnv: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info', OCR_WORKERS: '1', SEARCH_ENGINES: 'bing', ...env, DATA_DIR: drainDataDir, PORT: String(port), HOST: '127.0.0.1' };
  delete childEnv.DATABASE_URL;
  delete childEnv.REDIS_URL;
  const child = spawn(process.execPath, [BIN, 'serve'], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (d) => (output += d));
  child.stderr!.setEncoding('utf8').on('data', (d) => (output += d));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`gleaner serve exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`gleaner serve did not answer /health within 120 s:\n${output}`);
    }
    if (await get(`${url}/health`).then((answer) => answer.status === 200, () => false)) break;
    await sleep(100);
  }
  return { child, url, output: () => output, exited };
}

async function until(what: string, condition: () => Promise<boolean>, server: Serving): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await condition().catch(() => false))) {
    if (server.child.exitCode !== null) throw new Error(`${what}: the server exited with ${server.child.exitCode}:\n${server.output()}`);
    if (Date.now() > deadline) throw new Error(`${what}: not within 120 s:\n${server.output()}`);
    await sleep(50);
  }
}

const isDraining = async (server: Serving) => {
  const ready = await get(`${server.url}/ready`);
  return ready.status === 503 && ready.body.message === DRAINING_REASON;
};

test('serve drains on SIGTERM: /ready says 503 while new requests are still answered, then the process exits', async () => {
  // Long enough for the calls below on a loaded machine; the process exits once it is over.
  const server = await serve({ SHUTDOWN_DRAIN_MS: '8000' });
  try {
    const token = /API token: +(\S+)/.exec(server.output())?.[1];
    assert.ok(token, `the first start printed the owner's token:\n${server.output()}`);
    await until('/ready 200 (the pools started)', async () => (await get(`${server.url}/ready`)).status === 200, server);

    server.child.kill('SIGTERM');
    await until('/ready 503 (draining)', () => isDraining(server), server);
    assert.deepEqual((await get(`${server.url}/ready`)).body, { status: 'unavailable', message: DRAINING_REASON });
    // New connections are accepted and served as usual; each answer closes its connection.
    const me = await get(`${server.url}/me`, { authorization: `Bearer ${token}` });
    assert.equal(me.status, 200, JSON.stringify(me.body));
    assert.equal(me.body.user.email, 'owner@localhost');
    assert.equal(me.connection, 'close');
    assert.equal((await get(`${server.url}/health`)).status, 200);
    assert.doesNotMatch(server.output(), /"msg":"shutting down"/, 'the close began only after the calls made during the drain');

    assert.equal(await server.exited, 0, server.output());
    const output = server.output();
    assert.match(output, /"msg":"draining: \/ready answers 503/);
    assert.ok(output.indexOf('"msg":"shutting down"') > output.indexOf('"msg":"draining'), 'the close came after the drain');
    await assert.rejects(get(`${server.url}/health`), 'the listener is closed');
  } finally {
    server.child.kill('SIGKILL');
  }
});

test('a second signal during the drain closes at once', async () => {
  // A drain this long would outlast the test: only the second signal can end it.
  const server = await serve({ SHUTDOWN_DRAIN_MS: '600000' });
  try {
    server.child.kill('SIGTERM');
    await until('/ready 503 (draining)', () => isDraining(server), server);
    server.child.kill('SIGINT');
    const code = await Promise.race([server.exited, sleep(60_000, undefined, { ref: false }).then(() => 'still running 60 s after the second signal')]);
    assert.equal(code, 0, server.output());
    assert.match(server.output(), /"signal":"SIGINT"[^\n]*"msg":"shutting down"/);
  } finally {
    server.child.kill('SIGKILL');
  }
});
