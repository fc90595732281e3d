/**
 * Fair admission to a shared pool (page conversion processes, PDF threads, OCR engines, browser
 * pages): a counting semaphore of the pool's slots that knows whose work waits for them.
 *
 * - Each tenant (a user id) holds at most `perTenant` slots at once. Work past that bound waits in
 *   its tenant's queue and never takes a slot: one user's flood leaves the other slots to
 *   everyone else. Work done for no user (`SYSTEM_TENANT`: probes, a caller that names no user)
 *   takes its turns as one tenant of its own but is not bounded: its callers bound it already,
 *   and one bound shared by everything without a user would throttle all of it together.
 * - Waiting work is picked round-robin over the tenants, first come first served within a
 *   tenant: a tenant with one task waiting is served after at most one task of every other
 *   tenant, whatever their queues hold.
 * - A waiter gives up with its signal (its deadline, its client gone) and rejects with the
 *   signal's reason, as the pools' callers already expect.
 * - With `leases` (scaled mode), a task also holds a lease of its tenant shared by every replica,
 *   taken before it queues here, so the bound holds across processes. A lease store that fails
 *   (Redis away) is not a reason to refuse work: the bound then holds in this process only.
 */

/** The tenant of work done for no user (a probe, a caller that names none): served in turn, not bounded. */
export const SYSTEM_TENANT = '-';

/** A counting lease per tenant and pool, shared by the replicas (throttle/pool-leases.ts). */
export interface TenantLeases {
  /**
   * Takes one of `limit` leases of `tenant` in `pool`, waiting while all are held (by this or
   * another replica); resolves with its release. Rejects with `signal.reason` on abort.
   */
  acquire(pool: string, tenant: string, limit: number, signal?: AbortSignal): Promise<() => void>;
}

export interface FairLimiterOptions {
  /** Slots of the pool: tasks running at once. */
  capacity: number;
  /** Slots one tenant may hold at once; capped at `capacity`. Default `capacity` (no bound). */
  perTenant?: number;
  /** The pool's name, for the shared leases. */
  name?: string;
  /** Cross-replica leases (scaled mode). */
  leases?: TenantLeases;
  /** Told when the shared leases failed and the bound fell back to this process. */
  onLeaseError?(error: unknown): void;
}

export interface AcquireOptions {
  signal?: AbortSignal;
  /**
   * Continues work its tenant already started (a PDF's extraction after its page count, a further
   * OCR pass): first in its tenant's queue. Still within the tenant's bound.
   */
  front?: boolean;
}

export interface FairLimiterStats {
  capacity: number;
  perTenant: number;
  /** Slots held now. */
  running: number;
  /** Tasks waiting for a slot (shared leases being waited for included). */
  queued: number;
  /** Tenants with work waiting. */
  waitingTenants: number;
  /** Tasks, since the start, that found a free slot but waited because their tenant was at its bound. */
  boundWaits: number;
  /** The most slots one user (any tenant but the system) has held at once, since the start. */
  peakTenantRunning: number;
}

interface Waiter {
  grant(): void;
  reject(reason: unknown): void;
}

interface Tenant {
  running: number;
  queue: Waiter[];
}

/** The default per-tenant bound of a pool of `capacity` slots: about half of them, at least one. */
export function defaultPerTenant(capacity: number): number {
  return Math.max(1, Math.ceil(capacity / 2));
}

/** The tenant key of work for `userId` (none: the system's). */
export function tenantKey(userId: string | number | undefined | null): string {
  return userId === undefined || userId === null || userId === '' ? SYSTEM_TENANT : String(userId);
}

export class FairLimiter {
  readonly capacity: number;
  readonly perTenant: number;
  readonly #name: string;
  readonly #leases: TenantLeases | undefined;
  readonly #onLeaseError: ((error: unknown) => void) | undefined;
  readonly #tenants = new Map<string, Tenant>();
  /** Tenants with work waiting, in the order they are served next (round-robin). */
  readonly #turns: string[] = [];
  #free: number;
  /** Tasks waiting for a shared lease, before they queue here. */
  #leasing = 0;
  #boundWaits = 0;
  #peak = 0;

