/**
 * Skill names → Freelancer job ids. Search filters by job id (`jobs[]`), users name skills, so the
 * catalogue (`/projects/0.1/jobs/`, a few thousand entries that change rarely) is read once and
 * kept for `ttlMs`. Concurrent requests share one read; a failed read is not kept, the next
 * request asks again.
 */
import type { Job } from './types.ts';

export type CatalogueRead = { kind: 'ok'; jobs: Job[] } | { kind: 'failed'; outcome: unknown };

/** The resolution of a list of names: their ids in order, or the names the catalogue lacks. */
export type SkillResolution = { kind: 'ok'; ids: number[] } | { kind: 'unknown'; names: string[] };

/** How names are compared: case, surrounding and repeated spaces do not matter. */
export const skillKey = (name: string) => name.trim().replace(/\s+/g, ' ').toLowerCase();

export class JobIndex {
  readonly #byKey = new Map<string, number>();

  constructor(jobs: readonly Job[]) {
    // A name wins over another job's seo_url ("C" the language, not a slug that reads "c").
    for (const job of jobs) if (job.seoUrl) this.#byKey.set(skillKey(job.seoUrl), job.id);
    for (const job of jobs) this.#byKey.set(skillKey(job.name), job.id);
  }

  resolve(names: readonly string[]): SkillResolution {
    const ids: number[] = [];
    const unknown: string[] = [];
    for (const name of names) {
      const id = this.#byKey.get(skillKey(name));
      if (id === undefined) unknown.push(name.trim());
      else if (!ids.includes(id)) ids.push(id);
    }
    return unknown.length > 0 ? { kind: 'unknown', names: unknown } : { kind: 'ok', ids };
  }
}

export class SkillCatalogue {
  readonly #read: () => Promise<CatalogueRead>;
  readonly #ttlMs: number;
  readonly #now: () => number;
  #index: { index: JobIndex; until: number } | undefined;
  #pending: Promise<CatalogueRead> | undefined;
  /** Catalogue reads made so far (for tests and the log). */
  reads = 0;

  constructor(read: () => Promise<CatalogueRead>, ttlMs: number, now: () => number = Date.now) {
    this.#read = read;
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** The index, read when absent or stale; a failed read answers its outcome. */
  async index(): Promise<{ kind: 'ok'; index: JobIndex } | { kind: 'failed'; outcome: unknown }> {
    const cached = this.#index;
    if (cached && cached.until > this.#now()) return { kind: 'ok', index: cached.index };
    this.#pending ??= (async () => {
      this.reads += 1;
      try {
        return await this.#read();
      } finally {
        this.#pending = undefined;
      }
    })();
    const read = await this.#pending;
    if (read.kind !== 'ok') return read;
    const index = new JobIndex(read.jobs);
    this.#index = { index, until: this.#now() + this.#ttlMs };
    return { kind: 'ok', index };
  }
}
