/**
 * Configuration comes from the environment (twelve-factor); every variable is listed in the
 * README's configuration reference. Bad values stop the start with a message naming the variable.
 */
import os from 'node:os';
import path from 'node:path';
import { outboundOptionsFromEnv } from './outbound/config.ts';
import type { OutboundClientOptions } from './outbound/client.ts';

export interface Config {
  host: string;
  port: number;
  dataDir: string;
  databaseUrl?: string;
  redisUrl?: string;
  trustProxy: boolean;
  logLevel: string;
  bodyLimitBytes: number;
  /** Credits held by a process that died come back after this long. Longer than any request. */
  holdTtlSeconds: number;
  sweepIntervalMs: number;
  shutdownGraceMs: number;
  ownerEmail: string;
  outbound: OutboundClientOptions;
  pdf: { threads: number; timeoutMs: number };
  ocr: { workers: number; timeoutMs: number; maxPixels: number; recycleAfter: number };
  search: {
    engines?: string[];
    cacheTtlSeconds: number;
    timeoutMs: number;
    upstreams: Record<string, string>;
  };
  browser: { executablePath: string; maxPages: number; timeoutMs: number };
}

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, minimum = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < minimum) throw new ConfigError(`${name} must be an integer ≥ ${minimum} (got "${raw}").`);
  return value;
}

function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

const UPSTREAM_DEFAULTS: Record<string, string> = {
  google: 'https://www.google.com',
  bing: 'https://www.bing.com',
  duckduckgo: 'https://html.duckduckgo.com',
  brave: 'https://search.brave.com',
  mojeek: 'https://www.mojeek.com',
  startpage: 'https://www.startpage.com',
};

function outboundFromEnv(env: NodeJS.ProcessEnv): OutboundClientOptions {
  try {
    return outboundOptionsFromEnv(env);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cores = Math.max(1, os.availableParallelism());
  const upstreams = Object.fromEntries(
    Object.entries(UPSTREAM_DEFAULTS).map(([engine, url]) => [engine, env[`UPSTREAM_${engine.toUpperCase()}_URL`] || url]),
  );
  return {
    host: env.HOST || '0.0.0.0',
    port: int(env, 'PORT', 8080),
    dataDir: path.resolve(env.DATA_DIR || './data'),
    databaseUrl: env.DATABASE_URL || undefined,
    redisUrl: env.REDIS_URL || undefined,
    trustProxy: env.TRUST_PROXY === '1' || env.TRUST_PROXY === 'true',
    logLevel: env.LOG_LEVEL || 'info',
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024),
    holdTtlSeconds: int(env, 'HOLD_TTL_SECONDS', 600, 1),
    sweepIntervalMs: int(env, 'HOLD_SWEEP_INTERVAL_MS', 30_000, 100),
    shutdownGraceMs: int(env, 'SHUTDOWN_GRACE_MS', 25_000, 0),
    ownerEmail: env.OWNER_EMAIL || 'owner@localhost',
    outbound: outboundFromEnv(env),
    pdf: { threads: int(env, 'PDF_THREADS', cores, 1), timeoutMs: int(env, 'PDF_TIMEOUT_MS', 60_000, 100) },
    ocr: {
      workers: int(env, 'OCR_WORKERS', cores, 1),
      timeoutMs: int(env, 'OCR_TIMEOUT_MS', 60_000, 100),
      maxPixels: int(env, 'OCR_MAX_PIXELS', 50_000_000, 1),
      recycleAfter: int(env, 'OCR_RECYCLE_AFTER', 200, 1),
    },
    search: {
      engines: env.SEARCH_ENGINES ? list(env.SEARCH_ENGINES) : undefined,
      cacheTtlSeconds: int(env, 'SEARCH_CACHE_TTL', 0),
      timeoutMs: int(env, 'SEARCH_TIMEOUT_MS', 15_000, 100),
      upstreams,
    },
    browser: {
      executablePath: env.CHROMIUM_PATH || '/usr/bin/chromium',
      maxPages: int(env, 'BROWSER_MAX_PAGES', 4, 1),
      timeoutMs: int(env, 'BROWSER_TIMEOUT_MS', 30_000, 100),
    },
  };
}
