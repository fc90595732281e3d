/**
 * Operator commands (contract §8). They run wherever the database is reachable: in the CLI
 * process (PostgreSQL, or embedded when no server holds it) or inside the server, reached over
 * its admin socket (embedded database held by a running server).
 */
import { parseArgs } from 'node:util';
import { isProduct, PRODUCTS, type Product } from '../credits/products.ts';
import { JOB_STATUSES, type JobStatus } from '../jobs/store.ts';
import { MONITOR_STATUSES, type MonitorStatus } from '../monitors/store.ts';
import { listMonitors, pauseMonitor, resumeMonitor, showMonitor } from '../operations/monitors.ts';
import { migrate } from '../storage/migrate.ts';
import { seedPrices } from '../credits/prices.ts';
import * as operations from '../operations/index.ts';
import { OperationError, rules, type Issue, type OperationStores } from '../operations/index.ts';

/** What operator commands use: the storage, nothing that reaches the network. */
export type OperatorServices = OperationStores;

/** A mistake in the command line: exit code 2 and the message, no stack. */
export class UsageError extends Error {}
/** The command was understood but cannot be done (unknown user...): exit code 1. */
export class OperatorError extends Error {}

export const USAGE = `Usage: gleaner <command> [options] [--json]

  serve                                                   start the HTTP server
  mcp --token <t>                                         an MCP server over stdio for AI agents; calls the server at GLEANER_URL
  migrate                                                 apply pending database migrations
  users create --name <n> --email <e>                     create a user; prints its token and secret key once
  users list
  users link-stripe --user <id> --customer <cus_...>      renew the user's plans when this Stripe customer pays
  users unlink-stripe --user <id>                         forget the user's Stripe customer
  tokens create --user <id> [--name <label>]              issue another token
  tokens list --user <id>
  tokens revoke --token-id <id>
  tokens rotate --token-id <id>                           replace a token by a new one (same user and name)
  credits grant --user <id> --product <p> --amount <n>    add credits
  credits set --user <id> --product <p> --amount <n>      set the balance
  credits show --user <id>
  credits audit [--user <id>]                             recompute balances from the ledger
  plans list
  plans assign --user <id> --product <p> --plan <name>    set the plan and its credits
  plans renew [--user <id>] [--product <p>]               reset balances to their plan's credits
  prices list
  prices set --operation <op> --credits <n>
  upstreams                                               the drift report: which upstream drifted or is blocking us
  upstreams probe                                         one harmless call per configured upstream now; exit 1 unless all are ok
  jobs list [--user <id>] [--status <s>] [--limit <n>]    crawls and batches, newest first (default 50, at most 500)
  jobs show --job <id>                                    one job: parameters, counts, webhook deliveries
  jobs cancel --job <id>                                  stop a queued or running job (an ended one keeps its status)
  monitors list [--user <id>] [--chain <c>] [--status <s>] [--limit <n>]
                                                          wallet monitors, newest first (default 50, at most 500)
  monitors show --monitor <id>                            one monitor: addresses, follower's block, deliveries
  monitors pause --monitor <id>                           stop matching and delivering (only the operator resumes it)
  monitors resume --monitor <id>                          resume a paused monitor, whichever way it was paused

Products: ${PRODUCTS.join(', ')}.
Job statuses: ${JOB_STATUSES.join(', ')}.
Monitor statuses: ${MONITOR_STATUSES.join(', ')}.`;

type Values = Record<string, string | boolean | undefined>;

function parse(args: string[], names: string[]): Values {
  const options = Object.fromEntries([...names.map((n) => [n, { type: 'string' as const }]), ['json', { type: 'boolean' as const }]]);
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values as Values;
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/^.*?: /, ''));
  }
}

/** The option an operation's field is given with. */
const optionOf = (field: string) => (field === 'token' ? 'token-id' : field);

/** An operation's rule broken by an option: "--amount must be at least 1." */
const usageError = (issue: Issue) => new UsageError(`--${optionOf(issue.field)} ${issue.predicate}`);

