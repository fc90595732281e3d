/**
 * The job workers: starting a job, fetching its pages, and delivering its webhooks. Every task is
 * idempotent, so a task run twice (a worker that died after the work, before the queue heard of
 * it) changes nothing the second time.
 *
 * Money follows the pipeline's rule, page by page: hold the page's price before fetching, capture
 * it only once the page is stored as delivered, release it otherwise. A page is stored before its
 * hold is captured: a process that dies in between leaves a delivered page whose hold the sweeper
 * returns (a page given away), never a page charged and lost. Each attempt holds under its own
 * request id, and the next attempt releases the one before it, so a dead worker's hold is returned
 * at once, not only when it expires.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Job } from 'pg-boss';
import type { FastifyBaseLogger } from 'fastify';
import type { Database, Queryable } from '../storage/db.ts';
import type { CreditLedger } from '../credits/ledger.ts';
import { price, type Prices } from '../credits/prices.ts';
import type { WebOutcome, WebScraper } from '../adapters/web/index.ts';
import type { OutputFormat } from '../adapters/web/index.ts';
import type { OutboundClient } from '../outbound/types.ts';
import type { Upstream } from '../adapters/kit/runtime.ts';
import type { CallContext } from '../adapters/kit/types.ts';
import { readRobots, robotsAdapter, robotsUrlFor, type RobotsRules } from '../adapters/site/robots.ts';
import { discoverSitemapUrls } from '../adapters/site/discover.ts';
import { deliverWebhook, WEBHOOK_RETRY_WINDOW_SECONDS } from '../webhooks/delivery.ts';
import type { WebhookEventStore } from '../webhooks/events.ts';
import type { WebhookSecrets } from '../webhooks/secrets.ts';
import { PAGE_RETRY_LIMIT, QUEUES, type JobQueue } from './queue.ts';
import type { JobSettings } from './settings.ts';
import { FINAL_STATUSES, type FoundPage, type JobRow, type JobStore } from './store.ts';
import { ADMISSION_BUDGET_MS, canonicalPages, crawlRules, type CrawlParams, type CrawlRules } from './crawl-rules.ts';
import type { JobMetrics } from './metrics.ts';

/** Sitemap URLs and files a crawl reads at most. */
const SITEMAP_LIMITS = { maxUrls: 50_000, maxFiles: 50 };
/** Tries of a crawl's start whose site cannot be read before the crawl fails. */
const START_ATTEMPTS = 3;
/** Links of one page that may join the crawl: a link farm must not flood the job's table. */
const MAX_LINKS_PER_PAGE = 1_000;
/** Jobs kept in memory at most, and other origins' robots.txt (per job and origin). */
const MAX_CACHED_JOBS = 1_000;
const MAX_CACHED_ROBOTS = 1_000;
/** What an unreadable robots.txt means for now: nothing may be fetched. */
const FORBID_ALL = 'User-agent: *\nDisallow: /\n';
/** How long a fetch may hold a host's slot before another process may take it (past any fetch's deadline). */
const HOST_LEASE_MS = 120_000;
/** How often a page waiting for a host's slot looks again. */
const HOST_POLL_MS = 100;

export interface PageTask {
  jobId: string;
  key: string;
}

/** What the job service and its workers both run on. */
export interface JobEnvironment {
  db: Database;
  settings: JobSettings;
  ledger: CreditLedger;
  prices: Prices;
  web: () => WebScraper;
  /** Robots.txt and sitemaps: arbitrary sites, so no retries and no breaker. */
  site: () => Upstream;
  outbound: OutboundClient;
  secrets: WebhookSecrets;
  logger?: FastifyBaseLogger;
}

export interface WorkerDeps extends JobEnvironment {
  store: JobStore;
  queue: JobQueue;
  events: WebhookEventStore;
  metrics: JobMetrics;
}

export class JobWorker {
  readonly #deps: WorkerDeps;
  /** Fetches in flight here, per job: a cancel aborts them at once (other replicas stop at delivery). */
  readonly #inFlight = new Map<string, Set<AbortController>>();
  /** Each running job's rules (robots.txt read, patterns compiled), kept while it runs here. */
  readonly #rules = new Map<string, CrawlRules>();
  /** Jobs running here, as created (see `#job`). */
  readonly #jobs = new Map<string, JobRow>();
  /** Robots.txt of origins other than a crawl's start origin, per job and origin. */
  readonly #otherRobots = new Map<string, Promise<RobotsRules>>();
  readonly #stopping = new AbortController();

