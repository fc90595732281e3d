/**
 * The service container: everything a request handler may use, built once from the config.
 * Routes reach the database, the network and the balances only through these objects.
 */
import type { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './storage/db.ts';
import { migrate } from './storage/migrate.ts';
import { AccountStore, TOKEN_REVOKED_CHANNEL } from './accounts/store.ts';
import { CreditLedger } from './credits/ledger.ts';
import { Prices, seedPrices } from './credits/prices.ts';
import { HistoryStore } from './history/store.ts';
import { MemoryThrottleStore, RedisThrottleStore, type ThrottleStore } from './throttle/limiter.ts';
import type { ClosableOutboundClient } from './outbound/client.ts';
import { outboundCapability } from './outbound/config.ts';
import { createCapabilities, type Capabilities } from './capabilities.ts';
import type { OperationStores } from './operations/index.ts';
import { UpstreamReportStore } from './upstream-report/store.ts';
import { WebhookSecrets } from './webhooks/secrets.ts';
import { JobService } from './jobs/service.ts';
import type { Upstream } from './adapters/kit/runtime.ts';
import { siteUpstream } from './adapters/site/index.ts';
import { MonitorService } from './monitors/service.ts';

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
  /** Every upstream call and circuit change, merged into the database every few seconds (GET /admin/upstreams). */
  upstreamReport: UpstreamReportStore;
  /** Each user's webhook signing secret (GET /me/webhook-secret; the job engine signs with it). */
  webhookSecrets: WebhookSecrets;
  /** Crawls and batches: durable jobs on the queue in the database, and their webhooks (src/jobs). */
  jobs: JobService;
  /** Wallet monitors of the blockchain product: one follower per chain, signed deliveries (src/monitors). */
  monitors: MonitorService;
  close(): Promise<void>;
}

export async function createPlatformServices(config: Config, options: { migrate?: boolean; listen?: boolean; logger?: FastifyBaseLogger } = {}): Promise<Services> {
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
    if (options.migrate !== false) await migrate(db).then(() => seedPrices(db));
    // Closed (its last flush) after the capabilities stop calling upstreams, before the database.
    const upstreamReport = new UpstreamReportStore(db, { logger: options.logger });
    opened.push(() => upstreamReport.close());
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
      // A lost connection is retried by ioredis; each failure is logged (at most once every 10 s
      // while it lasts), never swallowed. Without a listener it would be an "Unhandled error event".
      let lastWarning = 0;
      client.on('error', (error: Error) => {
        if (Date.now() - lastWarning < 10_000) return;
        lastWarning = Date.now();
        options.logger?.error({ err: error.message }, 'Redis connection error (ioredis retries)');
      });
      client.on('ready', () => {
        if (lastWarning > 0) options.logger?.warn({}, 'Redis connection restored');
        lastWarning = 0;
      });
      opened.push(() => client.disconnect());
      await client.connect();
      redis = client;
    }
    const throttleStore = redis ? new RedisThrottleStore(redis, `${config.redisPrefix}throttle:`) : new MemoryThrottleStore();
    opened.push(() => throttleStore.close());
    const outbound = outboundCapability.start(config.outbound);
    opened.push(() => outboundCapability.close(outbound));
    const capabilities = await createCapabilities(config, { outbound, redis, db, logger: options.logger });
    let site: Upstream | undefined;
    opened.push(() => capabilities.close());
    opened.push(capabilities.observeUpstreams((event) => upstreamReport.record(event)));
    const prices = new Prices(db);
    const webhookSecrets = new WebhookSecrets(db);
    const jobs = await JobService.open({
      db,
      databaseUrl: config.databaseUrl,
      settings: config.jobs,
      ledger,
      prices,
      web: () => capabilities.web(),
        site: () =>
        (site ??= siteUpstream(capabilities.runtime, {
          checkUrl: (target) => {
            if (capabilities.web().isBlocked(target.href)) throw new Error(`${target.hostname} is a blocked domain`);
          },
        })),
      outbound,
      secrets: webhookSecrets,
      logger: options.logger,
    });
    // Stopped before the capabilities it fetches with, and the database under its queue.
    opened.push(() => jobs.stop(config.shutdownGraceMs));
    const monitors = new MonitorService({
      db,
      ledger,
      prices,
      outbound,
      secrets: webhookSecrets,
      settings: { pollMs: config.jobs.chainPollMs, retryBaseSeconds: config.jobs.webhookRetryBaseSeconds, enabled: config.jobs.concurrency > 0 },
      chain: (name) => capabilities.chain(name),
      logger: options.logger,
    });
    // Started and stopped with the job workers: the server runs it, the command line never does.
    jobs.attachMonitors(monitors);
    return {
      config,
      db,
      accounts,
      ledger,
      prices,
      operations: { db, accounts, ledger, prices },
      upstreamReport,
      history: new HistoryStore(db),
      webhookSecrets,
      jobs,
      monitors,
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
