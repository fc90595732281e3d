/**
 * Starting and stopping the whole service: storage, migrations, the first owner account, the
 * hold sweeper, the admin socket (embedded mode) and the HTTP server. Used by `gleaner serve`
 * and by the integration tests, which run the real server on loopback.
 */
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import type { Server } from 'node:net';
import type { Config } from './config.ts';
import { createPlatformServices, type Services } from './services.ts';
import { buildServer, type GleanerServer } from './http/server.ts';
import { ENDPOINTS } from './endpoints/table.ts';
import { listenAdminSocket } from './operator/admin-socket.ts';
import { lockDataDir } from './storage/data-dir-lock.ts';
import type { Endpoint } from './pipeline/endpoint.ts';
import type { FastifyBaseLogger } from 'fastify';
import { checkCapabilitySettings } from './capabilities.ts';
import { ConfigError, envReader } from './core/env.ts';
import { metricsSettings } from './metrics/index.ts';
import { HostExemptions } from './outbound/url-policy.ts';

export const VERSION: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

export interface RunningService {
  url: string;
  services: Services;
  server: GleanerServer;
  /** Set on the first start of an empty database: shown once, never stored in clear. */
  owner?: { id: number; token: string; secret_key: string };
  close(): Promise<void>;
}

export interface StartOptions {
  endpoints?: readonly Endpoint[];
  logger?: boolean | object;
  /** Create the owner account on an empty database (default true). */
  bootstrapOwner?: boolean;
  /** Start the PDF, OCR and browser pools once listening, so the first requests do not wait (serve does); /ready is 503 until then. */
  warm?: boolean;
  /** Told what the start is doing (opening the database, migrating, starting each pool). */
  progress?: (message: string) => void;
  /** Told what the start found that the operator should read (each EVM chain's chain id check); `progress` when not given. */
  notice?: (message: string) => void;
  /** Told the owner account created on the first start of an empty database, before listening. */
  onOwner?(owner: { id: number; token: string; secret_key: string }): void;
}

/**
 * The service's pino logger: an object is pino options (with an optional `stream`); `false` is no
 * logger at all (undefined), so requests skip creating a child logger each, as Fastify's own
 * `logger: false` does.
 */