  constructor(deps: WorkerDeps) {
    this.#deps = deps;
  }

  /** Starts the workers of every queue (none when JOB_CONCURRENCY is 0). */
  async start(): Promise<void> {
    const { queue, settings } = this.#deps;
    if (settings.concurrency === 0) return;
    await queue.work<{ jobId: string }>(QUEUES.start, { localConcurrency: 1 }, (task) => this.startJob(task));
    await queue.work<PageTask>(QUEUES.page, { localConcurrency: settings.concurrency, groupConcurrency: settings.hostConcurrency }, (task) => this.runPage(task));
    // A page whose every attempt died (its worker stopped heart-beating) lands here: it is failed,
    // so that its job can still complete.
    await queue.work<PageTask>(QUEUES.pageDead, { localConcurrency: 1 }, async (task) => {
      const job = await this.#deps.store.get(task.data.jobId);
      if (job) await this.#drop(job, task.data.key, 'failed', `no answer after ${PAGE_RETRY_LIMIT + 1} attempts`);
    });
    // Deliveries have their own workers: a slow or failing receiver never holds up a crawl.
    await queue.work<{ eventId: string }>(QUEUES.webhook, { localConcurrency: 2 }, (task) => this.deliver(task));
    await queue.work(QUEUES.cleanup, {}, async () => {
      const deleted = await this.#deps.store.deleteExpired();
      if (deleted) this.#deps.logger?.info({ deleted }, 'deleted expired jobs');
    });
  }

