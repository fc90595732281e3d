/**
 * The wallet monitors' metrics (docs/blockchain.md, "Monitors"), per chain: how far each chain's
 * follower is behind the head, the blocks it processed and the reorgs it walked back, the
 * deliveries of the monitors' events, and the monitors by status. Fed by the monitor service's
 * follower steps and delivery attempts; the monitors by status are read at scrape time.
 */
import { Gauge, type Counter, type Registry } from 'prom-client';
import { seriesIn } from './series.ts';

/** A follower step, as the monitor service reports it. */
export interface MonitorStepEvent {
  chain: string;
  /** This process held the chain's lease and ran the step. */
  led: boolean;
  blocks: number;
  reorg: boolean;
  /** The head the step read and the last block processed after it; absent when it read no head. */
  head?: number;
  processed?: number;
}

/** One delivery attempt of a monitor's event. */
export interface MonitorDeliveryEvent {
  chain: string;
  outcome: 'delivered' | 'retry' | 'refused' | 'expired';
}

/** Monitors per chain and status, every process's (the database's count). */
export type MonitorCounts = () => Promise<Array<{ chain: string; status: string; monitors: number }>>;

export class MonitorMetrics {
  readonly #lag: Gauge<'chain'>;
  readonly #blocks: Counter<'chain'>;
  readonly #reorgs: Counter<'chain'>;
  readonly #events: Counter<'chain' | 'outcome'>;

  constructor(registry: Registry, counts?: MonitorCounts) {
    const registers = [registry];
    const { counter, gauge } = seriesIn(registry);
    this.#lag = gauge(
      'gleaner_monitor_head_lag_blocks',
      "Blocks between the chain's head and the last block its follower processed, as of the follower's last step; reported by the process holding the chain's lease only.",
      ['chain'],
    );
    this.#blocks = counter('gleaner_monitor_blocks_total', "Blocks the chain's follower processed (read, matched and committed) in this process.", ['chain']);
    this.#reorgs = counter('gleaner_monitor_reorgs_total', "Chain reorganisations the chain's follower found and walked back in this process.", ['chain']);
    this.#events = counter(
      'gleaner_monitor_events_total',
      "Delivery attempts of the monitors' events by outcome: delivered, retry (failed, to be tried again), failed (given up: a refused address, or 24 hours of failures).",
      ['chain', 'outcome'],
    );
    if (counts) {
      new Gauge({
        name: 'gleaner_monitors',
        help: 'Wallet monitors by chain and status (active, paused_no_credits, paused).',
        labelNames: ['chain', 'status'],
        registers,
        async collect() {
          const rows = await counts();
          this.reset();
          for (const row of rows) this.set({ chain: row.chain, status: row.status }, row.monitors);
        },
      });
    }
  }

  /** A follower step: its blocks and reorg counted, the lag set where this process leads the chain. */
  step(event: MonitorStepEvent): void {
    if (!event.led) {
      // Another process follows the chain: the lag is its to report, and ours would go stale.
      this.#lag.remove({ chain: event.chain });
      return;
    }
    if (event.blocks > 0) this.#blocks.inc({ chain: event.chain }, event.blocks);
    if (event.reorg) this.#reorgs.inc({ chain: event.chain });
    if (event.head !== undefined && event.processed !== undefined) this.#lag.set({ chain: event.chain }, Math.max(0, event.head - event.processed));
  }

  delivery(event: MonitorDeliveryEvent): void {
    const outcome = event.outcome === 'refused' || event.outcome === 'expired' ? 'failed' : event.outcome;
    this.#events.inc({ chain: event.chain, outcome });
  }
}