/** The operations' failures, worded for the command line: rules broken are usage errors (exit 2). */
function fromOperationError(error: OperationError): Error {
  return error.kind === 'invalid' ? usageError(error.issues[0]) : new OperatorError(error.message);
}

function need(values: Values, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required.`);
  return value.trim();
}

/** An option's text as given ('' when left out): the operation says whether it is required. */
const text = (values: Values, name: string): string => (typeof values[name] === 'string' ? (values[name] as string) : '');

/** A whole number as written; its range is the operation's rule. */
function wholeNumber(values: Values, name: string): number {
  const written = need(values, name);
  if (!/^\d+$/.test(written) || !Number.isSafeInteger(Number(written))) throw new UsageError(`--${name} must be a whole number (got "${written}").`);
  return Number(written);
}

/** Left out means "every one"; given, even empty, it must be a real value (never "every one"). */
const optional = <T>(values: Values, name: string, read: (values: Values, name: string) => T): T | undefined =>
  values[name] === undefined ? undefined : read(values, name);

function product(values: Values): Product {
  const value = need(values, 'product');
  if (isProduct(value)) return value;
  throw usageError(rules.notProductIssue(value));
}

function jobStatus(values: Values, name: string): JobStatus {
  const value = need(values, name);
  if ((JOB_STATUSES as readonly string[]).includes(value)) return value as JobStatus;
  throw usageError(rules.notOneOfIssue(name, JOB_STATUSES));
}

function monitorStatus(values: Values, name: string): MonitorStatus {
  const value = need(values, name);
  if ((MONITOR_STATUSES as readonly string[]).includes(value)) return value as MonitorStatus;
  throw usageError(rules.notOneOfIssue(name, MONITOR_STATUSES));
}

const COMMANDS = new Set([
  'migrate',
  'users create',
  'users list',
  'users link-stripe',
  'users unlink-stripe',
  'tokens create',
  'tokens list',
  'tokens revoke',
  'tokens rotate',
  'credits grant',
  'credits set',
  'credits show',
  'credits audit',
  'plans list',
  'plans assign',
  'plans renew',
  'prices list',
  'prices set',
  'upstreams',
  'jobs list',
  'jobs show',
  'jobs cancel',
  'monitors list',
  'monitors show',
  'monitors pause',
  'monitors resume',
]);

/** "credits grant --user 1" → key "credits grant" and the options after it. */
function splitCommand(argv: string[]): { key: string; args: string[] } {
  const [group = '', action] = argv;
  const twoWords = !!action && !action.startsWith('-');
  return { key: twoWords ? `${group} ${action}` : group, args: argv.slice(twoWords ? 2 : 1) };
}

/** Refuses an unknown command before anything is opened (a usage error needs no database). */
export function assertKnownCommand(argv: string[]): void {
  const { key } = splitCommand(argv);
  if (!COMMANDS.has(key)) throw new UsageError(key && !key.startsWith('-') ? `Unknown command "${key}".\n\n${USAGE}` : USAGE);
}

/** Runs one operator command; returns what it produced (printed as JSON or text by the caller). */
export async function runOperatorCommand(services: OperatorServices, argv: string[]): Promise<unknown> {
  assertKnownCommand(argv);
  const { key, args } = splitCommand(argv);
  try {
    return await run(services, key, args);
  } catch (error) {
    throw error instanceof OperationError ? fromOperationError(error) : error;
  }
}

async function run(stores: OperatorServices, key: string, args: string[]): Promise<unknown> {
  switch (key) {
    case 'migrate': {
      parse(args, []);
      const applied = await migrate(stores.db);
      // Operations added since the last run get their default price; prices already set are kept.
      await seedPrices(stores.db);
      return { applied };
    }
    case 'users create': {
      const v = parse(args, ['name', 'email']);
      return operations.createUser(stores, { name: need(v, 'name'), email: need(v, 'email') });
    }
    case 'users list':
      parse(args, []);
      return operations.listUsers(stores);
    case 'users link-stripe': {
      const v = parse(args, ['user', 'customer']);
      return operations.linkStripeCustomer(stores, { user: wholeNumber(v, 'user'), customer: text(v, 'customer') });
    }
    case 'users unlink-stripe': {
      const v = parse(args, ['user']);
      return operations.unlinkStripeCustomer(stores, { user: wholeNumber(v, 'user') });
    }
    case 'tokens create': {
      const v = parse(args, ['user', 'name']);
      return operations.createToken(stores, { user: wholeNumber(v, 'user'), name: typeof v.name === 'string' ? v.name : undefined });
    }
    case 'tokens list': {
      const v = parse(args, ['user']);
      return operations.listTokens(stores, { user: wholeNumber(v, 'user') });
    }
    case 'tokens revoke': {
      const v = parse(args, ['token-id']);
      return operations.revokeToken(stores, { token: wholeNumber(v, 'token-id') });
    }
    case 'tokens rotate': {
      const v = parse(args, ['token-id']);
      return operations.rotateToken(stores, { token: wholeNumber(v, 'token-id') });
    }
    case 'credits grant':
    case 'credits set': {
      const v = parse(args, ['user', 'product', 'amount']);
      const input = { user: wholeNumber(v, 'user'), product: product(v), amount: wholeNumber(v, 'amount') };
      return key === 'credits grant' ? operations.grantCredits(stores, input) : operations.setCredits(stores, input);
    }
    case 'credits show': {
      const v = parse(args, ['user']);
      return operations.showCredits(stores, { user: wholeNumber(v, 'user') });
    }
    case 'credits audit': {
      const v = parse(args, ['user']);
      return operations.auditCredits(stores, { user: optional(v, 'user', wholeNumber) });
    }
    case 'plans list':
      parse(args, []);
      return operations.listPlans();
    case 'plans assign': {
      const v = parse(args, ['user', 'product', 'plan']);
      return operations.assignPlan(stores, { user: wholeNumber(v, 'user'), product: product(v), plan: text(v, 'plan') });
    }
    case 'plans renew': {
      const v = parse(args, ['user', 'product']);
      return operations.renewPlans(stores, { user: optional(v, 'user', wholeNumber), product: optional(v, 'product', product) });
    }
    case 'prices list':
      parse(args, []);
      return operations.listPrices(stores);
    case 'prices set': {
      const v = parse(args, ['operation', 'credits']);
      return operations.setPrice(stores, { operation: text(v, 'operation'), credits: wholeNumber(v, 'credits') });
    }
    case 'upstreams': {
      // A table to read (rows the front end prints as one), or the report itself with --json.
      const v = parse(args, []);
      const report = await operations.upstreamReport(stores);
      return v.json ? report : operations.upstreamReportRows(report);
    }
    case 'jobs list': {
      const v = parse(args, ['user', 'status', 'limit']);
      return operations.listJobs(stores, { user: optional(v, 'user', wholeNumber), status: optional(v, 'status', jobStatus), limit: optional(v, 'limit', wholeNumber) });
    }
    case 'jobs show': {
      const v = parse(args, ['job']);
      return operations.showJob(stores, { job: need(v, 'job') });
    }
    case 'jobs cancel': {
      const v = parse(args, ['job']);
      return operations.cancelJob(stores, { job: need(v, 'job') });
    }
    case 'monitors list': {
      const v = parse(args, ['user', 'chain', 'status', 'limit']);
      return listMonitors(stores, {
        user: optional(v, 'user', wholeNumber),
        chain: optional(v, 'chain', need),
        status: optional(v, 'status', monitorStatus),
        limit: optional(v, 'limit', wholeNumber),
      });
    }
    case 'monitors show': {
      const v = parse(args, ['monitor']);
      return showMonitor(stores, { monitor: need(v, 'monitor') });
    }
    case 'monitors pause':
    case 'monitors resume': {
      const v = parse(args, ['monitor']);
      const input = { monitor: need(v, 'monitor') };
      return key === 'monitors pause' ? pauseMonitor(stores, input) : resumeMonitor(stores, input);
    }
    default:
      throw new Error(`The command "${key}" is listed but not implemented.`);
  }
}
