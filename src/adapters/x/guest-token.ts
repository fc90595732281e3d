/**
 * The guest token single posts are read with: activated once (POST /1.1/guest/activate.json with
 * the public bearer token), shared by every request of the process, renewed when X refuses it or
 * after MAX_AGE_MS (X lets them lapse after a few hours). Concurrent requests wait for one
 * activation instead of each asking for its own.
 */

/** Renewed before X lets it lapse. */
export const GUEST_TOKEN_MAX_AGE_MS = 60 * 60 * 1000;

export class GuestTokens {
  readonly #activate: () => Promise<string>;
  readonly #now: () => number;
  #current: { token: string; at: number } | null = null;
  #pending: Promise<string> | null = null;

  /** `activate` asks X for a new token; it rejects with the reason when X gives none. */
  constructor(activate: () => Promise<string>, now: () => number = Date.now) {
    this.#activate = activate;
    this.#now = now;
  }

  async get(): Promise<string> {
    if (this.#current && this.#now() - this.#current.at < GUEST_TOKEN_MAX_AGE_MS) return this.#current.token;
    this.#pending ??= this.#activate()
      .then((token) => {
        this.#current = { token, at: this.#now() };
        return token;
      })
      .finally(() => {
        this.#pending = null;
      });
    return this.#pending;
  }

  /** X refused `token`: the next `get` activates a new one (unless another request already did). */
  refuse(token: string): void {
    if (this.#current?.token === token) this.#current = null;
  }
}
