/**
 * The service container: everything a request handler may use, built once from the config.
 * Routes reach the database, the network and the balances only through these objects.
 */
import type { Redis } from 'ioredis';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './storage/db.ts';
import { migrate } from './storage/migrate.ts';
import { AccountStore } from './accounts/store.ts';
import { CreditLedger } from './credits/ledger.ts';
import { Prices } from './credits/prices.ts';
import { HistoryStore } from './history/store.ts';
import { MemoryThrottleStore, RedisThrottleStore, type ThrottleStore } from './throttle/limiter.ts';
import { createOutboundClient, type ClosableOutboundClient } from './outbound/client.ts';
import { createCapabilities, type Capabilities } from './capabilities.ts';

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
  close(): Promise<void>;
}

export async function createPlatformServices(config: Config, options: { migrate?: boolean } = {}): Promise<Services> {
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    if (options.migrate !== false) await migrate(db);
    let redis: Redis | undefined;
    if (config.redisUrl) {
      const { Redis } = await import('ioredis');
      redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: true });
      await redis.connect();
    }
    const throttleStore = redis ? new RedisThrottleStore(redis, `${config.redisPrefix}throttle:`) : new MemoryThrottleStore();
    const outbound = createOutboundClient(config.outbound);
    const capabilities = await createCapabilities(config, { outbound, redis });
    return {
      config,
      db,
      accounts: new AccountStore(db),
      ledger: new CreditLedger(db, { holdTtlSeconds: config.holdTtlSeconds }),
      prices: new Prices(db),
      history: new HistoryStore(db),
      throttle: throttleStore,
      redis,
      outbound,
      capabilities,
      async close() {
        await capabilities.close();
        await outbound.close();
        await throttleStore.close();
        redis?.disconnect();
        await db.close();
      },
    };
  } catch (error) {
    await db.close().catch(() => {});
    throw error;
  }
}
