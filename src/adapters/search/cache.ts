/**
 * Optional cache of successful searches (SEARCH_CACHE_TTL seconds; off when unset or 0).
 *
 * Only `results` outcomes are stored. `unavailable` is transient by nature, and `no_results` is
 * left out too: an engine that briefly answers "nothing found" (a regional hiccup, a markup
 * change read as the marker) would otherwise pin that answer for the whole TTL, while a
 * repeated empty query costs one upstream request.
 */
import { createHash } from 'node:crypto';
import type { EngineName, SearchParams, SearchResult } from './types.ts';

export interface CachedSearch {
  results: SearchResult[];
  engine: EngineName;
}

export interface SearchCache {
  get(key: string): Promise<CachedSearch | undefined>;
  set(key: string, value: CachedSearch, ttlSeconds: number): Promise<void>;
}

/** Every parameter that changes the answer is part of the key. */
export function searchCacheKey(request: SearchParams & { perPage: number }): string {
  const parts = [request.query, request.country, request.language, request.page, request.perPage, request.timeRange ?? ''];
  return `search:v1:${createHash('sha256').update(JSON.stringify(parts)).digest('hex')}`;
}

interface MemoryEntry {
  value: CachedSearch;
  expiresAt: number;
}

/**
 * In-process store with expiry and least-recently-used eviction (a Map keeps insertion order,
 * so re-inserting on read moves an entry to the young end). Values are copied in and out so a
 * caller editing its results cannot change what the next caller gets.
 */
export class MemorySearchCache implements SearchCache {
  readonly #entries = new Map<string, MemoryEntry>();
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: { maxEntries?: number; now?: () => number } = {}) {
    this.#maxEntries = options.maxEntries ?? 1000;
    this.#now = options.now ?? Date.now;
    if (!Number.isInteger(this.#maxEntries) || this.#maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
  }

  get size(): number {
    return this.#entries.size;
  }

  async get(key: string): Promise<CachedSearch | undefined> {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    if (entry.expiresAt <= this.#now()) return undefined;
    this.#entries.set(key, entry);
    return structuredClone(entry.value);
  }

  async set(key: string, value: CachedSearch, ttlSeconds: number): Promise<void> {
    if (!(ttlSeconds > 0)) return;
    this.#entries.delete(key);
    this.#entries.set(key, { value: structuredClone(value), expiresAt: this.#now() + ttlSeconds * 1000 });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }
}

/** The two commands the Redis store needs; an ioredis client satisfies it. */
export interface RedisStringClient {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, expiryMode: 'EX', seconds: number): Promise<unknown>;
}

/** Shared store for several service processes; Redis expires the keys itself. */
export class RedisSearchCache implements SearchCache {
  readonly #client: RedisStringClient;
  readonly #prefix: string;

  constructor(client: RedisStringClient, options: { prefix?: string } = {}) {
    this.#client = client;
    this.#prefix = options.prefix ?? 'gleaner:';
  }

  async get(key: string): Promise<CachedSearch | undefined> {
    const raw = await this.#client.get(this.#prefix + key);
    if (raw === null) return undefined;
    try {
      const value = JSON.parse(raw) as CachedSearch;
      return Array.isArray(value?.results) && typeof value.engine === 'string' ? value : undefined;
    } catch {
      return undefined;
    }
  }

  async set(key: string, value: CachedSearch, ttlSeconds: number): Promise<void> {
    if (!(ttlSeconds > 0)) return;
    await this.#client.set(this.#prefix + key, JSON.stringify(value), 'EX', Math.ceil(ttlSeconds));
  }
}