  /** Aborts the fetches in hand: their pages go back to the queue and their holds are released. */
  abortAll(): void {
    this.#stopping.abort(new Error('The server is shutting down.'));
    for (const controllers of this.#inFlight.values()) for (const controller of controllers) controller.abort(this.#stopping.signal.reason);
  }

  /** Stops this process's fetches of a job that was cancelled. */
  cancelled(jobId: string): void {
    for (const controller of this.#inFlight.get(jobId) ?? []) controller.abort(new Error('The job was cancelled.'));
    this.#forget(jobId);
  }

  /** Drops what this process kept for a job that ended (here, or in another process). */
  #forget(jobId: string): void {
    this.#rules.delete(jobId);
    this.#jobs.delete(jobId);
    for (const key of this.#otherRobots.keys()) if (key.startsWith(`${jobId} `)) this.#otherRobots.delete(key);
  }

  /** Starts a job: reads robots.txt and the sitemaps (crawl), records the first pages, admits them. */
  async startJob(task: Job<{ jobId: string }>): Promise<void> {
    const { store, db } = this.#deps;
    const job = await store.get(task.data.jobId);
    if (!job || FINAL_STATUSES.includes(job.status)) return;
    const context = this.#context(task.signal, job.id);
    let robots: { text: string | null; crawlDelayMs: number } = { text: null, crawlDelayMs: 0 };
    let found: FoundPage[];
    if (job.kind === 'crawl') {
      const params = job.params as unknown as CrawlParams;
      const read = await this.#deps.site().call(robotsAdapter, { url: params.url }, context);
      if (read.kind !== 'ok') {
        // RFC 9309 §2.3.1.3-4: a robots.txt that cannot be read means "crawl nothing" for now. The
        // start is tried again twice (the queue's back-off: about 3–6 s, then 6–12 s) before the
        // crawl fails: a site down for a moment should not cost the user their crawl.
        const reason = read.kind === 'timeout' || read.kind === 'unreachable' ? 'The target site could not be reached.' : `The site's robots.txt could not be read (${describeStatus(read.status)}): it may forbid crawling.`;
        if (task.retryCount < START_ATTEMPTS - 1) throw new Error(reason);
        await this.#end(job, 'failed', reason);
        return;
      }
      const rules = crawlRules(params, readRobots(robotsUrlFor(params.url), read.value, ROBOTS_AGENT));
      this.#rules.set(job.id, rules);
      robots = { text: read.value, crawlDelayMs: rules.robots.crawlDelayMs };
      found = params.sitemap === 'only' ? [] : rules.start();
      // Sitemap URLs count as one hop from the start page: `max_depth: 0` is the start page alone.
      if (params.sitemap === 'only' || (params.sitemap !== 'skip' && params.max_depth >= 1)) {
        const sitemaps = await discoverSitemapUrls(this.#deps.site(), { startUrl: params.url, robotsSitemaps: rules.robots.sitemaps, ...SITEMAP_LIMITS }, context);
        const admission = await rules.admit(sitemaps.urls, params.sitemap === 'only' ? 0 : 1, { budgetMs: ADMISSION_BUDGET_MS.start, signal: context.signal });
        this.#reportCut(job.id, admission.cut, 'sitemaps');
        found.push(...admission.pages);
      }
    } else {
      // A batch's URLs, once each by canonical form, in the order given.
      found = canonicalPages(job.params.urls as string[], 0);
    }
    await db.transaction(async (tx) => {
      if (!(await store.markRunning(tx, job.id, robots))) return;
      await store.addFound(tx, job.id, found);
      await this.#emit(tx, job, 'started', { url: job.kind === 'crawl' ? job.params.url : undefined, pages_found: found.length });
    });
    await this.#afterPage(job.id);
  }

  /** One page: claim it, hold its price, fetch and convert it, deliver or drop it, admit the next. */
  async runPage(task: Job<PageTask>): Promise<void> {
    const { store, ledger, db, metrics } = this.#deps;
    const { jobId, key } = task.data;
    // Taken only while the job runs: one statement per page instead of a read, then a claim.
    const claim = await store.claim(jobId, key);
    if (!claim) {
      const current = await store.get(jobId);
      if (!current) return;
      if (current.status !== 'running') {
        this.#forget(jobId);
        await db.transaction((tx) => store.drop(tx, jobId, key, 'skipped', `the job is ${current.status}`));
        metrics.page('skipped');
        return;
      }
      // Settled by an attempt that died before it admitted the pages after it: admit them now.
      await this.#afterPage(jobId);
      return;
    }
    const job = await this.#job(jobId);
    if (!job) return;
    const pageRequest = pageRequestId(jobId, key);
    // The attempt before this one died with its hold: give it back now.
    if (claim.attempt > 1) await ledger.settle(`${pageRequest}:${claim.attempt - 1}`, 0);

    const rules = job.kind === 'crawl' ? await this.#rulesFor(job) : undefined;
    const controller = new AbortController();
    const untrack = this.#track(jobId, controller);
    const signal = AbortSignal.any([controller.signal, task.signal, this.#stopping.signal]);
    const requestId = `${pageRequest}:${claim.attempt}`;
    let held = 0;
    try {
      const robots = rules ? await this.#robotsFor(job, rules, claim.url, this.#context(signal, jobId)) : undefined;
      if (robots && !robots.isAllowed(claim.url)) {
        await this.#drop(job, key, 'skipped', 'disallowed by robots.txt', claim.attempt);
        return;
      }
      const unitPrice = price(await this.#deps.prices.current(), 'crawl_page');
      if (unitPrice > 0) {
        held = await ledger.hold({ requestId, userId: job.user_id, product: 'scraping', min: unitPrice, max: unitPrice });
        if (held === 0) {
          await this.#outOfCredits(job, key, claim.url, claim.attempt);
          return;
        }
      }
      // The host's slot is taken last, right before the fetch: a slow hold must not eat into a crawl-delay.
      const host = new URL(claim.url).host;
      const delayMs = robots?.crawlDelayMs ?? 0;
      const slot = await this.#takeHost(host, delayMs > 0 ? 1 : this.#deps.settings.hostConcurrency, signal);
      const format = (job.params.format as OutputFormat | undefined) ?? 'markdown';
      let outcome: WebOutcome;
      try {
        outcome = await this.#deps.web().scrape({ url: claim.url, method: 'GET', browser: false, format, links: true }, this.#context(signal, jobId));
      } finally {
        await store.releaseHostSlot(host, slot, delayMs).catch(() => {});
      }
      const page = outcome.kind === 'ok' ? outcome.page : undefined;
      const offSite = page && rules && !rules.inScope(page.url);
      if (!page || offSite) {
        if (held) await ledger.settle(requestId, 0);
        held = 0;
        await this.#drop(job, key, 'failed', offSite ? 'redirected off the site' : failureReason(outcome), claim.attempt);
        return;
      }
      let next: FoundPage[] = [];
      if (rules && claim.depth < rules.maxDepth) {
        const admission = await rules.admit((page.links ?? []).slice(0, MAX_LINKS_PER_PAGE), claim.depth + 1, { budgetMs: ADMISSION_BUDGET_MS.page, signal });
        this.#reportCut(jobId, admission.cut, claim.url);
        next = admission.pages;
      }
      let charged = 0;
      const delivered = await db.transaction(async (tx) => {
        const stored = await store.deliver(tx, jobId, key, claim.attempt, {
          url: page.url,
          statusCode: page.status_code,
          content: page.content,
          links: job.params.links === true ? (page.links ?? []) : null,
          credits: held,
        });
        if (!stored) return false;
        // The charge commits with the delivery: a process killed in between leaves neither (the
        // page is fetched again, the hold swept) or both, never a delivered page given away.
        charged = held ? await ledger.captureIn(tx, requestId, held) : 0;
        await store.addFound(tx, jobId, next);
        await this.#emit(tx, job, 'page', { url: page.url, status_code: page.status_code });
        // The pages it found, and its own place, go to the next ones in the same commit.
        await this.#admit(tx, jobId);
        return true;
      });
      if (!delivered) {
        // Cancelled meanwhile (here or by another process), or a later attempt took the page over:
        // nothing is charged for this one, and the page no longer counts as being fetched.
        if (held) await ledger.settle(requestId, 0);
        held = 0;
        await this.#drop(job, key, 'skipped', 'the job ended before the page was delivered', claim.attempt);
        return;
      }
      const counted = held;
      ledger.settledElsewhere(requestId);
      held = 0;
      if (charged < counted) {
        const ended = await store.uncharged(jobId, key, counted - charged);
        if (ended) await store.settleHistory(ended);
      }
      metrics.page('delivered');
      await this.#completeIfDone(jobId);
    } catch (error) {
      if (held) await ledger.settle(requestId, 0).catch(() => {});
      if (controller.signal.aborted && !this.#stopping.signal.aborted) {
        // This job was cancelled while the page was fetched.
        await this.#drop(job, key, 'skipped', 'the job was cancelled', claim.attempt).catch(() => {});
        return;
      }
      if (!this.#stopping.signal.aborted && task.retryCount >= PAGE_RETRY_LIMIT) {
        // The last attempt the queue allows: the page is failed, so the job can still complete.
        const reason = error instanceof Error ? error.message : String(error);
        await this.#drop(job, key, 'failed', `gave up after ${task.retryCount + 1} attempts: ${reason}`, claim.attempt).catch(() => {});
        return;
      }
      // Stopping, or a fault: the page goes back to the queue, whose retry starts it over.
      await store.unclaim(jobId, key, claim.attempt).catch(() => {});
      throw error;
    } finally {
      untrack();
    }
  }

  /** Delivers one webhook event; throws to have the queue retry it later. */
  async deliver(task: Job<{ eventId: string }>): Promise<void> {
    const { events, secrets, outbound, store, metrics, logger } = this.#deps;
    const event = await events.load(task.data.eventId);
    if (!event || event.state !== 'pending') return;
    if (Date.now() - new Date(event.createdAt).getTime() > WEBHOOK_RETRY_WINDOW_SECONDS * 1000) {
      await events.markFailed(event.id, 'not delivered within 24 hours');
      metrics.webhook('expired');
      return;
    }
    const secret = await secrets.get(event.userId);
    const result = await deliverWebhook(outbound, { id: event.id, url: event.url, body: event.body }, secret, { signal: task.signal });
    if (result.kind === 'delivered') {
      await events.markDelivered(event.id, result.status);
      metrics.webhook('delivered');
      return;
    }
    if (result.kind === 'refused') {
      await events.markFailed(event.id, result.error);
      if (event.jobId) await store.webhookFailed(event.jobId, result.error);
      metrics.webhook('refused');
      logger?.warn({ eventId: event.id, jobId: event.jobId, reason: result.error }, 'webhook refused');
      return;
    }
    await events.markAttempt(event.id, { status: result.status, error: result.error });
    metrics.webhook('retry');
    throw new Error(`webhook delivery failed: ${result.error}`);
  }

  /** After a page settles: admit waiting pages into the free places, and complete the job when nothing is left. */
  async #afterPage(jobId: string): Promise<void> {
    await this.#deps.db.transaction((tx) => this.#admit(tx, jobId));
    await this.#completeIfDone(jobId);
  }

  /** Admits waiting pages into the free places under the limit and queues them (in the caller's transaction). */
  async #admit(tx: Queryable, jobId: string): Promise<void> {
    const admitted = await this.#deps.store.admit(tx, jobId);
    await this.#deps.queue.enqueue(tx, QUEUES.page, admitted.map((page) => ({ data: { jobId, key: page.key } satisfies PageTask, group: hostOf(page.url) })));
  }

  /** Completes the job when nothing is left to fetch or admit, with its `completed` event in the same commit. */
  async #completeIfDone(jobId: string): Promise<void> {
    // A read first: most pages end with others still queued, and need no transaction for this.
    if (!(await this.#deps.store.mayBeDone(jobId))) return;
    const done = await this.#deps.db.transaction(async (tx) => {
      const row = await this.#deps.store.completeIfDone(tx, jobId);
      if (row) await this.#emit(tx, row, 'completed', completion(row));
      return row;
    });
    if (done) await this.#settled(done);
  }

  async #drop(job: JobRow, key: string, state: 'failed' | 'skipped', reason: string, attempt?: number): Promise<void> {
    await this.#deps.db.transaction(async (tx) => {
      if (await this.#deps.store.drop(tx, job.id, key, state, reason, attempt)) await this.#admit(tx, job.id);
    });
    this.#deps.metrics.page(state);
    await this.#completeIfDone(job.id);
  }

  /**
   * The job's row as it was created (who, what, where to send events), kept in memory while the
   * job runs here: what changes (its status, its counts) is read by the statements that need it.
   */
  async #job(jobId: string): Promise<JobRow | undefined> {
    const cached = this.#jobs.get(jobId);
    if (cached) return cached;
    const row = await this.#deps.store.get(jobId);
    if (row) {
      if (this.#jobs.size >= MAX_CACHED_JOBS) this.#jobs.delete(this.#jobs.keys().next().value!);
      this.#jobs.set(jobId, row);
    }
    return row;
  }

  /**
   * The balance cannot pay this page. While other pages of the job are being fetched, it waits
   * for them (one that fails gives its credit back); once none is, the job stops, and pages that
   * already held credits are still delivered.
   */
  async #outOfCredits(job: JobRow, key: string, url: string, attempt: number): Promise<void> {
    const { db, store, queue } = this.#deps;
    if (await store.pagesHolding(jobRequestPrefix(job.id))) {
      await db.transaction(async (tx) => {
        if (!(await store.unclaim(job.id, key, attempt, tx))) return;
        await queue.enqueue(tx, QUEUES.page, [{ data: { jobId: job.id, key } satisfies PageTask, group: hostOf(url), delaySeconds: 1 }]);
      });
      return;
    }
    const ended = await db.transaction(async (tx) => {
      await store.drop(tx, job.id, key, 'skipped', 'not enough credits', attempt);
      const row = await store.finish(tx, job.id, 'stopped_no_credits', 'The balance ran out.');
      if (row) await this.#emit(tx, row, 'completed', completion(row));
      return row;
    });
    this.#deps.metrics.page('skipped');
    if (ended) await this.#settled(ended);
  }

