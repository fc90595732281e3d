/**
 * A server killed with SIGKILL while holding credits loses none of them: after the hold TTL the
 * next server on the same embedded database returns them, and the ledger still agrees.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { admin, spawnServer, waitUntil } from '../support/processes.ts';

test('SIGKILL while holding credits: the holds come back after their TTL (embedded PGlite)', { timeout: 90_000 }, async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-crash-'));
  const env = { DATA_DIR: dataDir, HOLD_TTL_SECONDS: '2', HOLD_SWEEP_INTERVAL_MS: '200' };
  try {
    const first = await spawnServer(env);
    const user = await admin(dataDir, 'users', 'create', '--name', 'Crash', '--email', 'crash@example.com');
    await admin(dataDir, 'credits', 'grant', '--user', String(user.id), '--product', 'scraping', '--amount', '20');

    const inFlight = Array.from({ length: 3 }, () =>
      fetch(first.url + '/v1/test/work', {
        method: 'POST',
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ cost: 5, delay_ms: 60_000 }),
      }).catch(() => null),
    );
    const scraping = async () => (await admin(dataDir, 'credits', 'show', '--user', String(user.id))).balances.find((b: any) => b.product === 'scraping');
    await waitUntil(async () => (await scraping()).held === 15, 10_000, 'three holds');
    assert.equal((await scraping()).balance, 5);

    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    await Promise.all(inFlight);
    const lock = JSON.parse(readFileSync(path.join(dataDir, 'gleaner.lock'), 'utf8'));
    assert.equal(lock.pid, first.child.pid, 'the dead process left its lock');

    const second = await spawnServer(env);
    try {
      await waitUntil(async () => (await scraping()).balance === 20, 15_000, 'the holds to be released');
      assert.equal((await scraping()).held, 0);
      const audit = await admin(dataDir, 'credits', 'audit');
      assert.deepEqual(audit.mismatches, []);
      // The recovered server still serves and bills.
      const r = await fetch(second.url + '/v1/test/work', {
        method: 'POST',
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ cost: 2 }),
      });
      assert.equal(r.status, 200);
      assert.equal((await scraping()).balance, 18);
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
