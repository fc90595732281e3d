/** Requests in flight, so a shutdown can abort them (their holds are then released) and wait for them. */
export class InFlight {
  private readonly controllers = new Set<AbortController>();
  private waiters: Array<() => void> = [];

  track(controller: AbortController): () => void {
    this.controllers.add(controller);
    return () => {
      this.controllers.delete(controller);
      if (this.controllers.size === 0) for (const wake of this.waiters.splice(0)) wake();
    };
  }

  /** Resolves once no request is in flight (their holds are then settled). */
  drained(): Promise<void> {
    if (this.controllers.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  get size(): number {
    return this.controllers.size;
  }

  abortAll(reason: string): void {
    for (const c of this.controllers) c.abort(new Error(reason));
  }
}