  /** Ends a job that could not go on (robots.txt unreadable, site unreachable). */
  async #end(job: JobRow, status: 'failed', reason: string): Promise<void> {
    const ended = await this.#deps.db.transaction(async (tx) => {
      const row = await this.#deps.store.finish(tx, job.id, status, reason);
      if (row) await this.#emit(tx, row, 'failed', { status, error: reason });
      return row;
    });
    if (ended) await this.#settled(ended);
  }

  /** A job that ended: its creating request's history shows what it cost; metrics see it end. */
  async #settled(job: JobRow): Promise<void> {
    this.#forget(job.id);
    // Pages that held credits when the job stopped settle after this; `gleaner jobs show` sets the row again.
    const fresh = await this.#deps.store.get(job.id);
    if (fresh) await this.#deps.store.settleHistory(fresh);
  }

  /** Records a webhook event (in the caller's transaction) when the job has a webhook that wants it. */
  async #emit(tx: Queryable, job: JobRow, kind: 'started' | 'page' | 'completed' | 'failed', data: Record<string, unknown>): Promise<void> {
    const webhook = job.webhook;
    if (!webhook || !webhook.events.includes(kind)) return;
    const event = await this.#deps.events.record(tx, { userId: job.user_id, jobId: job.id, source: job.kind, url: webhook.url, type: `${job.kind}.${kind}`, data });
    await this.#deps.queue.enqueue(tx, QUEUES.webhook, [{ data: { eventId: event.id } }]);
  }

  /** Links left unjudged when their checks ran past the budget (hostile patterns or robots.txt): logged, never silent. */
  #reportCut(jobId: string, cut: number, source: string): void {
    if (cut > 0) this.#deps.logger?.warn({ jobId, cut, source }, 'crawl links left unjudged: their checks ran past the budget');
  }

  async #rulesFor(job: JobRow): Promise<CrawlRules> {
    let rules = this.#rules.get(job.id);
    if (!rules) {
      const params = job.params as unknown as CrawlParams;
      rules = crawlRules(params, readRobots(robotsUrlFor(params.url), job.robots, ROBOTS_AGENT));
      this.#rules.set(job.id, rules);
    }
    return rules;
  }

  /**
   * Waits for a free fetch slot of `host` (at most `slots` fetches at once, across processes; the
   * crawl-delay after each) and takes it. The queue's own per-host limit keeps most pages from
   * waiting here at all; this is the guarantee.
   */
  async #takeHost(host: string, slots: number, signal: AbortSignal): Promise<number> {
    for (;;) {
      const slot = await this.#deps.store.claimHostSlot(host, slots, HOST_LEASE_MS);
      if (slot > 0) return slot;
      // When a taken slot frees up is not known here: look again shortly.
      await sleep(HOST_POLL_MS, undefined, { signal });
    }
  }

  /**
   * The robots.txt that judges `url`: the job's own for the start origin; another origin's (a
   * `www.` twin, a subdomain) is read once per job in this process. One that cannot be read
   * forbids everything for now (RFC 9309 §2.3.1.3-4).
   */
  async #robotsFor(job: JobRow, rules: CrawlRules, url: string, context: CallContext): Promise<RobotsRules> {
    if (rules.sameOrigin(url)) return rules.robots;
    const origin = new URL(url).origin;
    const cacheKey = `${job.id} ${origin}`;
    let robots = this.#otherRobots.get(cacheKey);
    if (!robots) {
      robots = this.#deps
        .site()
        .call(robotsAdapter, { url }, context)
        .then((read) => readRobots(robotsUrlFor(url), read.kind === 'ok' ? read.value : FORBID_ALL, ROBOTS_AGENT));
      // A failed read (the caller went away) is not kept: the next page asks again.
      robots.catch(() => this.#otherRobots.delete(cacheKey));
      if (this.#otherRobots.size >= MAX_CACHED_ROBOTS) this.#otherRobots.delete(this.#otherRobots.keys().next().value!);
      this.#otherRobots.set(cacheKey, robots);
    }
    return robots;
  }

  #track(jobId: string, controller: AbortController): () => void {
    let set = this.#inFlight.get(jobId);
    if (!set) this.#inFlight.set(jobId, (set = new Set()));
    set.add(controller);
    return () => {
      set.delete(controller);
      if (set.size === 0) this.#inFlight.delete(jobId);
    };
  }

  #context(signal: AbortSignal, jobId: string): CallContext {
    return { signal, log: this.#deps.logger?.child({ jobId }), requestId: `job:${jobId}` };
  }
}

