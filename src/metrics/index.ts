/**
 * Prometheus metrics (prom-client, the de-facto Node client: text format, histograms, process
 * metrics). One registry per server, so several servers in one process (tests) do not mix.
 * Counters are fed by hooks the lower layers offer (the pipeline's `settled`, the upstream
 * runtime's events); gauges read their sources at scrape time, so an idle server does nothing.
 * This module imports only types from the rest of the code: the HTTP layer hands it its sources.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RuntimeEvent } from '../core/upstream-events.ts';
import type { JobEvent } from '../core/job-events.ts';
import { ConfigError, type EnvReader } from '../core/env.ts';
import { MonitorMetrics, type MonitorCounts } from './monitors.ts';
import { seriesIn } from './series.ts';

export interface MetricsSettings {
  /** A separate listener serving only /metrics (off by default). */
  port?: number;
  /** Serve /metrics on the main port too, to `Authorization: Bearer <token>` only. */
  token?: string;
}

/** METRICS_PORT and METRICS_TOKEN; with neither, there is no /metrics at all. */
export function metricsSettings(env: EnvReader): MetricsSettings {
  const port = env.integer('METRICS_PORT', { min: 0 });
  if (port !== undefined && port > 65_535) throw new ConfigError(`METRICS_PORT must be a port number (got "${port}").`, 'METRICS_PORT');
  const token = env.text('METRICS_TOKEN');
  if (token !== undefined && token.length < 16) throw new ConfigError('METRICS_TOKEN must be at least 16 characters long.', 'METRICS_TOKEN');
  return { port, token };
}

/** What the gauges read at scrape time. */
export interface MetricsSources {
  pools(): Array<{ pool: string; workers: number; busy: number; queued: number; recycled?: number; memoryBytes?: number; memoryKills?: number; userWaits?: number; sandboxed?: boolean }>;
  /** Credit holds of requests in flight (or left by a stopped process until swept). */
  holds(): Promise<{ count: number; credits: number }>;
  /**
   * The circuits that are not closed and clean, as the breaker's store keeps them (shared by
   * every replica in scaled mode): `openUntil` > 0 while open or half-open. Optional: without it
   * the circuit gauge follows this process's circuit events only, and a replica whose circuit
   * another replica closed would go on saying open.
   */
  circuits?(): Promise<Map<string, { openUntil: number }>>;
  /** Jobs per status (all processes: the database's count), and queue tasks waiting and running. */
  jobs?(): Promise<{ byStatus: Array<{ status: string; jobs: number }>; queues: Array<{ queue: string; queued: number; active: number }> }>;
  /** Wallet monitors per chain and status (all processes: the database's count). */
  monitors?: MonitorCounts;
}

