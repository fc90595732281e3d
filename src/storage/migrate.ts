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

/** Splits a migration script on top-level semicolons (our migrations use no function bodies). */
function splitStatements(sql: string): string[] {
  return sql
    .replace(/--[^\n]*/g, '')
    .split(';')
    .map((s) => s.trim())
    .filter(Boolean);
}
