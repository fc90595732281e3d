/**
 * The app-only OAuth token, shared by every request of the process: fetched on first use, reused
 * until shortly before it expires, and refreshed by one request while the others wait for that
 * same refresh (never one refresh per request). A token Reddit refuses (401) is forgotten so the
 * next use fetches a new one.
 */

export interface FetchedToken {
  accessToken: string;
  expiresInSeconds: number;
}

export type TokenFetch = () => Promise<{ kind: 'ok'; value: FetchedToken } | { kind: 'failed'; reason: string }>;

export type TokenResult = { kind: 'ok'; token: string } | { kind: 'failed'; reason: string };

/** Refresh this long before expiry: half the lifetime, at most five minutes (Reddit's tokens live a day). */
export function refreshMarginMs(lifetimeMs: number): number {
  return Math.min(5 * 60_000, lifetimeMs / 2);
}

interface HeldToken {
  token: string;
  expiresAt: number;
  refreshAt: number;
}

export class AppTokenCache {
  readonly #fetch: TokenFetch;
  readonly #now: () => number;
  #current: HeldToken | null = null;
  #refreshing: Promise<TokenResult> | null = null;
  #refreshes = 0;

  constructor(fetch: TokenFetch, now: () => number = Date.now) {
    this.#fetch = fetch;
    this.#now = now;
  }

  /** How many token requests were made (for the operator's logs and the tests). */
  get refreshes(): number {
    return this.#refreshes;
  }

  /** A token good for the next request: the cached one, or the result of the (one) refresh in flight. */
  async token(): Promise<TokenResult> {
    const current = this.#current;
    if (current && this.#now() < current.refreshAt) return { kind: 'ok', token: current.token };
    return this.#refresh();
  }

  /** Reddit refused `token`: drop it, unless a newer one already replaced it. */
  invalidate(token: string): void {
    if (this.#current?.token === token) this.#current = null;
  }

  #refresh(): Promise<TokenResult> {
    this.#refreshing ??= this.#fetchOnce().finally(() => {
      this.#refreshing = null;
    });
    return this.#refreshing;
  }

  async #fetchOnce(): Promise<TokenResult> {
    this.#refreshes += 1;
    const fetched = await this.#fetch();
    const now = this.#now();
    if (fetched.kind !== 'ok') {
      // A refresh that failed before expiry leaves the old token usable until it expires.
      const current = this.#current;
      if (current && now < current.expiresAt) return { kind: 'ok', token: current.token };
      return { kind: 'failed', reason: fetched.reason };
    }
    const lifetimeMs = fetched.value.expiresInSeconds * 1000;
    this.#current = { token: fetched.value.accessToken, expiresAt: now + lifetimeMs, refreshAt: now + lifetimeMs - refreshMarginMs(lifetimeMs) };
    return { kind: 'ok', token: fetched.value.accessToken };
  }
}
