/**
 * Versioned SQL migrations: src/storage/migrations/NNNN_name.sql, applied in order, each in its
 * own transaction, recorded in schema_migrations. Safe to run from several processes at once:
 * an advisory lock serialises them on PostgreSQL (PGlite has a single connection anyway).
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Database } from './db.ts';

const MIGRATIONS_DIR = new URL('./migrations/', import.meta.url);
const LOCK_KEY = 7_411_029; // arbitrary constant shared by every gleaner process

export interface Migration {
  version: string;
  sql: string;
}

export function listMigrations(): Migration[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((name) => /^\d{4}_.+\.sql$/.test(name))
    .sort()
    .map((name) => ({ version: name.replace(/\.sql$/, ''), sql: readFileSync(new URL(name, MIGRATIONS_DIR), 'utf8') }));
}

/** Applies pending migrations; returns the versions applied now. */
export async function migrate(db: Database): Promise<string[]> {
  return db.transaction(async (tx) => {
    if (db.kind === 'postgres') await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
    await tx.query(
      `CREATE TABLE IF NOT EXISTS schema_migrations (
         version TEXT PRIMARY KEY,
         applied_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())`,
    );
    const done = new Set((await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    const applied: string[] = [];
    for (const migration of listMigrations()) {
      if (done.has(migration.version)) continue;
      for (const statement of splitStatements(migration.sql)) await tx.query(statement);
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [migration.version]);
      applied.push(migration.version);
    }
    return applied;
  });
}

/**
 * Splits a migration script into statements on top-level semicolons: those inside quoted strings,
 * quoted identifiers, dollar-quoted bodies (functions) and comments do not count.
 */
export function splitStatements(sql: string): string[] {
  // Sticky patterns, tried at the current position: what they match is never split.
  const comment = /--[^\n]*|\/\*[\s\S]*?\*\//y;
  const quoted = /'(?:[^']|'')*'|"(?:[^"]|"")*"/y;
  const dollarOpen = /\$([A-Za-z_][A-Za-z_0-9]*)?\$/y;
  const statements: string[] = [];
  let current = '';
  let i = 0;
  const at = (pattern: RegExp): RegExpExecArray | null => {
    pattern.lastIndex = i;
    return pattern.exec(sql);
  };
  while (i < sql.length) {
    let match: RegExpExecArray | null;
    if ((match = at(comment))) {
      i += match[0].length;
    } else if ((match = at(quoted))) {
      current += match[0];
      i += match[0].length;
    } else if ((match = at(dollarOpen))) {
      const end = sql.indexOf(match[0], i + match[0].length);
      if (end < 0) throw new Error(`Unterminated ${match[0]} quote in a migration.`);
      current += sql.slice(i, end + match[0].length);
      i = end + match[0].length;
    } else if (sql[i] === ';') {
      statements.push(current);
      current = '';
      i++;
    } else {
      current += sql[i++];
    }
  }
  statements.push(current);
  return statements.map((s) => s.trim()).filter(Boolean);
}