  constructor(options: FairLimiterOptions) {
    const { capacity } = options;
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a positive whole number (got ${capacity})`);
    const perTenant = options.perTenant ?? capacity;
    if (!Number.isSafeInteger(perTenant) || perTenant < 1) throw new RangeError(`perTenant must be a positive whole number (got ${perTenant})`);
    this.capacity = capacity;
    this.perTenant = Math.min(perTenant, capacity);
    this.#free = capacity;
    this.#name = options.name ?? 'pool';
    this.#leases = options.leases;
    this.#onLeaseError = options.onLeaseError;
  }

  /** Tasks waiting for a slot. */
  get queued(): number {
    let waiting = this.#leasing;
    for (const tenant of this.#tenants.values()) waiting += tenant.queue.length;
    return waiting;
  }

  stats(): FairLimiterStats {
    return {
      capacity: this.capacity,
      perTenant: this.perTenant,
      running: this.capacity - this.#free,
      queued: this.queued,
      waitingTenants: this.#turns.length,
      boundWaits: this.#boundWaits,
      peakTenantRunning: this.#peak,
    };
  }

  /** Slots `tenant` may hold at once. */
  boundOf(tenant: string): number {
    return tenant === SYSTEM_TENANT ? this.capacity : this.perTenant;
  }

  /** Slots `tenant` holds now. */
  runningFor(tenant: string): number {
    return this.#tenants.get(tenant)?.running ?? 0;
  }

  /**
   * Resolves with a release function once `tenant` may run a task here (and, in scaled mode, holds
   * one of its shared leases); rejects with `signal.reason` when the signal aborts first.
   */
  async acquire(tenant: string, options: AcquireOptions = {}): Promise<() => void> {
    const { signal } = options;
    signal?.throwIfAborted();
    const releaseLease = this.#leases && tenant !== SYSTEM_TENANT ? await this.#lease(tenant, signal) : undefined;
    try {
      const releaseSlot = await this.#slot(tenant, options);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        releaseSlot();
        releaseLease?.();
      };
    } catch (error) {
      releaseLease?.();
      throw error;
    }
  }

  /** Fails every waiter with `reason` (the pool is closing). */
  rejectAll(reason: unknown): void {
    for (const key of this.#turns.splice(0)) {
      const tenant = this.#tenants.get(key)!;
      for (const waiter of tenant.queue.splice(0)) waiter.reject(reason);
      this.#forgetIfIdle(key);
    }
  }

  async #lease(tenant: string, signal: AbortSignal | undefined): Promise<(() => void) | undefined> {
    this.#leasing++;
    try {
      return await this.#leases!.acquire(this.#name, tenant, this.perTenant, signal);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      this.#onLeaseError?.(error);
      return undefined;
    } finally {
      this.#leasing--;
    }
  }

  #slot(tenant: string, { signal, front = false }: AcquireOptions): Promise<() => void> {
    signal?.throwIfAborted();
    const state = this.#tenant(tenant);
    // Taken at once only when nobody else is waiting to be served first.
    const bound = this.boundOf(tenant);
    if (this.#free > 0 && state.running < bound && this.#turns.length === 0) {
      this.#take(state, tenant);
      return Promise.resolve(this.#releaser(tenant));
    }
    if (this.#free > 0 && state.running >= bound) this.#boundWaits++;
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.#releaser(tenant));
        },
        reject: (reason) => {
          signal?.removeEventListener('abort', onAbort);
          reject(reason);
        },
      };
      const onAbort = () => {
        const index = state.queue.indexOf(waiter);
        if (index >= 0) state.queue.splice(index, 1);
        if (state.queue.length === 0) this.#leaveTurns(tenant);
        this.#forgetIfIdle(tenant);
        reject(signal!.reason);
        // The waiter that left may have been the head of the line: let the next one look.
        this.#dispatch();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (front) state.queue.unshift(waiter);
      else state.queue.push(waiter);
      if (!this.#turns.includes(tenant)) this.#turns.push(tenant);
      this.#dispatch();
    });
  }

  #tenant(key: string): Tenant {
    let state = this.#tenants.get(key);
    if (state === undefined) {
      state = { running: 0, queue: [] };
      this.#tenants.set(key, state);
    }
    return state;
  }

  #take(state: Tenant, key: string): void {
    this.#free--;
    state.running++;
    if (key !== SYSTEM_TENANT) this.#peak = Math.max(this.#peak, state.running);
  }

  /** Hands free slots to waiting tenants in turn, skipping those at their bound. */
  #dispatch(): void {
    let looked = 0;
    while (this.#free > 0 && looked < this.#turns.length) {
      const key = this.#turns[looked]!;
      const state = this.#tenants.get(key)!;
      if (state.running >= this.boundOf(key) || state.queue.length === 0) {
        looked++;
        continue;
      }
      const waiter = state.queue.shift()!;
      this.#take(state, key);
      // Served: to the back of the line, or out of it when nothing more waits.
      this.#turns.splice(looked, 1);
      if (state.queue.length > 0) this.#turns.push(key);
      waiter.grant();
    }
  }

  #releaser(key: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const state = this.#tenants.get(key)!;
      state.running--;
      this.#free++;
      this.#forgetIfIdle(key);
      this.#dispatch();
    };
  }

  #leaveTurns(key: string): void {
    const index = this.#turns.indexOf(key);
    if (index >= 0) this.#turns.splice(index, 1);
  }

  #forgetIfIdle(key: string): void {
    const state = this.#tenants.get(key);
    if (state && state.running === 0 && state.queue.length === 0) this.#tenants.delete(key);
  }
}
