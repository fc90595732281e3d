/**
 * The message port between pdf.js's API and its parsing side, which run in the same thread here.
 *
 * pdf.js's own fallback for Node (its LoopbackPort) copies every message with structuredClone, as
 * a real worker boundary would. A page's text travels as hundreds of small messages (chunks of
 * about ten text items plus flow-control messages: ~24,000 per pass over a 117-page book), and
 * structuredClone's fixed cost per call was about a sixth of the extraction time. Messages made of
 * plain objects, dense arrays and primitives, which is all the text and control traffic, are
 * copied here by a JavaScript walk about five times faster. Anything else (typed arrays, Maps,
 * class instances, transfers...) still goes through structuredClone.
 *
 * Messages are still copied, so neither side ever sees the other's later changes (pdf.js reuses
 * some objects right after sending them). Delivery is one microtask later, as in pdf.js's fallback.
 */

import type { Transferable } from 'node:worker_threads';

type Listener = (this: InThreadPort, event: { data: unknown }) => void;

/** Returned by the walk when a value needs structuredClone. */
const NOT_PLAIN = Symbol('not plain');

/** Deeper messages (pdf.js sends none) go to structuredClone rather than deep recursion. */
const MAX_DEPTH = 64;

/**
 * Copies what structuredClone would produce for plain data: own enumerable properties in order,
 * shared references and cycles kept as such, null-prototype objects made ordinary objects.
 * (`for...in` sees only own properties here: pdf.js refuses to run when Object.prototype has
 * enumerable additions.)
 */
function copyPlainData(value: unknown, copies: Map<object, unknown>, depth: number): unknown {
  if (typeof value !== 'object' || value === null) {
    return typeof value === 'function' || typeof value === 'symbol' ? NOT_PLAIN : value;
  }
  const known = copies.get(value);
  if (known !== undefined) return known;
  if (depth > MAX_DEPTH) return NOT_PLAIN;

  if (Array.isArray(value)) {
    // Holes and named properties on an array: leave those to structuredClone.
    if (Object.getPrototypeOf(value) !== Array.prototype || Object.keys(value).length !== value.length) return NOT_PLAIN;
    const copy: unknown[] = new Array(value.length);
    copies.set(value, copy);
    for (let index = 0; index < value.length; index++) {
      if (!(index in value)) return NOT_PLAIN;
      const element = copyPlainData(value[index], copies, depth + 1);
      if (element === NOT_PLAIN) return NOT_PLAIN;
      copy[index] = element;
    }
    return copy;
  }

  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return NOT_PLAIN;
  const copy: Record<string, unknown> = {};
  copies.set(value, copy);
  for (const key in value) {
    if (key === '__proto__') return NOT_PLAIN; // assigning it would set the copy's prototype
    const property = copyPlainData((value as Record<string, unknown>)[key], copies, depth + 1);
    if (property === NOT_PLAIN) return NOT_PLAIN;
    copy[key] = property;
  }
  return copy;
}

function copyMessage(data: unknown, transfer: Transferable[] | undefined): unknown {
  if (!transfer?.length) {
    const copy = copyPlainData(data, new Map(), 0);
    if (copy !== NOT_PLAIN) return copy;
  }
  return structuredClone(data, transfer?.length ? { transfer } : undefined);
}

/** Both ends of the channel: pdf.js's message handlers listen on it and skip messages not theirs. */
export class InThreadPort {
  readonly #listeners = new Map<Listener, (() => void) | null>();
  readonly #settled = Promise.resolve();

  postMessage(data: unknown, transfer?: Transferable[]): void {
    const event = { data: copyMessage(data, transfer) };
    this.#settled.then(() => {
      for (const listener of this.#listeners.keys()) {
        // As an EventTarget does: a listener that throws does not keep the message from the
        // others, and its error is still reported (uncaught, as it would be from a real port).
        try {
          listener.call(this, event);
        } catch (error) {
          queueMicrotask(() => {
            throw error;
          });
        }
      }
    });
  }

  addEventListener(_type: 'message', listener: Listener, options?: { signal?: AbortSignal }): void {
    const signal = options?.signal;
    if (signal?.aborted) return;
    let unsubscribe: (() => void) | null = null;
    if (signal) {
      const onAbort = () => this.removeEventListener('message', listener);
      signal.addEventListener('abort', onAbort, { once: true });
      unsubscribe = () => signal.removeEventListener('abort', onAbort);
    }
    this.#listeners.set(listener, unsubscribe);
  }

  removeEventListener(_type: 'message', listener: Listener): void {
    this.#listeners.get(listener)?.();
    this.#listeners.delete(listener);
  }

  terminate(): void {
    for (const unsubscribe of this.#listeners.values()) unsubscribe?.();
    this.#listeners.clear();
  }
}
