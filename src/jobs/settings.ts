/**
 * The job engine's settings (docs/jobs.md, docs/configuration.md):
 *   JOB_CONCURRENCY           pages this process works on at once (0: this process runs no jobs)
 *   JOB_HOST_CONCURRENCY      pages in flight per target host, across every process
 *   JOB_POLL_SECONDS          how often an idle queue is looked at for tasks coming due (a new task wakes it at once)
 *   JOB_SUPERVISE_SECONDS     how often dead workers' tasks are looked for and handed on
 *   WEBHOOK_RETRY_BASE_SECONDS first retry of a failed webhook delivery; doubles up to one hour
 *   CHAIN_POLL_MS             how often wallet monitors' followers poll each chain's head (src/monitors)
 *   ALLOW_IGNORE_ROBOTS       whether a map may be asked to list what robots.txt disallows (`ignore_robots`)
 */
import type { EnvReader } from '../core/env.ts';

export interface JobSettings {
  concurrency: number;
  hostConcurrency: number;
  /** How often an idle queue looks for tasks; undefined: the database's default (`pollSecondsFor`). */
  pollSeconds: number | undefined;
  superviseSeconds: number;
  webhookRetryBaseSeconds: number;
  /** Attempts after the first, so that the back-off spans 24 hours. */
  webhookRetryLimit: number;
  /** Connections of the queue's own pool (PostgreSQL). */
  poolSize: number;
  /** How often the wallet monitors' followers poll each chain's head, and look for due deliveries. */
  chainPollMs: number;
  /** The operator lets `/v1/map` list URLs robots.txt disallows when a request says `ignore_robots: true`. */
  allowIgnoreRobots: boolean;
}

export const JOB_DEFAULTS = {
  concurrency: 4,
  hostConcurrency: 2,
  pollSeconds: 0.5,
  /**
   * Embedded, every new task comes from this process, which wakes its own workers at once: polling
   * only finds retries and scheduled tasks coming due, and each poll holds the event loop (PGlite
   * runs statements on the main thread).
   */
  embeddedPollSeconds: 5,
  superviseSeconds: 10,
  webhookRetryBaseSeconds: 30,
  chainPollMs: 2_000,
} as const;

/** Days a job, its pages and its events are kept (contract §9). */
export const JOB_RETENTION_DAYS = 7;

/** Retries whose back-off (base, doubling, capped at an hour) adds up to at least 24 hours. */
export function webhookRetryLimit(baseSeconds: number): number {
  let total = 0;
  let retries = 0;
  while (total < 86_400) {
    total += Math.min(3_600, baseSeconds * 2 ** retries);
    retries++;
  }
  return retries;
}

/** The idle poll interval: the setting, or the default of the database the queue lives in. */
export function pollSecondsFor(settings: JobSettings, embedded: boolean): number {
  return settings.pollSeconds ?? (embedded ? JOB_DEFAULTS.embeddedPollSeconds : JOB_DEFAULTS.pollSeconds);
}

export function jobSettings(env: EnvReader): JobSettings {
  const webhookRetryBaseSeconds = env.integer('WEBHOOK_RETRY_BASE_SECONDS', { min: 1 }) ?? JOB_DEFAULTS.webhookRetryBaseSeconds;
  const pollSeconds = env.number('JOB_POLL_SECONDS', { min: 0.5 });
  return {
    concurrency: env.integer('JOB_CONCURRENCY', { min: 0 }) ?? JOB_DEFAULTS.concurrency,
    hostConcurrency: env.integer('JOB_HOST_CONCURRENCY', { min: 1 }) ?? JOB_DEFAULTS.hostConcurrency,
    pollSeconds,
    superviseSeconds: env.integer('JOB_SUPERVISE_SECONDS', { min: 1 }) ?? JOB_DEFAULTS.superviseSeconds,
    webhookRetryBaseSeconds,
    webhookRetryLimit: webhookRetryLimit(webhookRetryBaseSeconds),
    poolSize: 4,
    chainPollMs: env.integer('CHAIN_POLL_MS', { min: 50 }) ?? JOB_DEFAULTS.chainPollMs,
    allowIgnoreRobots: env.flag('ALLOW_IGNORE_ROBOTS') ?? false,
  };
}
