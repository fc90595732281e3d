/**
 * The pool of logged-in X sessions (X_ACCOUNTS) behind search, user and user-tweets.
 *
 * - Load is spread: each call starts from the next session in turn (a shared counter), and skips
 *   the ones that cannot serve it.
 * - X limits each session per operation (`x-rate-limit-remaining`, `x-rate-limit-reset`): a session
 *   whose window is used up, or that got a 429 / code 88, rests for that operation until the reset.
 * - A session X refuses (401, 403, code 32 bad authentication, 326 locked) is sidelined; the log
 *   names it by position in X_ACCOUNTS and a short hash of its auth_token, never its cookies.
 * - The state lives in Redis when REDIS_URL is set, so every replica skips the same sessions; in
 *   memory otherwise.
 */
import { createHash } from 'node:crypto';
import type { XSession } from './requests.ts';

/** How long a refused session stays out. It comes back after that, or when the operator replaces its cookies (a new key). */
export const SIDELINE_MS = 24 * 60 * 60 * 1000;
/** Rest after a 429 that carried no reset time (X's windows are 15 minutes). */
export const DEFAULT_RATE_LIMIT_MS = 15 * 60 * 1000;

export interface PoolAccount {
  /** Position in X_ACCOUNTS, from 0. */
  index: number;
  /** Short hash of the auth_token: names the session in logs and state keys. */
  key: string;
  session: XSession;
}

export interface AccountState {
  sidelined: boolean;
  /** Epoch ms until which the session rests for the operation asked about (0: free). */
  limitedUntil: number;
}

/** Where the pool keeps its state. */
export interface PoolStateStore {
  /** A number that grows by one at each call, across replicas: where the rotation starts. */
  nextTicket(): Promise<number>;
  states(keys: readonly string[], operation: string): Promise<AccountState[]>;
  limit(key: string, operation: string, untilMs: number): Promise<void>;
  sideline(key: string, reason: string, forMs: number): Promise<void>;
}

export class MemoryPoolState implements PoolStateStore {
  #ticket = 0;
  readonly #sidelined = new Map<string, number>();
  readonly #limited = new Map<string, number>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  async nextTicket(): Promise<number> {
    return this.#ticket++;
  }

  async states(keys: readonly string[], operation: string): Promise<AccountState[]> {
    const now = this.#now();
    return keys.map((key) => ({
      sidelined: (this.#sidelined.get(key) ?? 0) > now,
      limitedUntil: this.#limited.get(`${operation}:${key}`) ?? 0,
    }));
  }

  async limit(key: string, operation: string, untilMs: number): Promise<void> {
    this.#limited.set(`${operation}:${key}`, untilMs);
  }

  async sideline(key: string, _reason: string, forMs: number): Promise<void> {
    this.#sidelined.set(key, this.#now() + forMs);
  }
}

/** The Redis commands the shared state needs; an ioredis client has them. */
export interface PoolRedisClient {
  incr(key: string): Promise<number>;
  mget(keys: string[]): Promise<Array<string | null>>;
  set(key: string, value: string, mode: 'PX', milliseconds: number): Promise<unknown>;
}

/** Shared state: keys expire by themselves when the rest or the sidelining ends. */
export class RedisPoolState implements PoolStateStore {
  readonly #redis: PoolRedisClient;
  readonly #prefix: string;
  readonly #now: () => number;

  constructor(redis: PoolRedisClient, prefix: string, now: () => number = Date.now) {
    this.#redis = redis;
    this.#prefix = `${prefix}x-pool:`;
    this.#now = now;
  }

  async nextTicket(): Promise<number> {
    return this.#redis.incr(`${this.#prefix}ticket`);
  }

  async states(keys: readonly string[], operation: string): Promise<AccountState[]> {
    if (keys.length === 0) return [];
    const values = await this.#redis.mget([...keys.map((key) => `${this.#prefix}sidelined:${key}`), ...keys.map((key) => `${this.#prefix}limited:${operation}:${key}`)]);
    return keys.map((_, index) => ({
      sidelined: values[index] !== null,
      limitedUntil: Number(values[keys.length + index] ?? 0) || 0,
    }));
  }

  async limit(key: string, operation: string, untilMs: number): Promise<void> {
    const ttl = Math.max(1, Math.ceil(untilMs - this.#now()));
    await this.#redis.set(`${this.#prefix}limited:${operation}:${key}`, String(untilMs), 'PX', ttl);
  }

  async sideline(key: string, reason: string, forMs: number): Promise<void> {
    await this.#redis.set(`${this.#prefix}sidelined:${key}`, reason, 'PX', forMs);
  }
}

export function sessionKey(session: XSession): string {
  return createHash('sha256').update(session.authToken).digest('hex').slice(0, 10);
}

export class AccountPool {
  readonly accounts: readonly PoolAccount[];
  readonly #store: PoolStateStore;
  readonly #now: () => number;

  constructor(sessions: readonly XSession[], store: PoolStateStore, now: () => number = Date.now) {
    this.accounts = sessions.map((session, index) => ({ index, key: sessionKey(session), session }));
    this.#store = store;
    this.#now = now;
  }

  get size(): number {
    return this.accounts.length;
  }

  /** The next session that may run `operation`, skipping `exclude` (positions); null when none may. */
  async acquire(operation: string, exclude: ReadonlySet<number> = new Set()): Promise<PoolAccount | null> {
    if (this.accounts.length === 0) return null;
    const [ticket, states] = await Promise.all([this.#store.nextTicket(), this.#store.states(this.accounts.map((a) => a.key), operation)]);
    const now = this.#now();
    for (let step = 0; step < this.accounts.length; step++) {
      const index = (ticket + step) % this.accounts.length;
      const state = states[index];
      if (exclude.has(index) || state.sidelined || state.limitedUntil > now) continue;
      return this.accounts[index];
    }
    return null;
  }

  /** The session rests for `operation` until `untilMs` (epoch ms). */
  limit(account: PoolAccount, operation: string, untilMs: number): Promise<void> {
    return this.#store.limit(account.key, operation, untilMs);
  }

  sideline(account: PoolAccount, reason: string): Promise<void> {
    return this.#store.sideline(account.key, reason, SIDELINE_MS);
  }

  /** How logs name a session: its position in X_ACCOUNTS (from 1) and its key. */
  static describe(account: PoolAccount): string {
    return `#${account.index + 1} (${account.key})`;
  }
}
