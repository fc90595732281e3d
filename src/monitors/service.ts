/**
 * Wallet monitors as the rest of the service sees them (docs/blockchain.md, "Monitors"): create,
 * read, resume and delete monitors; and, in the server process, the background loops: one
 * follower per chain that has active monitors (a lease makes it one across every process), and
 * the delivery of the monitors' events.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../storage/db.ts';
import type { CreditLedger } from '../credits/ledger.ts';
import type { Prices } from '../credits/prices.ts';
import type { OutboundClient } from '../outbound/types.ts';
import type { ChainClient } from '../adapters/chain/client.ts';
import type { WebhookSecrets } from '../webhooks/secrets.ts';
import { WebhookEventStore } from '../webhooks/events.ts';
import { WEBHOOK_TIMEOUT_MS } from '../webhooks/delivery.ts';
import { ChainFollower, type StepResult } from './follower.ts';
import { MonitorDelivery, type DeliveryEvent } from './delivery.ts';
import { collectDailyFees } from './fees.ts';
import { MonitorStore, type MonitorRow, type NewMonitor } from './store.ts';

export interface MonitorSettings {
  /** How often each chain's head is polled, and due deliveries looked for (CHAIN_POLL_MS). */
  pollMs: number;
  retryBaseSeconds: number;
  /** 0: this process follows no chain and delivers nothing (JOB_CONCURRENCY=0). */
  enabled: boolean;
}

export interface MonitorServiceDeps {
  db: Database;
  ledger: CreditLedger;
  prices: Prices;
  outbound: OutboundClient;
  secrets: WebhookSecrets;
  settings: MonitorSettings;
  /** The configured chain's client; undefined when the chain is not configured. */
  chain: (name: string) => ChainClient | undefined;
  logger?: FastifyBaseLogger;
}

/** What a follower step tells its watchers (the bench counts, tests wait on it). */
export interface FollowerEvent extends StepResult {
  chain: string;
}

/** Deliveries in flight per process, one monitor each. */
const DELIVERY_CONCURRENCY = 4;

export class MonitorService {
  readonly store: MonitorStore;
  readonly #deps: MonitorServiceDeps;
  readonly #owner = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly #followers = new Map<string, ChainFollower>();
  readonly #delivery: MonitorDelivery;
  readonly #stopping = new AbortController();
  readonly #followerListeners = new Set<(event: FollowerEvent) => void>();
  #loops: Promise<void>[] = [];
  #wakeDelivery: (() => void) | undefined;

  constructor(deps: MonitorServiceDeps) {
    this.#deps = deps;
    this.store = new MonitorStore(deps.db);
    this.#delivery = new MonitorDelivery({
      db: deps.db,
      ledger: deps.ledger,
      prices: deps.prices,
      outbound: deps.outbound,
      secrets: deps.secrets,
      events: new WebhookEventStore(deps.db),
      owner: this.#owner,
      leaseMs: WEBHOOK_TIMEOUT_MS + 5_000,
      retryBaseSeconds: deps.settings.retryBaseSeconds,
      concurrency: DELIVERY_CONCURRENCY,
      logger: deps.logger,
    });
  }

  /** Creates a monitor (it watches from the block after the current head). */
  create(monitor: NewMonitor): Promise<MonitorRow> {
    return this.#deps.db.transaction((tx) => this.store.create(tx, monitor));
  }

  delete(id: string, userId: number): Promise<boolean> {
    return this.#deps.db.transaction((tx) => this.store.delete(tx, id, userId));
  }

  async resume(id: string, userId: number): Promise<MonitorRow | undefined> {
    const row = await this.store.resume(id, userId);
    this.#wakeDelivery?.();
    return row;
  }

  observeFollower(listener: (event: FollowerEvent) => void): () => void {
    this.#followerListeners.add(listener);
    return () => this.#followerListeners.delete(listener);
  }

  /** Watches delivery attempts (metrics), with the chain of each event's monitor. */
  observeDeliveries(listener: (event: DeliveryEvent) => void): () => void {
    return this.#delivery.observe(listener);
  }

  /** Starts following and delivering (the server process; never the command line). */
  start(): void {
    if (!this.#deps.settings.enabled || this.#loops.length > 0) return;
    this.#loops = [this.#loop('follow', () => this.#followAll()), this.#loop('deliver', () => this.#delivery.pass(this.#stopping.signal), (wake) => (this.#wakeDelivery = wake))];
  }

  /** Stops both loops, waits for the step and deliveries in hand, and gives the chains' leases up. */
  async stop(): Promise<void> {
    this.#stopping.abort(new Error('The server is shutting down.'));
    this.#wakeDelivery?.();
    await Promise.all(this.#loops);
    await Promise.all([...this.#followers.values()].map((follower) => follower.release().catch(() => {})));
  }

  /** Runs `work` every poll interval until stopped; `onWake` receives a function that ends the current wait early. */
  async #loop(name: string, work: () => Promise<unknown>, onWake?: (wake: () => void) => void): Promise<void> {
    const { pollMs } = this.#deps.settings;
    while (!this.#stopping.signal.aborted) {
      try {
        await work();
      } catch (error) {
        if (this.#stopping.signal.aborted) break;
        this.#deps.logger?.warn({ err: error, loop: name }, 'chain monitors: step failed, retrying at the next poll');
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollMs);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        onWake?.(done);
        this.#stopping.signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  /** One step of every chain that has active monitors and is configured. */
  async #followAll(): Promise<void> {
    const chains = await this.#deps.db.query<{ chain: string }>(`SELECT DISTINCT chain FROM chain_monitors WHERE status = 'active'`);
    await Promise.all(
      chains.map(async ({ chain }) => {
        const follower = this.#follower(chain);
        if (!follower) return;
        const context = { signal: this.#stopping.signal, log: this.#deps.logger, requestId: `monitors:${chain}` };
        const result = await follower.step(context, () => collectDailyFees(this.#deps, chain));
        if (result.events > 0) this.#wakeDelivery?.();
        for (const listener of this.#followerListeners) {
          try {
            listener({ ...result, chain });
          } catch {
            // A watcher's failure is not the follower's.
          }
        }
      }),
    );
  }

  #follower(chain: string): ChainFollower | undefined {
    let follower = this.#followers.get(chain);
    if (follower) return follower;
    const client = this.#deps.chain(chain);
    if (!client) return undefined;
    follower = new ChainFollower({
      db: this.#deps.db,
      chain,
      kind: client.info.kind,
      reader: client,
      owner: this.#owner,
      // Short enough that a process that died is replaced quickly; a slow step is safe anyway,
      // since the cursor only moves from where the step found it.
      leaseMs: Math.max(5_000, 10 * this.#deps.settings.pollMs),
      logger: this.#deps.logger,
    });
    this.#followers.set(chain, follower);
    return follower;
  }
}
