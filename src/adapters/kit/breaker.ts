/**
 * The circuit breaker: an upstream that keeps refusing us (block pages, captchas, rate limits) or
 * that cannot be reached is suspended for a while instead of being asked again by every request,
 * as SearXNG suspends a failing engine. Then one probe call decides: a clean answer closes the
 * circuit, another failure opens it again for twice as long (up to a ceiling).
 *
 * - `blocked` opens it at once (a captcha does not go away by asking again), unless its status
 *   is a server error (500, 502, 504): those count as failures;
 * - `unreachable` and `timeout` open it after `failureThreshold` in a row;
 * - only the upstream's answers count: a call an interceptor refused without sending is not told;
 * - `ok`, `empty`, `not_found` and `changed` close it (the upstream answered; a parser that cannot
 *   read the answer is our problem, which suspending the upstream would not fix).
 *
 * The rules live in one pure function (`transition`); a store only keeps the state. In scaled mode
 * the state is in Redis, changed by compare-and-set, so replicas share one circuit and one probe.
 * A store that fails lets calls through (fails open) and is logged: an upstream is never
 * suspended because Redis is away.
 */
import type { RuntimeEvent, UpstreamLogger, Verdict } from './types.ts';

export interface BreakerPolicy {
  /** `unreachable`/`timeout` verdicts in a row that open the circuit. */
  failureThreshold: number;
  /** The first suspension; each new one in a row doubles it. */
  baseBackoffMs: number;
  maxBackoffMs: number;
  /** A probe that has not reported by then (its process died) lets another one go. */
  probeTimeoutMs: number;
}

export const DEFAULT_BREAKER_POLICY: BreakerPolicy = {
  failureThreshold: 3,
  baseBackoffMs: 30_000,
  maxBackoffMs: 15 * 60_000,
  probeTimeoutMs: 60_000,
};

/** One upstream's circuit; absent means closed with no failure counted. */
export interface CircuitState {
  /** Failures in a row while closed. */
  failures: number;
  /** Times it opened in a row (the back-off grows with it). */
  trips: number;
  /** 0 while closed; else calls are skipped until then, and the first call after it probes. */
  openUntil: number;
  /** A probe is running until then (0: none). */
  probingUntil: number;
}

export type BreakerInput = { kind: 'admit' } | { kind: 'verdict'; verdict: Verdict; probe: boolean; status?: number } | { kind: 'release' };

/**
 * Server errors that say the upstream is failing, not refusing us: a `blocked` verdict with one of
 * these counts toward the failure threshold instead of opening the circuit at once (503 is left
 * out: it is how several engines answer a client they have blocked).
 */
const TRANSIENT_STATUSES = new Set([500, 502, 504]);

export interface TransitionResult {
  /** The new state (null: closed and clean, nothing to keep). */
  state: CircuitState | null;
  /** For `admit`: whether the call may go, and whether it is the probe. */
  admitted?: { allowed: true; probe: boolean } | { allowed: false; until: number };
  /** A change worth telling (opened, half-open probe started, closed). */
  change?: { state: 'open' | 'half_open' | 'closed'; openUntil?: number; trips: number };
}

const FAILURE_VERDICTS = new Set<Verdict>(['unreachable', 'timeout']);
const HEALTHY_VERDICTS = new Set<Verdict>(['ok', 'empty', 'not_found', 'changed']);

