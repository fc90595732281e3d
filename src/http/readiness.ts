/**
 * GET /ready: whether this process should get traffic. 503 with the first reason it should not:
 * the database does not answer, Redis does not, the database's schema is behind or ahead of this
 * code's migrations (a deploy half done), the job queue has stopped, or the pools `serve` starts are still starting.
 * A process that is draining (shutting down, still serving) says so first: it is going away
 * whatever else holds.
 */
import { listMigrations } from '../storage/migrate.ts';
import type { Services } from '../services.ts';

export type Readiness = { ready: true } | { ready: false; reason: string };

/** The reason /ready gives while the process drains before it closes its listener. */
export const DRAINING_REASON = 'The server is shutting down (draining): it still serves requests, but takes no new traffic.';

export async function readiness(
  services: Pick<Services, 'db' | 'redis' | 'capabilities'> & { jobs?: Pick<Services['jobs'], 'healthy'> },
  state: { draining?: boolean } = {},
): Promise<Readiness> {
  if (state.draining) return { ready: false, reason: DRAINING_REASON };
  let applied: string[];
  try {
    applied = (await services.db.query<{ version: string }>('SELECT version FROM schema_migrations')).map((row) => row.version);
  } catch {
    return { ready: false, reason: 'The database is not reachable.' };
  }
  if (services.redis) {
    try {
      await services.redis.ping();
    } catch {
      return { ready: false, reason: 'Redis is not reachable.' };
    }
  }
  const known = listMigrations().map((m) => m.version);
  const pending = known.filter((version) => !applied.includes(version));
  if (pending.length) return { ready: false, reason: `The database schema is not current: pending migrations ${pending.join(', ')}.` };
  const unknown = applied.filter((version) => !known.includes(version));
  if (unknown.length) return { ready: false, reason: `The database has migrations this version does not know: ${unknown.join(', ')}.` };
  if (services.jobs && !services.jobs.healthy()) return { ready: false, reason: 'The job queue is stopped.' };
  if (!services.capabilities.started()) return { ready: false, reason: 'The PDF, OCR and browser pools are starting.' };
  return { ready: true };
}