function createLogger(config: Config, option: StartOptions['logger']): FastifyBaseLogger | undefined {
  if (option === false) return undefined;
  const { stream, ...settings } = typeof option === 'object' ? (option as { stream?: NodeJS.WritableStream }) : {};
  const options = { level: config.logLevel, ...settings };
  return stream ? pino(options, stream as pino.DestinationStream) : pino(options);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** `scheme://...` with one of the schemes, or a ConfigError naming the variable. */
function checkServiceUrl(name: string, value: string | undefined, schemes: string[]): void {
  if (value === undefined) return;
  let protocol: string;
  try {
    protocol = new URL(value).protocol.replace(/:$/, '');
  } catch {
    throw new ConfigError(`${name} must be a URL such as ${schemes[0]}://host:port/... (got "${value}").`, name);
  }
  if (!schemes.includes(protocol)) throw new ConfigError(`${name} must be a ${schemes.join(' or ')} URL (got "${value}").`, name);
}

/**
 * Every setting the start reads, checked before anything exists: loadConfig has read the core
 * ones; this reads the rest (the capabilities', the metrics', the listeners' and the stores'
 * URLs). A start refused here has created no DATA_DIR, run no migration and made no owner.
 */
export async function checkSettings(config: Config): Promise<void> {
  const env = envReader(config.env);
  if (config.port > 65_535) throw new ConfigError(`PORT must be a port number, 0 to 65535 (got "${config.port}").`, 'PORT');
  if (!LOG_LEVELS.includes(config.logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${config.logLevel}").`, 'LOG_LEVEL');
  checkServiceUrl('DATABASE_URL', config.databaseUrl, ['postgres', 'postgresql']);
  checkServiceUrl('REDIS_URL', config.redisUrl, ['redis', 'rediss']);
  env.positiveInteger('DATABASE_POOL_SIZE');
  // Otherwise parsed only when the outbound client starts, after the migrations.
  try {
    new HostExemptions(config.outbound.allowHosts);
  } catch (error) {
    throw new ConfigError(`OUTBOUND_ALLOW_HOSTS: ${(error as Error).message}`, 'OUTBOUND_ALLOW_HOSTS');
  }
  env.read((reader) => metricsSettings(reader));
  await checkCapabilitySettings(config);
}

export async function startService(config: Config, options: StartOptions = {}): Promise<RunningService> {
  await checkSettings(config);
  const embedded = !config.databaseUrl;
  // One logger for the service and its requests: upstream failures found outside a request (a
  // circuit opening, Redis going away) land in the same log as the requests' own lines.
  const logger = createLogger(config, options.logger);
  const unlock = embedded ? lockDataDir(config.dataDir) : () => {};
  let services: Services | undefined;
  let adminSocket: Server | undefined;
  let closeHttp: (() => Promise<void>) | undefined;
  let sweeper: NodeJS.Timeout | undefined;
  try {
    const progress = options.progress ?? (() => {});
    const notice = options.notice ?? progress;
    progress(embedded ? `opening the database in ${config.dataDir} and applying migrations` : 'connecting to PostgreSQL and applying migrations');
    services = await createPlatformServices(config, { logger });
    const owner =
      options.bootstrapOwner !== false && (await services.accounts.userCount()) === 0
        ? await services.accounts.createUser({ name: 'Owner', email: config.ownerEmail, isOwner: true })
        : undefined;
    // Shown before the server listens and the pools start: whoever sees /health answer has it.
    if (owner) options.onOwner?.(owner);

    const server = await buildServer(services, { endpoints: options.endpoints ?? ENDPOINTS, version: VERSION, logger });
    closeHttp = () => server.app.close();
    if (embedded) adminSocket = await listenAdminSocket(services, config.dataDir);

    const ledger = services.ledger;
    // One sweep at a time: a sweep held up by a locked row must not pile up others behind it.
    let sweeping = false;
    sweeper = setInterval(() => {
      if (sweeping) return;
      sweeping = true;
      ledger
        .sweepExpiredHolds()
        .then(
          (released) => released && server.app.log.warn({ released }, 'released credit holds left by a process that stopped'),
          (error) => server.app.log.error({ err: error }, 'sweeping expired holds failed'),
        )
        .finally(() => (sweeping = false));
    }, config.sweepIntervalMs);
    sweeper.unref();
    await ledger.sweepExpiredHolds();

    const address = await server.app.listen({ host: config.host, port: config.port });
    // The pools start after listening, in the background: /health answers at once, /ready says
    // 503 until they are up, and a shutdown signal is honoured meanwhile.
    if (options.warm) {
      services.capabilities.warm(progress).catch((error: unknown) => server.app.log.error({ err: error }, 'starting the pools failed'));
    }
    // Each EVM chain's node is asked its chain id once listening, in the background: a node of
    // another chain is named now, and never serves (docs/blockchain.md, "The chain id").
    const chainRegistry = services.capabilities.chains();
    if (chainRegistry.configured().some((name) => name !== 'bitcoin')) {
      chainRegistry.checkChainIds().then(
        (checks) => {
          for (const check of checks) {
            // A wrong chain id is logged by the client itself, with both ids.
            if (check.kind === 'ok') server.app.log.info({ chain: check.chain }, check.message);
            else if (check.kind === 'failed') server.app.log.warn({ chain: check.chain }, check.message);
            notice(check.message);
          }
        },
        (error: unknown) => server.app.log.error({ err: error }, 'checking the chain ids failed'),
      );
    }
    const url = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1');
    // Jobs are taken once the server answers: a crawl resumed after a restart runs alongside requests.
    await services.jobs.startWorkers();

    let closing: Promise<void> | null = null;
    const ready = services;
    return {
      url,
      services: ready,
      server,
      owner,
      close() {
        closing ??= (async () => {
          clearInterval(sweeper);
          adminSocket?.close();
          // Stop accepting, let requests in flight finish; past the grace period abort them,
          // which releases their holds through the pipeline.
          const grace = setTimeout(() => server.inFlight.abortAll('The server is shutting down.'), config.shutdownGraceMs);
          // The job workers stop taking tasks at the same moment, within the same grace period.
          const jobsStopped = ready.jobs.stop(config.shutdownGraceMs);
          await server.close();
          // A client that hung up leaves no connection to wait for, but its handler may still be
          // settling: wait for every request to finish before the database closes.
          await server.inFlight.drained();
          clearTimeout(grace);
          await jobsStopped;
          await ready.close();
          unlock();
        })();
        return closing;
      },
    };
  } catch (error) {
    // A start that fails (port in use...) leaves nothing running behind it.
    clearInterval(sweeper);
    adminSocket?.close();
    await closeHttp?.().catch(() => {});
    await services?.close().catch(() => {});
    unlock();
    throw error;
  }
}