/** The breaker's rules: the state after `input` at `now`. Pure. */
export function transition(state: CircuitState | null, input: BreakerInput, now: number, policy: BreakerPolicy): TransitionResult {
  const current = state ?? { failures: 0, trips: 0, openUntil: 0, probingUntil: 0 };
  if (input.kind === 'admit') {
    if (current.openUntil === 0) return { state, admitted: { allowed: true, probe: false } };
    if (now < current.openUntil || current.probingUntil > now) return { state, admitted: { allowed: false, until: Math.max(current.openUntil, current.probingUntil) } };
    return {
      state: { ...current, probingUntil: now + policy.probeTimeoutMs },
      admitted: { allowed: true, probe: true },
      change: { state: 'half_open', trips: current.trips },
    };
  }
  if (input.kind === 'release') return { state: state && { ...current, probingUntil: 0 } };

  const { verdict } = input;
  // Calls that were already running when the circuit opened say nothing new, good or bad: only
  // the probe decides an open circuit (a fan-out's page answering after its sibling's block page
  // must not close what that block page opened).
  if (current.openUntil > 0 && !input.probe) return { state };
  if (HEALTHY_VERDICTS.has(verdict)) {
    if (state === null) return { state: null };
    return { state: null, ...(current.openUntil > 0 ? { change: { state: 'closed' as const, trips: 0 } } : {}) };
  }
  if (verdict !== 'blocked' && !FAILURE_VERDICTS.has(verdict)) return { state };
  const failures = current.failures + 1;
  const refusal = verdict === 'blocked' && !(input.status !== undefined && TRANSIENT_STATUSES.has(input.status));
  if (!refusal && !input.probe && failures < policy.failureThreshold) return { state: { ...current, failures } };
  const trips = current.trips + 1;
  const openUntil = now + Math.min(policy.maxBackoffMs, policy.baseBackoffMs * 2 ** (trips - 1));
  return { state: { failures: 0, trips, openUntil, probingUntil: 0 }, change: { state: 'open', openUntil, trips } };
}

/** Where circuit states are kept: this process's memory, or Redis for every replica. */
export interface BreakerStore {
  /** Applies `change` to the state of `upstream` atomically and returns what it gave. */
  update(upstream: string, change: (state: CircuitState | null) => TransitionResult): Promise<TransitionResult>;
  /** Every upstream with a state (for the operator's report and the gauge). */
  all(): Promise<Map<string, CircuitState>>;
}

export class MemoryBreakerStore implements BreakerStore {
  readonly #states = new Map<string, CircuitState>();