/** The user agent robots.txt rules are read for. */
export const ROBOTS_AGENT = 'gleaner';

/** What the hold request ids of a job's pages start with. */
export function jobRequestPrefix(jobId: string): string {
  return `job:${jobId}:`;
}

/** The hold's request id of a page: the job and the page's canonical URL, hashed to a fixed length. */
export function pageRequestId(jobId: string, key: string): string {
  return `${jobRequestPrefix(jobId)}${createHash('sha256').update(key).digest('hex').slice(0, 24)}`;
}

function completion(job: JobRow): Record<string, unknown> {
  return { status: job.status, completed: job.completed, credits_used: job.credits_used };
}

function hostOf(url: string): string {
  return new URL(url).host;
}

function describeStatus(status: number | undefined): string {
  return status ? `it answered ${status}` : 'no answer';
}

/** Why a page could not be delivered, in words for the operator's job view. */
function failureReason(outcome: WebOutcome): string {
  switch (outcome.kind) {
    case 'status':
      return `the target answered ${outcome.status}`;
    case 'too_large':
      return 'the page is larger than 10 MB';
    case 'not_a_page':
      return `not a web page (${outcome.contentType ?? 'no content type'})`;
    case 'private_address':
      return 'the URL points to a private address';
    case 'blocked_domain':
      return 'a domain the service does not scrape';
    case 'not_converted':
      return `the page could not be converted (${outcome.what})`;
    case 'unreachable':
      return `unreachable: ${outcome.reason}`;
    default:
      return outcome.kind;
  }
}

