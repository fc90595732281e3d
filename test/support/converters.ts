/** Conversion pools for tests: each file's pools are closed when its tests end. */
import { after } from 'node:test';
import { createPageConverter, type PageConverter } from '../../src/adapters/web/converter.ts';

/** A factory of conversion pools, all closed after the calling file's tests. */
export function convertersClosedAfter(): (options: Parameters<typeof createPageConverter>[0]) => PageConverter {
  const created: PageConverter[] = [];
  after(() => Promise.all(created.map((pool) => pool.close())));
  return (options) => {
    const pool = createPageConverter(options);
    created.push(pool);
    return pool;
  };
}