  async update(upstream: string, change: (state: CircuitState | null) => TransitionResult): Promise<TransitionResult> {
    const result = change(this.#states.get(upstream) ?? null);
    if (result.state) this.#states.set(upstream, result.state);
    else this.#states.delete(upstream);
    return result;
  }

  async all(): Promise<Map<string, CircuitState>> {
    return new Map(this.#states);
  }
}

/** What the Redis store needs of ioredis. */
export interface BreakerRedisClient {
  get(key: string): Promise<string | null>;
  smembers(key: string): Promise<string[]>;
  eval(script: string, numKeys: number, ...args: Array<string | number>): Promise<unknown>;
}

/**
 * Sets KEYS[1] to ARGV[2] (or deletes it when ARGV[2] is empty) only if it still holds ARGV[1];
 * KEYS[2] lists the upstreams that ever had a state (ARGV[4]), for the report.
 */
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1]) or ''
if current ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]); redis.call('SADD', KEYS[2], ARGV[4]) end
return 1`;

/** How long a call waits for the breaker's store before going through unchecked. */
const STORE_TIMEOUT_MS = 500;

/** Kept a day past the longest back-off, so a forgotten key cleans itself up. */
const REDIS_TTL_MS = 24 * 60 * 60_000;

export class RedisBreakerStore implements BreakerStore {
  readonly #redis: BreakerRedisClient;
  readonly #prefix: string;
  /** The set of upstreams that ever had a state. */
  readonly #index: string;

  constructor(redis: BreakerRedisClient, prefix: string) {
    this.#redis = redis;
    this.#prefix = `${prefix}circuit:`;
    this.#index = `${prefix}circuits`;
  }

  async update(upstream: string, change: (state: CircuitState | null) => TransitionResult): Promise<TransitionResult> {
    const key = this.#prefix + upstream;
    // Another replica changed it between our read and our write: read again and redo.
    for (let tries = 0; ; tries++) {
      const before = (await this.#redis.get(key)) ?? '';
      const result = change(before === '' ? null : (JSON.parse(before) as CircuitState));
      const after = result.state ? JSON.stringify(result.state) : '';
      if (after === before) return result;
      if (Number(await this.#redis.eval(COMPARE_AND_SET, 2, key, this.#index, before, after, REDIS_TTL_MS, upstream)) === 1 || tries >= 8) return result;
    }
  }

  async all(): Promise<Map<string, CircuitState>> {
    const states = new Map<string, CircuitState>();
    for (const upstream of await this.#redis.smembers(this.#index)) {
      const value = await this.#redis.get(this.#prefix + upstream);
      if (value) states.set(upstream, JSON.parse(value) as CircuitState);
    }
    return states;
  }
}

export class CircuitBreaker {
  readonly policy: BreakerPolicy;
  readonly #store: BreakerStore;
  readonly #log: UpstreamLogger;
  readonly #emit: (event: RuntimeEvent) => void;
  readonly #now: () => number;
  #lastStoreWarning = 0;

  constructor(options: { policy?: Partial<BreakerPolicy>; store?: BreakerStore; log: UpstreamLogger; emit: (event: RuntimeEvent) => void; now?: () => number }) {
    this.policy = { ...DEFAULT_BREAKER_POLICY, ...options.policy };
    this.#store = options.store ?? new MemoryBreakerStore();
    this.#log = options.log;
    this.#emit = options.emit;
    this.#now = options.now ?? Date.now;
  }

  /** May a call to `upstream` go now? At most one call probes an upstream whose back-off is over. */
  async admit(upstream: string): Promise<{ allowed: true; probe: boolean } | { allowed: false; until: number }> {
    const result = await this.#apply(upstream, { kind: 'admit' });
    return result?.admitted ?? { allowed: true, probe: false };
  }

  /** Tells the breaker what a call came to (and the upstream's status, when it answered). Never rejects. */
  record(upstream: string, verdict: Verdict, probe: boolean, status?: number): void {
    void this.#apply(upstream, { kind: 'verdict', verdict, probe, status });
  }

  /** The probe's caller went away before it could decide: let the next call probe. */
  release(upstream: string): void {
    void this.#apply(upstream, { kind: 'release' });
  }

  /** Forgets an upstream's state: its circuit is closed, as after a good probe (tests, and a fixed configuration). */
  async reset(upstream: string): Promise<void> {
    await this.#store.update(upstream, (state) => ({ state: null, ...(state && state.openUntil > 0 ? { change: { state: 'closed' as const, trips: 0 } } : {}) }));
  }

  /** Every upstream's circuit that is not closed and clean. */
  async states(): Promise<Map<string, CircuitState>> {
    return this.#store.all();
  }

  async #apply(upstream: string, input: BreakerInput): Promise<TransitionResult | undefined> {
    const now = this.#now();
    let result: TransitionResult;
    let timer: NodeJS.Timeout | undefined;
    try {
      // A store that does not answer in time (Redis away, commands queued) is a store that failed:
      // no call waits on the breaker longer than this.
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer from the breaker's store within ${STORE_TIMEOUT_MS} ms`)), STORE_TIMEOUT_MS);
      });
      result = await Promise.race([this.#store.update(upstream, (state) => transition(state, input, now, this.policy)), late]);
    } catch (error) {
      // Fail open, and say so (at most once a minute, not once per call).
      if (now - this.#lastStoreWarning > 60_000) {
        this.#lastStoreWarning = now;
        this.#log.warn({ upstream, err: error instanceof Error ? error.message : String(error) }, 'circuit breaker state unreachable (Redis?): calls go through unchecked');
      }
      return undefined;
    } finally {
      clearTimeout(timer);
    }
    const change = result.change;
    if (change) {
      this.#emit({ type: 'circuit', upstream, state: change.state, openUntil: change.openUntil, trips: change.trips, at: now });
      if (change.state === 'open') {
        this.#log.warn({ upstream, openUntil: new Date(change.openUntil ?? now).toISOString(), trips: change.trips }, `upstream ${upstream} suspended for ${Math.round(((change.openUntil ?? now) - now) / 1000)} s`);
      } else if (change.state === 'closed') {
        this.#log.info?.({ upstream }, `upstream ${upstream} answers again: circuit closed`);
      }
    }
    return result;
  }
}
