/**
 * Configuration comes from the environment (twelve-factor); every variable is listed in
 * docs/configuration.md, generated from these checks and src/core/settings.ts (`npm run docs:config`).
 * Bad values stop the start with a message naming the variable.
 */
import path from 'node:path';
import { ConfigError, envReader, type EnvReader } from './core/env.ts';
import { outboundCapability } from './outbound/config.ts';
import type { OutboundClientOptions } from './outbound/client.ts';
import { jobSettings, type JobSettings } from './jobs/settings.ts';

export { ConfigError } from './core/env.ts';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
  /** Prefix of every Redis key, so several deployments (or test runs) can share one Redis. */
  redisPrefix: string;
  trustProxy: boolean;
  logLevel: string;
  bodyLimitBytes: number;
  /** Credits held by a process that died come back after this long. Longer than any request. */
  holdTtlSeconds: number;
  sweepIntervalMs: number;
  /** How long a process trusts a token it has looked up (revocations evict it at once). */
  tokenCacheMs: number;
  shutdownGraceMs: number;
  /** On SIGTERM/SIGINT, how long /ready says 503 while requests are still served, before the listener closes. */
  shutdownDrainMs: number;
  ownerEmail: string;
  outbound: OutboundClientOptions;
  /** Crawls, batches and webhooks (src/jobs). */
  jobs: JobSettings;
  /** Stripe `invoice.paid` webhook; absent when STRIPE_WEBHOOK_SECRET is unset (no route). */
  stripeWebhook?: StripeWebhookConfig;
  /** The environment the config came from: capability modules read their own settings from it. */
  env: NodeJS.ProcessEnv;
}

export interface StripeWebhookConfig {
  /** The endpoint's signing secret (`whsec_...`). */
  secret: string;
  /** How far a signature's timestamp may be from now, in seconds. */
  toleranceSeconds: number;
}

function stripeWebhookFromEnv(env: EnvReader): StripeWebhookConfig | undefined {
  const secret = env.text('STRIPE_WEBHOOK_SECRET');
  const toleranceSeconds = env.integer('STRIPE_WEBHOOK_TOLERANCE_SECONDS', { min: 1 }) ?? 300;
  if (!secret) return undefined;
  // The usual slip is pasting the API key (sk_..., rk_...) instead of the endpoint's secret.
  if (!/^whsec_\S+$/.test(secret)) {
    throw new ConfigError('STRIPE_WEBHOOK_SECRET must be the webhook endpoint\'s signing secret (whsec_...), not an API key.', 'STRIPE_WEBHOOK_SECRET');
  }
  return { secret, toleranceSeconds };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const read = envReader(env);
  const int = (name: string, fallback: number, min = 0) => read.integer(name, { min }) ?? fallback;
  return {
    host: env.HOST || '0.0.0.0',
    port: int('PORT', 8080),
    dataDir: path.resolve(env.DATA_DIR || './data'),
    databaseUrl: env.DATABASE_URL || undefined,
    redisUrl: env.REDIS_URL || undefined,
    redisPrefix: env.REDIS_PREFIX || 'gleaner:',
    trustProxy: env.TRUST_PROXY === '1' || env.TRUST_PROXY === 'true',
    logLevel: env.LOG_LEVEL || 'info',
    bodyLimitBytes: int('BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    holdTtlSeconds: int('HOLD_TTL_SECONDS', 600, 1),
    sweepIntervalMs: int('HOLD_SWEEP_INTERVAL_MS', 30_000, 100),
    tokenCacheMs: int('TOKEN_CACHE_MS', 2_000, 0),
    shutdownGraceMs: int('SHUTDOWN_GRACE_MS', 25_000, 0),
    // 0 outside containers: a process run by hand has no balancer to warn, and Ctrl-C stays quick.
    // The image sets 5000 (longer than a balancer's health interval plus its timeout).
    shutdownDrainMs: int('SHUTDOWN_DRAIN_MS', 0, 0),
    ownerEmail: env.OWNER_EMAIL || 'owner@localhost',
    outbound: read.read((reader) => outboundCapability.settings(reader)),
    jobs: jobSettings(read),
    stripeWebhook: stripeWebhookFromEnv(read),
    env,
  };
}
