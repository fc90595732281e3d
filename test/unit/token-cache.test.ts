import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AccountStore } from '../../src/accounts/store.ts';
import { sha256Hex } from '../../src/accounts/secrets.ts';
import type { Database } from '../../src/storage/db.ts';

const SECRET = 'a'.repeat(40);
const TOKEN = `7|${SECRET}`;

/** A database holding one token (id 7, user 3) that counts the token look-ups it answers. */
function tokenDatabase() {
  let lookups = 0;
  const db = {
    kind: 'postgres',
    async query(sql: string) {
      if (sql.includes('FROM api_tokens WHERE')) {
        lookups += 1;
        return [{ id: 7, user_id: 3, token_hash: sha256Hex(SECRET) }];
      }
      return [];
    },
  } as unknown as Database;
  return { db, lookups: () => lookups };
}

test('a token looked up once is served from the cache', async () => {
  const { db, lookups } = tokenDatabase();
  const accounts = new AccountStore(db, { tokenCacheMs: 60_000 });
  assert.deepEqual(await accounts.authenticate(TOKEN), { id: 3, tokenId: 7 });
  await accounts.authenticate(TOKEN);
  assert.equal(lookups(), 1);
});

test('while revocations cannot arrive (caching off) every request asks the database; back on, the cache starts empty', async () => {
  const { db, lookups } = tokenDatabase();
  const accounts = new AccountStore(db, { tokenCacheMs: 60_000 });
  await accounts.authenticate(TOKEN);
  accounts.setCaching(false);
  await accounts.authenticate(TOKEN);
  await accounts.authenticate(TOKEN);
  assert.equal(lookups(), 3, 'the cached entry was dropped and nothing was cached while off');
  accounts.setCaching(true);
  await accounts.authenticate(TOKEN);
  await accounts.authenticate(TOKEN);
  assert.equal(lookups(), 4);
});

test('forget drops the token at once', async () => {
  const { db, lookups } = tokenDatabase();
  const accounts = new AccountStore(db, { tokenCacheMs: 60_000 });
  await accounts.authenticate(TOKEN);
  accounts.forget(7);
  await accounts.authenticate(TOKEN);
  assert.equal(lookups(), 2);
});
