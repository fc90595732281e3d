/**
 * The storage layer speaks one SQL dialect (PostgreSQL) over two engines: embedded PGlite in
 * DATA_DIR (default, one process) or a real PostgreSQL server through `pg` (DATABASE_URL, any
 * number of processes). Everything above this file sees only `Database`.
 */
import { mkdirSync } from 'node:fs';
import os from 'node:os';

export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Embedded mode: the PGlite instance itself, for the job queue, which runs on it too. */
  readonly embedded?: import('@electric-sql/pglite').PGlite;
  /** Runs `fn` in one transaction; rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Runs a script of several statements (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * Calls `onMessage` with the payload of every NOTIFY on `channel`, from any process, until the
   * returned function is called. When the listening connection is lost, `onListening(false)` is
   * called (messages are being missed) and the listener reconnects; `onListening(true)` once it
   * listens again. Embedded: one process, nothing to listen to (undefined).
   */
  listen?(channel: string, onMessage: (payload: string) => void, onListening: (listening: boolean) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/**
 * PostgreSQL text cannot hold the NUL character: a parameter with one fails its statement. Client
 * input reaches some statements as it came (a history filter, a name), so NUL is replaced by
 * U+FFFD, the replacement character, in every text parameter: a filter then matches nothing and a
 * stored name shows where the NUL was, instead of a 500.
 */
function storableParams(params: unknown[]): unknown[] {
  return params.some(holdsNul) ? params.map(withoutNul) : params;
}

function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  return Array.isArray(value) && value.some(holdsNul);
}

function withoutNul(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('\u0000', '\uFFFD');
  return Array.isArray(value) ? value.map(withoutNul) : value;
}

export async function openDatabase(options: { databaseUrl?: string; dataDir: string }): Promise<Database> {
  return options.databaseUrl ? openPostgres(options.databaseUrl) : openPglite(options.dataDir);
}

async function openPglite(dataDir: string): Promise<Database> {
  const { PGlite } = await import('@electric-sql/pglite');
  mkdirSync(dataDir, { recursive: true });
  const db = await PGlite.create(`${dataDir}/pg`);
  const wrap = (q: { query: typeof db.query }): Queryable => ({
    async query<R>(sql: string, params: unknown[] = []) {
      return (await q.query<R>(sql, storableParams(params))).rows;
    },
  });
  return {
    kind: 'pglite',
    embedded: db,
    ...wrap(db),
    transaction: (fn) => db.transaction((tx) => fn(wrap(tx))),
    async exec(sql) {
      await db.exec(sql);
    },
    close: () => db.close(),
  };
}

/** Distinct statement texts given a server-side name; texts beyond (SQL built from values) run unnamed. */
const MAX_NAMED_STATEMENTS = 200;

/**
 * Names each distinct statement text so every pooled connection parses and plans it once, then
 * only binds and executes it: the per-request statements are CTEs whose planning costs more than
 * running them. DATABASE_PREPARED_STATEMENTS=off turns this off for connection poolers that
 * cannot carry named statements (PgBouncer in transaction mode before 1.21).
 */
function statementNamer(env: NodeJS.ProcessEnv): (sql: string) => string | undefined {
  if (['off', 'false', '0'].includes((env.DATABASE_PREPARED_STATEMENTS ?? '').toLowerCase())) return () => undefined;
  const names = new Map<string, string>();
  return (sql) => {
    let name = names.get(sql);
    if (name === undefined && names.size < MAX_NAMED_STATEMENTS) {
      name = `gleaner_${names.size + 1}`;
      names.set(sql, name);
    }
    return name;
  };
}

async function openPostgres(url: string): Promise<Database> {
  const pg = (await import('pg')).default;
  // int8 (ids, sums) as JavaScript numbers: every value we store fits in 2^53.
  pg.types.setTypeParser(20, (v: string) => Number(v));
  const pool = new pg.Pool({ connectionString: withDefaultUser(url), max: Number(process.env.DATABASE_POOL_SIZE ?? 10) });
  pool.on('error', () => {
    // An idle client lost its connection; the pool replaces it. Queries surface their own errors.
  });
  const nameFor = statementNamer(process.env);
  return {
    kind: 'postgres',
    async query<R>(sql: string, params: unknown[] = []) {
      return (await pool.query({ text: sql, values: storableParams(params), name: nameFor(sql) })).rows as R[];
    },
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn({
          async query<R>(sql: string, params: unknown[] = []) {
            return (await client.query(sql, storableParams(params))).rows as R[];
          },
        });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    async exec(sql) {
      await pool.query(sql);
    },
    listen: (channel, onMessage, onListening) => listenPostgres(pg, withDefaultUser(url), channel, onMessage, onListening),
    close: () => pool.end(),
  };
}

/** A dedicated connection that LISTENs, reconnecting (after 1 s, then up to 30 s) when lost. */
async function listenPostgres(
  pg: typeof import('pg').default,
  url: string,
  channel: string,
  onMessage: (payload: string) => void,
  onListening: (listening: boolean) => void,
): Promise<() => Promise<void>> {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`Bad channel name "${channel}".`);
  let client: InstanceType<typeof pg.Client> | null = null;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let delay = 1_000;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url });
    next.on('notification', (message) => {
      if (message.channel === channel) onMessage(message.payload ?? '');
    });
    const lost = () => {
      if (client !== next || stopped) return;
      client = null;
      next.end().catch(() => {});
      onListening(false);
      schedule();
    };
    next.on('error', lost);
    next.on('end', lost);
    await next.connect();
    await next.query(`LISTEN ${channel}`);
    client = next;
    delay = 1_000;
  };
  const schedule = () => {
    retry = setTimeout(() => {
      connect().then(
        () => onListening(true),
        () => {
          delay = Math.min(delay * 2, 30_000);
          schedule();
        },
      );
    }, delay);
    retry.unref();
  };

  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const current = client;
    client = null;
    await current?.end().catch(() => {});
  };
}

/**
 * libpq falls back to the OS user when a URL names none; pg only reads $USER, which services and
 * containers often lack. Same fallback, so `postgres://host/db` works as it does for psql.
 */
export function withDefaultUser(url: string): string {
  const parsed = new URL(url);
  if (parsed.username || /^postgres(ql)?:$/.test(parsed.protocol) === false) return url;
  parsed.username = encodeURIComponent(process.env.PGUSER || process.env.USER || os.userInfo().username);
  return parsed.toString();
}
