/**
 * The per-user bound of the shared pools across replicas (scaled mode): a counting lease per
 * user and pool in Redis. Each lease is a member of a sorted set scored by the time it expires;
 * one Lua script drops the expired members and adds one when fewer than the bound remain, so two
 * replicas can never both take the last lease. A task renews its lease while it runs and removes
 * it when it ends; a replica that dies leaves leases that expire on their own within `ttlMs`.
 * The script reads Redis's clock, so the replicas' clocks need not agree.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { TenantLeases } from '../core/fair-limiter.ts';

export interface RedisPoolLeasesOptions {
  /** Key prefix (REDIS_PREFIX). */
  prefix?: string;
  /** A lease not renewed for this long is gone (its replica died). Default 15 s. */
  ttlMs?: number;
  /** How often a task waiting for a lease asks again. Default 100 ms (plus up to as much again, at random). */
  pollMs?: number;
  /** Told (at most once a minute) that Redis failed and the bound fell back to each process. */
  logger?: { warn(details: Record<string, unknown>, message: string): void };
}

export const POOL_LEASE_DEFAULTS = { ttlMs: 15_000, pollMs: 100 } as const;

/** A Redis that stays away is said once a minute, not once per task. */
const WARN_INTERVAL_MS = 60_000;

// Drop what expired, then add one lease if the bound allows it; the key outlives its newest lease.
const ACQUIRE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`;

// A running task keeps its lease: pushed forward (put back, should it have expired meanwhile).
const RENEW_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`;

interface LeaseCommands {
  gleanerLeaseAcquire(key: string, limit: number, ttlMs: number, member: string): Promise<number>;
  gleanerLeaseRenew(key: string, ttlMs: number, member: string): Promise<number>;
}

export class RedisPoolLeases implements TenantLeases {
  readonly #redis: Redis & LeaseCommands;
  readonly #prefix: string;
  readonly #ttlMs: number;
  readonly #pollMs: number;
  readonly #logger: RedisPoolLeasesOptions['logger'];
  #lastWarning = 0;
  /** This process's part of every member, so two replicas never name a lease alike. */
  readonly #owner = randomBytes(6).toString('hex');
  #next = 0;

  constructor(redis: Redis, options: RedisPoolLeasesOptions = {}) {
    this.#redis = redis as Redis & LeaseCommands;
    this.#prefix = `${options.prefix ?? 'gleaner:'}pool-lease:`;
    this.#ttlMs = options.ttlMs ?? POOL_LEASE_DEFAULTS.ttlMs;
    this.#pollMs = options.pollMs ?? POOL_LEASE_DEFAULTS.pollMs;
    this.#logger = options.logger;
    if (!(this.#ttlMs >= 100)) throw new RangeError(`ttlMs must be ≥ 100 (got ${this.#ttlMs})`);
    if (!(this.#pollMs > 0)) throw new RangeError(`pollMs must be > 0 (got ${this.#pollMs})`);
    redis.defineCommand('gleanerLeaseAcquire', { numberOfKeys: 1, lua: ACQUIRE_SCRIPT });
    redis.defineCommand('gleanerLeaseRenew', { numberOfKeys: 1, lua: RENEW_SCRIPT });
  }

  /** The sorted set of `tenant`'s leases in `pool`. */
  key(pool: string, tenant: string): string {
    return `${this.#prefix}${pool}:${tenant}`;
  }

  /** Leases of `tenant` in `pool` held now, by every replica. */
  async held(pool: string, tenant: string): Promise<number> {
    const key = this.key(pool, tenant);
    const [seconds, micros] = await this.#redis.time();
    const ms = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    return this.#redis.zcount(key, `(${ms}`, '+inf');
  }

  async acquire(pool: string, tenant: string, limit: number, signal?: AbortSignal): Promise<() => void> {
    const key = this.key(pool, tenant);
    const member = `${this.#owner}:${++this.#next}`;
    for (;;) {
      signal?.throwIfAborted();
      let taken: number;
      try {
        taken = Number(await this.#redis.gleanerLeaseAcquire(key, limit, this.#ttlMs, member));
      } catch (error) {
        this.#warn(error);
        throw error;
      }
      if (taken === 1) break;
      await pause(this.#pollMs * (1 + Math.random()), signal);
    }
    if (signal?.aborted) {
      this.#remove(key, member);
      throw signal.reason;
    }
    const renewal = setInterval(() => {
      // A failed renewal is retried at the next tick; the lease expires only if they all fail.
      this.#redis.gleanerLeaseRenew(key, this.#ttlMs, member).catch(() => undefined);
    }, Math.floor(this.#ttlMs / 3));
    renewal.unref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      clearInterval(renewal);
      this.#remove(key, member);
    };
  }

  #warn(error: unknown): void {
    if (Date.now() - this.#lastWarning < WARN_INTERVAL_MS) return;
    this.#lastWarning = Date.now();
    this.#logger?.warn({ err: error instanceof Error ? error.message : String(error) }, 'pool leases unavailable (Redis): the per-user bound holds in each process only');
  }

  #remove(key: string, member: string): void {
    // One that cannot be removed (Redis away) expires by itself.
    this.#redis.zrem(key, member).catch(() => undefined);
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
