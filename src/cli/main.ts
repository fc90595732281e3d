/**
 * `gleaner <command>`: the operator's command line (contract §8).
 * Embedded mode: when a server holds DATA_DIR, commands go through its admin socket; otherwise
 * the CLI opens the database itself (and holds the lock while it does). PostgreSQL mode: the
 * CLI connects directly, whatever servers are running.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { assertKnownCommand, OperatorError, runOperatorCommand, UsageError, USAGE, type OperatorServices } from '../operator/commands.ts';
import { sendAdminCommand } from '../operator/admin-socket.ts';
import { DataDirBusyError, lockDataDir } from '../storage/data-dir-lock.ts';
import { openDatabase } from '../storage/db.ts';
import { migrate } from '../storage/migrate.ts';
import { AccountStore } from '../accounts/store.ts';
import { CreditLedger } from '../credits/ledger.ts';
import { Prices, seedPrices } from '../credits/prices.ts';
import { render } from './render.ts';

// The HTTP server (and everything it serves) is loaded only by `serve`, so operator commands
// start quickly.

function print(result: unknown, json: boolean): void {
  // A terminal's width fits the tables to it; a pipe or a file gets them whole (cells cut at MAX_CELL).
  process.stdout.write(render(result, json, process.stdout.isTTY ? process.stdout.columns : undefined) + '\n');
}

const BIN = fileURLToPath(new URL('../../bin/gleaner', import.meta.url));

/**
 * How to run this command line again, as the running process was started: through npm (`gleaner`
 * is not on the PATH, `npm run gleaner --` is), or with this Node and bin/gleaner, with the
 * DATA_DIR it was given (the embedded server answers the commands of its own DATA_DIR only).
 */
export function commandPrefix(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd(), execPath = process.execPath): string {
  const dataDir = !env.DATABASE_URL && env.DATA_DIR ? `DATA_DIR=${shellWord(env.DATA_DIR)} ` : '';
  if (env.npm_lifecycle_event !== undefined) return `${dataDir}npm run -s gleaner --`;
  const relative = (file: string) => {
    const shown = path.relative(cwd, file);
    return shown.startsWith('..') || path.isAbsolute(shown) ? file : shown;
  };
  const node = path.basename(execPath) === 'node' && !execPath.startsWith(path.dirname(path.dirname(BIN))) ? 'node' : relative(execPath);
  return `${dataDir}${shellWord(node)} ${shellWord(relative(BIN))}`;
}

/** A word the shell reads back as it is. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

async function serve(): Promise<void> {
  // Every setting is checked first (here and in startService's checkSettings), then DATA_DIR is
  // locked, the database migrated and the owner created: a bad setting leaves nothing behind.
  const config = loadConfig();
  const { startService } = await import('../app.ts');
  // The first start takes a while (OCR model, browser): say what it is doing.
  const progress = (message: string) => process.stderr.write(`gleaner: ${message}…\n`);
  const showOwner = (owner: { id: number; token: string; secret_key: string }) =>
    process.stdout.write(
      [
        '',
        'First start: created the owner account. These are shown once and stored only as hashes:',
        `  user id:    ${owner.id}`,
        `  API token:  ${owner.token}`,
        `  secret key: ${owner.secret_key}`,
        `Give it credits with: ${commandPrefix()} credits grant --user ${owner.id} --product scraping --amount 1000`,
        '',
      ].join('\n') + '\n',
    );
  const notice = (message: string) => process.stderr.write(`gleaner: ${message}\n`);
  const service = await startService(config, { warm: true, progress, notice, onOwner: showOwner });
  service.server.app.log.info({ url: service.url, database: service.services.db.kind }, 'gleaner is serving');
  // Shutdown, on SIGTERM or SIGINT: first the drain (SHUTDOWN_DRAIN_MS; /ready says 503 so a
  // balancer stops sending new requests, which are still served until it notices), then the
  // close (no new connections, requests in flight get SHUTDOWN_GRACE_MS). A second signal during
  // the drain closes at once; one during the close stops the process outright (the default action).
  let drainTimer: NodeJS.Timeout | undefined;
  const close = (signal: string) => {
    clearTimeout(drainTimer);
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    service.server.app.log.info({ signal }, 'shutting down');
    service.close().then(
      () => process.exit(0),
      (error) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (service.server.draining() || config.shutdownDrainMs === 0) return close(signal);
    service.server.drain();
    service.server.app.log.info({ signal, drainMs: config.shutdownDrainMs }, 'draining: /ready answers 503, requests are still served until the listener closes');
    drainTimer = setTimeout(() => close(signal), config.shutdownDrainMs);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/** The storage alone, for commands run in this process: no Redis, outbound client or extraction
 *  engines, which operator commands never use and which would only slow every command down. */
async function openStorage(config: Config, options: { migrate: boolean }): Promise<OperatorServices & { close(): Promise<void> }> {
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    if (options.migrate) await migrate(db).then(() => seedPrices(db));
  } catch (error) {
    await db.close().catch(() => {});
    throw error;
  }
  return {
    db,
    accounts: new AccountStore(db),
    ledger: new CreditLedger(db, { holdTtlSeconds: config.holdTtlSeconds }),
    prices: new Prices(db),
    close: () => db.close(),
  };
}

