/** A first-come, first-served counting semaphore whose waiters can give up (deadline, shutdown). */
export class Limiter {
  #free: number;
  readonly #waiters: Array<{ grant: () => void; reject: (reason: unknown) => void }> = [];

  constructor(capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError(`Invalid limiter capacity ${capacity}`);
    this.#free = capacity;
  }

  get queued(): number {
    return this.#waiters.length;
  }

  /** Resolves with a release function once a slot is free; rejects with `signal.reason` on abort. */
  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#free > 0) {
      this.#free -= 1;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(this.#releaser());
        },
        reject: (reason: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(reason);
        },
      };
      const onAbort = () => {
        const index = this.#waiters.indexOf(waiter);
        if (index !== -1) this.#waiters.splice(index, 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  /** Fails every waiter with `reason`. */
  rejectAll(reason: unknown): void {
    for (const waiter of this.#waiters.splice(0)) waiter.reject(reason);
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiters.shift();
      if (next !== undefined) next.grant();
      else this.#free += 1;
    };
  }
}