/** Seconds; from a cached search (~ms) to a 30-page scanned PDF (~a minute). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export class GleanerMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'method' | 'route' | 'status'>;
  readonly #latency: Histogram<'method' | 'route'>;
  readonly #credits: Counter<'product' | 'outcome'>;
  readonly #upstreams: Counter<'upstream' | 'operation' | 'verdict'>;
  readonly #upstreamLatency: Histogram<'upstream' | 'operation'>;
  readonly #circuitOpen: Gauge<'upstream'>;
  readonly #jobPages: Counter<'outcome'>;
  readonly #webhooks: Counter<'outcome'>;
  /** Upstreams whose circuit has a series (never dropped: a closed circuit reads 0, not nothing). */
  readonly #circuitSeen: Set<string>;
  /** The wallet monitors' follower steps and deliveries (./monitors.ts). */
  readonly monitors: MonitorMetrics;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'gleaner_' });
    const { counter, histogram } = seriesIn(this.registry);
    const poolSeries = (kind: 'gauge' | 'counter', name: string, help: string, read: (stats: ReturnType<MetricsSources['pools']>[number]) => number | undefined) => {
      const each = (record: (labels: { pool: string }, value: number) => void) => {
        for (const stats of sources.pools()) {
          const value = read(stats);
          if (value !== undefined) record({ pool: stats.pool }, value);
        }
      };
      const labelNames = ['pool'] as const;
      if (kind === 'gauge') return new Gauge({ name, help, labelNames, registers, collect: function () { this.reset(); each((labels, value) => this.set(labels, value)); } });
      return new Counter({ name, help, labelNames, registers, collect: function () { this.reset(); each((labels, value) => this.inc(labels, value)); } });
    };
    this.#requests = counter('gleaner_http_requests_total', 'HTTP requests answered, by route template and status.', ['method', 'route', 'status']);
    this.#latency = histogram('gleaner_http_request_duration_seconds', 'Time to answer, by route template.', ['method', 'route'], LATENCY_BUCKETS);
    this.#credits = counter('gleaner_credits_total', 'Credits of billed requests: charged on success, released (given back) otherwise.', ['product', 'outcome']);
    this.#upstreams = counter(
      'gleaner_upstream_calls_total',
      'Upstream calls by upstream, operation and verdict (ok, empty, not_found, blocked, changed, timeout, unreachable, suspended, aborted).',
      ['upstream', 'operation', 'verdict'],
    );
    this.#upstreamLatency = histogram(
      'gleaner_upstream_duration_seconds',
      'Upstream call time, by upstream and operation (calls that reached the upstream or tried to: not suspended or aborted ones).',
      ['upstream', 'operation'],
      LATENCY_BUCKETS,
    );
    const known = new Set<string>();
    this.#circuitSeen = known;
    this.#circuitOpen = new Gauge({
      name: 'gleaner_upstream_circuit_open',
      help: "1 while the upstream's circuit is open or half-open (its calls are suspended), 0 once closed.",
      labelNames: ['upstream'],
      registers,
      // The breaker's store, when given, is the truth: another replica may have opened or closed a
      // circuit without this process hearing of it. Upstreams already reported and no longer open
      // go to 0; a store that does not answer leaves the values the events set.
      async collect() {
        if (!sources.circuits) return;
        let states: Map<string, { openUntil: number }>;
        try {
          states = await sources.circuits();
        } catch {
          return;
        }
        for (const upstream of known) if (!(states.get(upstream)?.openUntil ?? 0)) this.set({ upstream }, 0);
        for (const [upstream, state] of states) {
          if (state.openUntil > 0) {
            known.add(upstream);
            this.set({ upstream }, 1);
          }
        }
      },
    });
    // The pools' own figures, read at scrape time: gauges of what is now, counters of their totals.
    poolSeries('gauge', 'gleaner_pool_workers', 'Workers of each started pool (pdf threads, OCR engines, browser instances, web page conversion processes).', (p) => p.workers);
    poolSeries('gauge', 'gleaner_pool_busy_workers', 'Workers of each pool running a job.', (p) => p.busy);
    poolSeries('gauge', 'gleaner_pool_queue_depth', 'Jobs waiting for a worker, per pool.', (p) => p.queued);
    poolSeries('counter', 'gleaner_pool_recycled_workers_total', 'Workers replaced to give their memory back (OCR engines after their job budget, web conversion processes past their memory high-water mark).', (p) => p.recycled);
    poolSeries('gauge', 'gleaner_pool_memory_bytes', "Resident memory of a pool's processes, where measured: the headless browser's whole Chromium process tree (browser, renderers, helpers).", (p) => p.memoryBytes);
    poolSeries('gauge', 'gleaner_pool_sandboxed', "1 when a pool's processes run in their sandbox, 0 when they run without it: the browser pool's Chromium (BROWSER_SANDBOX; the start log says why it is not sandboxed).", (p) => (p.sandboxed === undefined ? undefined : p.sandboxed ? 1 : 0));
    poolSeries('counter', 'gleaner_pool_memory_kills_total', 'Work ended for passing its memory limit: browser renderers killed past BROWSER_PAGE_MEMORY_MB (their requests fail, uncharged).', (p) => p.memoryKills);
    poolSeries('counter', 'gleaner_pool_user_waits_total', "Tasks that waited while a worker was free because their user already kept its bound of workers busy (POOL_USER_CONCURRENCY, BROWSER_USER_CONCURRENCY): one user's flood held back.", (p) => p.userWaits);
    this.#jobPages = counter(
      'gleaner_job_pages_total',
      'Pages of crawl and batch jobs worked on by this process: delivered (and billed), failed (the target could not be read) or skipped (the job ended first).',
      ['outcome'],
    );
    this.monitors = new MonitorMetrics(this.registry, sources.monitors);
    this.#webhooks = counter('gleaner_webhook_deliveries_total', 'Webhook delivery attempts by outcome: delivered, retry (to be tried again), refused (private address), expired (24 h of failures).', ['outcome']);
    if (sources.jobs) {
      let jobs: ReturnType<NonNullable<MetricsSources['jobs']>> | null = null;
      const readJobs = () => (jobs ??= sources.jobs!().finally(() => setImmediate(() => (jobs = null))));
      new Gauge({
        name: 'gleaner_jobs',
        help: 'Crawl and batch jobs kept (7 days), by status.',
        labelNames: ['status'],
        registers,
        async collect() {
          this.reset();
          for (const row of (await readJobs()).byStatus) this.set({ status: row.status }, row.jobs);
        },
      });
      new Gauge({
        name: 'gleaner_job_queue_depth',
        help: 'Tasks of the job queue (job starts, pages, webhook deliveries) waiting or running, across every process.',
        labelNames: ['queue', 'state'],
        registers,
        async collect() {
          this.reset();
          for (const row of (await readJobs()).queues) {
            this.set({ queue: row.queue, state: 'queued' }, row.queued);
            this.set({ queue: row.queue, state: 'active' }, row.active);
          }
        },
      });
    }
    // Both gauges come from one query per scrape.
    let holds: Promise<{ count: number; credits: number }> | null = null;
    const readHolds = () => (holds ??= sources.holds().finally(() => setImmediate(() => (holds = null))));
    new Gauge({
      name: 'gleaner_credit_holds',
      help: 'Credit holds outstanding.',
      registers,
      async collect() {
        this.set((await readHolds()).count);
      },
    });
    new Gauge({
      name: 'gleaner_credit_holds_credits',
      help: 'Credits held by the outstanding holds.',
      registers,
      async collect() {
        this.set((await readHolds()).credits);
      },
    });
  }

  request(method: string, route: string, status: number, seconds: number): void {
    this.#requests.inc({ method, route, status: String(status) });
    this.#latency.observe({ method, route }, seconds);
  }

  settled(event: { product: string; charged: number; released: number }): void {
    if (event.charged > 0) this.#credits.inc({ product: event.product, outcome: 'charged' }, event.charged);
    if (event.released > 0) this.#credits.inc({ product: event.product, outcome: 'released' }, event.released);
  }

  /**
   * One upstream runtime event: a call counts by its verdict; a circuit change sets the upstream's
   * gauge (an upstream whose circuit never changed has no series). Calls that say nothing about
   * the upstream's speed stay out of the latency histogram: `aborted` (the caller left) and
   * `suspended` (not called at all, the circuit is open).
   */
  upstream(event: RuntimeEvent): void {
    if (event.type === 'circuit') {
      this.#circuitSeen.add(event.upstream);
      this.#circuitOpen.set({ upstream: event.upstream }, event.state === 'closed' ? 0 : 1);
      return;
    }
    this.#upstreams.inc({ upstream: event.upstream, operation: event.operation, verdict: event.verdict });
    if (event.verdict !== 'aborted' && event.verdict !== 'suspended') {
      this.#upstreamLatency.observe({ upstream: event.upstream, operation: event.operation }, event.durationMs / 1000);
    }
  }

  /** A job page or a webhook delivery finished (jobs by status are the `gleaner_jobs` gauge). */
  job(event: JobEvent): void {
    if (event.type === 'page') this.#jobPages.inc({ outcome: event.outcome });
    else this.#webhooks.inc({ outcome: event.outcome });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
