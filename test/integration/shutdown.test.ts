/** Graceful shutdown: requests in flight finish within the grace period, or are aborted and released. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { startService } from '../../src/app.ts';
import { createPlatformServices } from '../../src/services.ts';
import { TEST_ENDPOINTS } from '../support/work-endpoint.ts';

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
