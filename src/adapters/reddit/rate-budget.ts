/**
 * Reddit's rate-limit budget as its answers announce it (`X-Ratelimit-Remaining`: requests left
 * in the window, `X-Ratelimit-Reset`: seconds until the window resets). Once the budget is spent,
 * or after a 429, requests are refused here until the reset, without calling Reddit: hammering
 * an upstream that has said "stop" only prolongs the block.
 */
import { headerValue } from '../kit/decode.ts';

export type Admission = { ok: true } | { ok: false; resetInMs: number };

export class RateBudget {
  readonly #now: () => number;
  /** Requests left in the current window; null while unknown (no answer yet, or the window reset). */
  #remaining: number | null = null;
  #resetAt = 0;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Takes one request from the budget, or says how long until it refills. */
  take(): Admission {
    const now = this.#now();
    if (this.#remaining !== null && now >= this.#resetAt) this.#remaining = null;
    if (this.#remaining === null) return { ok: true };
    if (this.#remaining <= 0) return { ok: false, resetInMs: this.#resetAt - now };
    // Counted down locally too, so concurrent requests do not all spend the last unit.
    this.#remaining -= 1;
    return { ok: true };
  }

  /** Learns the budget from an answer's headers; a 429 spends it until the reset it names. */
  observe(headers: Record<string, string>, status: number): void {
    const now = this.#now();
    const remaining = Number.parseFloat(headerValue(headers, 'x-ratelimit-remaining') ?? '');
    const reset = Number.parseFloat(headerValue(headers, 'x-ratelimit-reset') ?? '');
    if (Number.isFinite(remaining) && Number.isFinite(reset) && reset >= 0) {
      this.#remaining = Math.floor(remaining);
      this.#resetAt = now + reset * 1000;
    }
    if (status === 429) {
      const retryAfter = Number.parseFloat(headerValue(headers, 'retry-after') ?? '');
      const waitSeconds = Number.isFinite(reset) && reset >= 0 ? reset : Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : 0;
      if (waitSeconds > 0) {
        this.#remaining = 0;
        this.#resetAt = Math.max(this.#resetAt, now + waitSeconds * 1000);
      }
    }
  }
}
