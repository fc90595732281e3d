/**
 * The service container: everything a request handler may use, built once from the config.
 * Routes reach the database, the network and the balances only through these objects.
 */
import type { Redis } from 'ioredis';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './storage/db.ts';
import { migrate } from './storage/migrate.ts';
import { AccountStore, TOKEN_REVOKED_CHANNEL } from './accounts/store.ts';
import { CreditLedger } from './credits/ledger.ts';
import { Prices } from './credits/prices.ts';
import { HistoryStore } from './history/store.ts';
import { MemoryThrottleStore, RedisThrottleStore, type ThrottleStore } from './throttle/limiter.ts';
import type { ClosableOutboundClient } from './outbound/client.ts';
import { outboundCapability } from './outbound/config.ts';
import { createCapabilities, type Capabilities } from './capabilities.ts';
import type { OperationStores } from './operations/index.ts';

export interface Services {
  config: Config;
  db: Database;
  accounts: AccountStore;
  ledger: CreditLedger;
  prices: Prices;
  history: HistoryStore;
  throttle: ThrottleStore;
  redis?: Redis;
  /** The only way out to the network. */
  outbound: ClosableOutboundClient;
  /** PDF, OCR, search and browser: started on first use (or warmed by `serve`). */
  capabilities: Capabilities;
  /** The stores the operator's operations (src/operations) work on: the admin API's only way to money. */
  operations: OperationStores;
  close(): Promise<void>;
}

export async function createPlatformServices(config: Config, options: { migrate?: boolean; listen?: boolean } = {}): Promise<Services> {
  // What has been opened so far, closed in reverse if a later step fails: a start that fails
  // (a bad setting, an unreachable Redis) must not leave a connection that keeps the process alive.
  const opened: Array<() => Promise<void> | void> = [];
  // Each is closed once, all of them even if one fails; the first failure is reported.
  const closeOpened = async () => {
    let failure: unknown;
    for (const close of opened.splice(0).reverse()) {
      await Promise.resolve().then(close).catch((error: unknown) => (failure ??= error));
    }
    if (failure !== undefined) throw failure;
  };
  try {
    const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
    opened.push(() => db.close());
    if (options.migrate !== false) await migrate(db);
    const accounts = new AccountStore(db, { tokenCacheMs: config.tokenCacheMs });
    const ledger = new CreditLedger(db, { holdTtlSeconds: config.holdTtlSeconds });
    opened.push(() => ledger.stop());
    if (options.listen !== false && db.listen) {
      // Tokens revoked by another process (a CLI, another server) leave this one's cache at once.
      const unlisten = await db.listen(TOKEN_REVOKED_CHANNEL, (id) => accounts.forget(Number(id)), (listening) => accounts.setCaching(listening));
      opened.push(unlisten);
    }
    let redis: Redis | undefined;
    if (config.redisUrl) {
      const { Redis } = await import('ioredis');
      const client = new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: true });
      // A lost connection is retried by ioredis and reported by the commands that fail meanwhile;
      // without a listener each reconnection attempt would also be an "Unhandled error event".
      client.on('error', () => {});
      opened.push(() => client.disconnect());
      await client.connect();
      redis = client;
    }
    const throttleStore = redis ? new RedisThrottleStore(redis, `${config.redisPrefix}throttle:`) : new MemoryThrottleStore();
    opened.push(() => throttleStore.close());
    const outbound = outboundCapability.start(config.outbound);
    opened.push(() => outboundCapability.close(outbound));
    const capabilities = await createCapabilities(config, { outbound, redis, db });
    opened.push(() => capabilities.close());
    const prices = new Prices(db);
    return {
      config,
      db,
      accounts,
      ledger,
      prices,
      operations: { db, accounts, ledger, prices },
      history: new HistoryStore(db),
      throttle: throttleStore,
      redis,
      outbound,
      capabilities,
      close: closeOpened,
    };
  } catch (error) {
    await closeOpened().catch(() => {});
    throw error;
  }
}