/** Whether DATA_DIR holds an embedded database (PGlite writes PG_VERSION when it creates one). */
function embeddedDatabaseExists(dataDir: string): boolean {
  return existsSync(path.join(dataDir, 'pg', 'PG_VERSION'));
}

function noDatabaseMessage(dataDir: string): string {
  return [
    `No gleaner server or database was found in DATA_DIR=${dataDir}.`,
    'Run the command with the DATA_DIR the server uses (DATA_DIR=/path/to/data gleaner ...; it defaults to ./data of the',
    'current directory), or set DATABASE_URL when the server uses PostgreSQL.',
    'To create a new database there on purpose, run `gleaner migrate` or start the server with `gleaner serve`.',
  ].join('\n');
}

async function operator(argv: string[]): Promise<unknown> {
  assertKnownCommand(argv);
  const config = loadConfig();
  if (!config.databaseUrl) {
    const reply = await sendAdminCommand(config.dataDir, argv);
    if (reply) {
      if (reply.ok) return reply.result;
      throw reply.usage ? new UsageError(reply.error) : new OperatorError(reply.error);
    }
  }
  // No server answered on DATA_DIR's socket: open its database directly, but never create one
  // as a side effect of an operator command (a mistyped DATA_DIR would start an empty ledger).
  if (!config.databaseUrl && argv[0] !== 'migrate' && !embeddedDatabaseExists(config.dataDir)) throw new OperatorError(noDatabaseMessage(config.dataDir));
  const unlock = config.databaseUrl ? () => {} : lockDataDir(config.dataDir);
  try {
    const services = await openStorage(config, { migrate: argv[0] !== 'migrate' });
    try {
      return await runOperatorCommand(services, argv);
    } finally {
      await services.close();
    }
  } finally {
    unlock();
  }
}

/** `gleaner upstreams probe`: exit 0 when every upstream answered `ok`, 1 otherwise (for cron). */
async function probe(args: string[], json: boolean): Promise<number> {
  const unknown = args.filter((arg) => arg !== '--json');
  if (unknown.length > 0) throw new UsageError(`Unknown option for upstreams probe: ${unknown.join(' ')}`);
  const { probeUpstreams } = await import('../operator/probe.ts');
  const results = await probeUpstreams(loadConfig());
  print(results, json);
  return results.every((result) => result.verdict === 'ok') ? 0 : 1;
}

/** `gleaner mcp`: the MCP server over stdio, relaying to a running server (docs/mcp.md). Stdout is the protocol's alone. */
async function mcp(args: string[]): Promise<number> {
  // `npm run gleaner -- mcp` without -s: npm has already written its banner on this stdout, ahead
  // of any JSON-RPC. Say how to start it so that the stream is the protocol's alone.
  if (process.env.npm_lifecycle_event === 'gleaner' && process.env.npm_config_loglevel !== 'silent') {
    console.error(
      'gleaner mcp: npm printed its banner on stdout, which MCP clients read as JSON-RPC. Start it with `npm run -s gleaner -- mcp …` (-s keeps npm quiet) or `node_modules/.bin/node bin/gleaner mcp …`.',
    );
    return 2;
  }
  const { McpConnectError, McpUsageError, runStdio, stdioOptions } = await import('../mcp/stdio.ts');
  const { readFileSync } = await import('node:fs');
  const version: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
  try {
    await runStdio(stdioOptions(args, process.env, version));
    return 0;
  } catch (error) {
    if (!(error instanceof McpUsageError) && !(error instanceof McpConnectError)) throw error;
    console.error(`gleaner mcp: ${error.message}`);
    return error instanceof McpUsageError ? 2 : 1;
  }
}

export async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  try {
    if (argv.length === 0 || argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h') {
      console.log(USAGE);
      return argv.length === 0 ? 2 : 0;
    }
    if (argv[0] === 'serve') {
      await serve();
      return -1; // keeps running
    }
    if (argv[0] === 'upstreams' && argv[1] === 'probe') return await probe(argv.slice(2), json);
    if (argv[0] === 'mcp') return await mcp(argv.slice(1));
    print(await operator(argv), json);
    return 0;
  } catch (error) {
    const usage = error instanceof UsageError;
    const known = usage || error instanceof OperatorError || error instanceof ConfigError || error instanceof DataDirBusyError;
    let message = known ? (error as Error).message : `Unexpected error: ${(error as Error).stack ?? error}`;
    // The variable at fault is always named, even by a module whose message forgot it.
    const variable = error instanceof ConfigError ? error.variable : undefined;
    if (variable && !message.includes(variable)) message = `${variable}: ${message}`;
    if (json) process.stdout.write(JSON.stringify({ error: message }) + '\n');
    else console.error(message);
    // A bad setting is a usage error too: exit 2, as for a bad command line.
    return usage || error instanceof ConfigError ? 2 : 1;
  }
}
