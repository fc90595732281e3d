/**
 * The microblog (X) adapter as a capability: its settings, read and checked at start-up.
 *
 * | variable | default |
 * |---|---|
 * | UPSTREAM_X_URL | https://x.com (GraphQL) |
 * | UPSTREAM_X_API_URL | https://api.x.com (guest token activation) |
 * | UPSTREAM_X_SYNDICATION_URL | https://cdn.syndication.twimg.com (embed source) |
 * | X_ACCOUNTS | none: search, user and user-tweets answer 503 |
 * | X_CONFIG_FILE | x-config.json beside this module |
 * | X_TIMEOUT_MS | 15000 |
 * | PAGE_TOKEN_SECRET | a secret generated once and kept in the database |
 */
import { readFileSync } from 'node:fs';
import type { Capability } from '../../core/capability.ts';
import { ConfigError } from '../../core/env.ts';
import type { Queryable } from '../../storage/db.ts';
import type { UpstreamRuntime } from '../kit/runtime.ts';
import { AccountPool, MemoryPoolState, RedisPoolState, type PoolRedisClient } from './accounts.ts';
import { XClient } from './client.ts';
import { DEFAULT_X_CONFIG_FILE, parseXConfig, type XConfig } from './config.ts';
import { PageTokens } from './page-token.ts';
import { parseSessions, type XSession } from './requests.ts';
import { PAGE_TOKEN_SECRET_NAME, pageTokenSecretSetting, pageTokensFor } from './secret.ts';

export const X_DEFAULT_URLS = {
  graphql: 'https://x.com',
  api: 'https://api.x.com',
  syndication: 'https://cdn.syndication.twimg.com',
} as const;

export interface XSettings {
  baseUrls: { graphql: string; api: string; syndication: string };
  sessions: XSession[];
  config: XConfig;
  timeoutMs: number;
  /** PAGE_TOKEN_SECRET, when set. */
  pageTokenSecret?: Buffer;
}

export interface XDeps {
  runtime: UpstreamRuntime;
  /** Present with REDIS_URL: the session pool's state is shared by every replica. */
  redis?: PoolRedisClient;
  redisPrefix: string;
  /** Where the generated page-token secret is kept (absent: one per process). */
  db?: Queryable;
}

/** What the endpoints use. */
export interface Microblog {
  client: XClient;
  pageTokens: PageTokens;
}

function readConfigFile(path: string | undefined): XConfig {
  const file = path ?? DEFAULT_X_CONFIG_FILE;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`X_CONFIG_FILE: cannot read ${String(file)} (${(error as Error).message}).`, 'X_CONFIG_FILE');
  }
  try {
    return parseXConfig(JSON.parse(text));
  } catch (error) {
    throw new ConfigError(`X_CONFIG_FILE: ${String(file)} is not a valid X configuration: ${(error as Error).message}.`, 'X_CONFIG_FILE');
  }
}

export const xCapability: Capability<XSettings, Microblog, XDeps> = {
  name: 'microblog',
  settings(env) {
    let sessions: XSession[];
    try {
      sessions = parseSessions(env.list('X_ACCOUNTS'));
    } catch (error) {
      throw new ConfigError((error as Error).message, 'X_ACCOUNTS');
    }
    return {
      baseUrls: {
        graphql: env.url('UPSTREAM_X_URL') ?? X_DEFAULT_URLS.graphql,
        api: env.url('UPSTREAM_X_API_URL') ?? X_DEFAULT_URLS.api,
        syndication: env.url('UPSTREAM_X_SYNDICATION_URL') ?? X_DEFAULT_URLS.syndication,
      },
      sessions,
      config: readConfigFile(env.text('X_CONFIG_FILE')),
      timeoutMs: env.positiveInteger('X_TIMEOUT_MS') ?? 15_000,
      pageTokenSecret: pageTokenSecretSetting(env),
    };
  },
  start(settings, deps) {
    const state = deps.redis ? new RedisPoolState(deps.redis, deps.redisPrefix) : new MemoryPoolState();
    const pool = new AccountPool(settings.sessions, state);
    return {
      client: new XClient({ config: settings.config, runtime: deps.runtime, pool, baseUrls: settings.baseUrls, timeoutMs: settings.timeoutMs }),
      pageTokens: pageTokensFor(settings.pageTokenSecret, deps.db, PAGE_TOKEN_SECRET_NAME),
    };
  },
  close: async () => {},
};
