/**
 * Runs the real service on loopback for integration tests: embedded PGlite in a temporary
 * DATA_DIR by default, or a fresh database on a real PostgreSQL server when TEST_DATABASE_URL
 * is set (the scaled tier runs the same tests that way).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config.ts';
import { withDefaultUser } from '../../src/storage/db.ts';
import { startService, type RunningService, type StartOptions } from '../../src/app.ts';
import type { Product } from '../../src/credits/products.ts';

/**
 * BROWSER_SANDBOX for the browsers tests start. As root (CI) the pool starts only with `off`, the
 * operator's explicit choice (docs/browser.md, "The sandbox"); as any other user tests run it as
 * the service does by default (`auto`: sandboxed where the machine allows it).
 */
export const TEST_BROWSER_SANDBOX = process.geteuid?.() === 0 ? 'off' : 'auto';

export interface TestService extends RunningService {
  env: Record<string, string>;
  /** A user with a token and the given balances. */
  user(balances?: Partial<Record<Product, number>>): Promise<{ id: number; token: string; secret_key: string }>;
  call(method: string, route: string, options?: { token?: string; body?: unknown; headers?: Record<string, string> }): Promise<TestResponse>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** Creates an empty PostgreSQL database for one test file; returns its URL and a dropper. */
export async function freshPostgresDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const pg = (await import('pg')).default;
  const name = `gleaner_t_${randomBytes(6).toString('hex')}`;
  adminUrl = withDefaultUser(adminUrl);
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

export async function startTestService(envOverrides: Record<string, string> = {}, options: StartOptions = {}): Promise<TestService> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-test-'));
  const database = process.env.TEST_DATABASE_URL ? await freshPostgresDatabase(process.env.TEST_DATABASE_URL) : null;
  const env: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost',
    // No Chromium probe unless a test asks for Google.
    SEARCH_ENGINES: 'bing,duckduckgo,brave,mojeek,startpage',
    BROWSER_SANDBOX: TEST_BROWSER_SANDBOX,
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...(process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL, REDIS_PREFIX: `gleaner-test-${randomBytes(4).toString('hex')}:` } : {}),
    ...envOverrides,
  };
  let running: RunningService;
  try {
    running = await startService(loadConfig(env), { logger: false, ...options });
  } catch (error) {
    // A start expected to fail leaves no database or directory behind.
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }

  const service: TestService = {
    ...running,
    env,
    async user(balances = {}) {
      const email = `u${randomBytes(5).toString('hex')}@example.com`;
      const created = await running.services.accounts.createUser({ name: 'Test user', email });
      for (const [product, amount] of Object.entries(balances)) {
        if (amount) await running.services.ledger.grant(created.id, product as Product, amount);
      }
      return created;
    },
    async call(method, route, callOptions = {}) {
      const headers: Record<string, string> = { accept: 'application/json', ...callOptions.headers };
      if (callOptions.token) headers.authorization = `Bearer ${callOptions.token}`;
      let body: string | undefined;
      if (callOptions.body !== undefined) {
        body = typeof callOptions.body === 'string' ? callOptions.body : JSON.stringify(callOptions.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await fetch(running.url + route, { method, headers, body });
      const text = await response.text();
      let parsed: unknown = undefined;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: response.status, headers: response.headers, body: parsed, text };
    },
    async close() {
      await running.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return service;
}
