/**
 * Fixed-window rate limits with the semantics of Laravel's ThrottleRequests middleware
 * (`throttle:<max>,<minutes>`): a counter per key that starts with the first hit and expires with
 * the window; over the limit the answer is 429 with Retry-After and X-RateLimit-Reset, and every
 * response of a throttled route carries X-RateLimit-Limit and X-RateLimit-Remaining.
 *
 * The counters live in memory (one process) or in Redis (REDIS_URL: shared by every process).
 */
import type { Redis } from 'ioredis';

export interface WindowHit {
  /** Hits in the current window, this one included. */
  count: number;
  /** Milliseconds until the window resets. */
  resetInMs: number;
}

export interface ThrottleStore {
  hit(key: string, windowMs: number): Promise<WindowHit>;
  close(): Promise<void>;
}

export interface ThrottleDecision {
  allowed: boolean;
  headers: Record<string, string>;
}

export async function throttle(store: ThrottleStore, key: string, maxAttempts: number, windowSeconds: number): Promise<ThrottleDecision> {
  const { count, resetInMs } = await store.hit(key, windowSeconds * 1000);
  const headers: Record<string, string> = {
    'X-RateLimit-Limit': String(maxAttempts),
    'X-RateLimit-Remaining': String(Math.max(0, maxAttempts - count)),
  };
  if (count <= maxAttempts) return { allowed: true, headers };
  const retryAfter = Math.max(1, Math.ceil(resetInMs / 1000));
  headers['Retry-After'] = String(retryAfter);
  headers['X-RateLimit-Reset'] = String(Math.floor(Date.now() / 1000) + retryAfter);
  return { allowed: false, headers };
}

export class MemoryThrottleStore implements ThrottleStore {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor() {
    // Drop finished windows now and then so idle keys do not accumulate.
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [key, w] of this.windows) if (w.resetAt <= now) this.windows.delete(key);
    }, 60_000);
    this.sweeper.unref();
  }

  async hit(key: string, windowMs: number): Promise<WindowHit> {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { count: window.count, resetInMs: window.resetAt - now };
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}

// INCR and the first hit's PEXPIRE in one atomic step, so a window always ends.
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}`;

export class RedisThrottleStore implements ThrottleStore {
  readonly redis: Redis;
  readonly prefix: string;

  constructor(redis: Redis, prefix = 'gleaner:throttle:') {
    this.redis = redis;
    this.prefix = prefix;
    redis.defineCommand('gleanerHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
  }

  async hit(key: string, windowMs: number): Promise<WindowHit> {
    const [count, ttl] = (await (this.redis as unknown as { gleanerHit(k: string, w: number): Promise<[number, number]> }).gleanerHit(
      this.prefix + key,
      windowMs,
    )) as [number, number];
    return { count: Number(count), resetInMs: Number(ttl) };
  }

  async close(): Promise<void> {
    // The Redis connection belongs to the service container, which closes it.
  }
}
