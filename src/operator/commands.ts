/**
 * Operator commands (contract §8). They run wherever the database is reachable: in the CLI
 * process (PostgreSQL, or embedded when no server holds it) or inside the server, reached over
 * its admin socket (embedded database held by a running server).
 */
import { parseArgs } from 'node:util';
import { isProduct, PRODUCTS, type Product } from '../credits/products.ts';
import { findPlan, PLANS } from '../credits/plans.ts';
import { assignPlan, renewPlans } from '../credits/renewal.ts';
import { migrate } from '../storage/migrate.ts';
import { isValidEmail } from '../validation/rules.ts';
import { EmailTakenError } from '../accounts/store.ts';
import type { Services } from '../services.ts';

/** What operator commands use: the storage, nothing that reaches the network. */
export type OperatorServices = Pick<Services, 'db' | 'accounts' | 'ledger' | 'prices'>;

/** A mistake in the command line: exit code 2 and the message, no stack. */
export class UsageError extends Error {}
/** The command was understood but cannot be done (unknown user...): exit code 1. */
export class OperatorError extends Error {}

export const USAGE = `Usage: gleaner <command> [options] [--json]

  serve                                                   start the HTTP server
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

Products: ${PRODUCTS.join(', ')}.`;

type Values = Record<string, string | boolean | undefined>;

function parse(args: string[], names: string[]): Values {
  const options = Object.fromEntries([...names.map((n) => [n, { type: 'string' as const }]), ['json', { type: 'boolean' as const }]]);
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values as Values;
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/^.*?: /, ''));
  }
}

function need(values: Values, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`--${name} is required.`);
  return value.trim();
}

function wholeNumber(values: Values, name: string, options: { min?: number; optional?: boolean } = {}): number {
  if (options.optional && values[name] === undefined) return NaN;
  const text = need(values, name);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new UsageError(`--${name} must be a whole number (got "${text}").`);
  const value = Number(text);
  if (options.min !== undefined && value < options.min) throw new UsageError(`--${name} must be at least ${options.min}.`);
  return value;
}

function product(values: Values): Product {
  const value = need(values, 'product');
  if (!isProduct(value)) throw new UsageError(`--product must be one of ${PRODUCTS.join(', ')} (got "${value}").`);
  return value;
}

async function existingUser(services: OperatorServices, values: Values): Promise<number> {
  const id = wholeNumber(values, 'user', { min: 1 });
  if (!(await services.accounts.userExists(id))) throw new OperatorError(`There is no user ${id}.`);
  return id;
}

/** Stripe customer ids: `cus_` and letters or digits. */
const STRIPE_CUSTOMER = /^cus_[A-Za-z0-9]+$/;

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

  switch (key) {
    case 'migrate': {
      parse(args, []);
      return { applied: await migrate(services.db) };
    }
    case 'users create': {
      const v = parse(args, ['name', 'email']);
      const name = need(v, 'name');
      const email = need(v, 'email');
      if (!isValidEmail(email)) throw new UsageError(`--email must be a valid e-mail address (got "${email}").`);
      if (await services.accounts.emailTaken(email)) throw new OperatorError(`The e-mail ${email} is already taken.`);
      return services.accounts.createUser({ name, email }).catch((error: unknown) => {
        throw error instanceof EmailTakenError ? new OperatorError(error.message) : error;
      });
    }
    case 'users list':
      parse(args, []);
      return services.accounts.listUsers();
    case 'users link-stripe': {
      const v = parse(args, ['user', 'customer']);
      const userId = await existingUser(services, v);
      const customer = need(v, 'customer');
      if (!STRIPE_CUSTOMER.test(customer)) throw new UsageError(`--customer must be a Stripe customer id such as cus_NffrFeUfNV2Hib (got "${customer}").`);
      const linked = await services.accounts.linkStripeCustomer(userId, customer);
      if (!linked.ok) throw new OperatorError(`The Stripe customer ${customer} is already linked to user ${linked.userId}.`);
      return { user: userId, stripe_customer: customer };
    }
    case 'users unlink-stripe': {
      const v = parse(args, ['user']);
      const userId = await existingUser(services, v);
      const previous = await services.accounts.unlinkStripeCustomer(userId);
      return { user: userId, stripe_customer: null, previous };
    }
    case 'tokens create': {
      const v = parse(args, ['user', 'name']);
      const userId = await existingUser(services, v);
      const created = await services.accounts.createToken(userId, typeof v.name === 'string' ? v.name : 'default');
      return { id: created.id, user: userId, token: created.token };
    }
    case 'tokens list': {
      const v = parse(args, ['user']);
      return services.accounts.listTokens(await existingUser(services, v));
    }
    case 'tokens revoke': {
      const v = parse(args, ['token-id']);
      const id = wholeNumber(v, 'token-id', { min: 1 });
      if (!(await services.accounts.revokeToken(id))) throw new OperatorError(`There is no active token ${id}.`);
      return { revoked: id };
    }
    case 'tokens rotate': {
      const v = parse(args, ['token-id']);
      const id = wholeNumber(v, 'token-id', { min: 1 });
      const rotated = await services.accounts.rotateToken(id);
      if (!rotated) throw new OperatorError(`There is no active token ${id}.`);
      return rotated;
    }
    case 'credits grant':
    case 'credits set': {
      const v = parse(args, ['user', 'product', 'amount']);
      const userId = await existingUser(services, v);
      const p = product(v);
      const amount = wholeNumber(v, 'amount', { min: key === 'credits grant' ? 1 : 0 });
      const balance =
        key === 'credits grant' ? await services.ledger.grant(userId, p, amount) : await services.ledger.setTo(userId, p, amount, 'set');
      return { user: userId, product: p, balance };
    }
    case 'credits show': {
      const v = parse(args, ['user']);
      const userId = await existingUser(services, v);
      return { user: userId, balances: await services.ledger.balances(userId) };
    }
    case 'credits audit': {
      const v = parse(args, ['user']);
      const userId = v.user === undefined ? undefined : await existingUser(services, v);
      const rows = await services.ledger.recompute(userId);
      const mismatches = rows.filter((r) => r.stored !== r.ledger);
      return { checked: rows.length, mismatches };
    }
    case 'plans list':
      parse(args, []);
      return PLANS;
    case 'plans assign': {
      const v = parse(args, ['user', 'product', 'plan']);
      const userId = await existingUser(services, v);
      const p = product(v);
      const plan = findPlan(p, need(v, 'plan'));
      if (!plan) throw new UsageError(`--plan must be one of ${PLANS[p].map((x) => x.name).join(', ')} for ${p}.`);
      return assignPlan(services.ledger, userId, p, plan);
    }
    case 'plans renew': {
      const v = parse(args, ['user', 'product']);
      const userId = v.user === undefined ? null : await existingUser(services, v);
      const onlyProduct = v.product === undefined ? null : product(v);
      return { renewed: await renewPlans(services.ledger, { userId, product: onlyProduct }) };
    }
    case 'prices list':
      parse(args, []);
      return services.prices.list();
    case 'prices set': {
      const v = parse(args, ['operation', 'credits']);
      const operation = need(v, 'operation');
      const known = (await services.prices.list()).map((p) => p.operation);
      if (!known.includes(operation)) throw new UsageError(`--operation must be one of ${known.join(', ')}.`);
      const credits = wholeNumber(v, 'credits', { min: 0 });
      await services.prices.set(operation, credits);
      return { operation, credits };
    }
    default:
      throw new Error(`The command "${key}" is listed but not implemented.`);
  }
}
