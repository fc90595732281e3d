/**
 * The rules of the operator's inputs, once. The operations check them; the admin API declares the
 * same limits in its schemas (for its 422s and its OpenAPI document); the command line uses the
 * checks below while reading its options. Each check answers an Issue (both wordings) or nothing.
 */
import { isProduct, PRODUCTS } from '../credits/products.ts';
import { isValidEmail } from '../validation/rules.ts';
import type { Issue } from './errors.ts';

/** Ids beyond this are no rows (and would not fit PostgreSQL's BIGINT exactly in a JSON number). */
export const MAX_ID = Number.MAX_SAFE_INTEGER;
/** Balances are BIGINT; a cap far above any plan keeps amounts exact in JSON numbers. */
export const MAX_AMOUNT = 1_000_000_000_000;
/** Names and e-mail addresses: the length of their database columns. */
export const MAX_TEXT_LENGTH = 255;
/** Stripe customer ids: `cus_` and letters or digits. */
export const STRIPE_CUSTOMER = /^cus_[A-Za-z0-9]+$/;
export const STRIPE_CUSTOMER_EXAMPLE = 'cus_NffrFeUfNV2Hib';
/** The name of a token issued without one. */
export const DEFAULT_TOKEN_NAME = 'default';
/** The smallest amount each credit operation takes: a grant adds something, a balance may be set to 0. */
export const MIN_GRANT = 1;
export const MIN_BALANCE = 0;
export const MIN_PRICE = 0;
/** Prices are INTEGER in the database (a price per unit, far below any balance). */
export const MAX_PRICE = 2_147_483_647;

const issue = (field: string, message: string, predicate: string): Issue => ({ field, message, predicate });
/** Laravel names a field in its messages with spaces for underscores. */
const attribute = (field: string) => field.replace(/_/g, ' ');
const shown = (value: unknown) => `(got "${String(value)}")`;

/** A whole number between `min` and `max`. */
export function wholeNumberIssue(field: string, value: unknown, min: number, max: number): Issue | undefined {
  const name = attribute(field);
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) return issue(field, `The ${name} must be an integer.`, `must be a whole number ${shown(value)}.`);
  if (value < min) return issue(field, `The ${name} must be at least ${min}.`, `must be at least ${min}.`);
  if (value > max) return issue(field, `The ${name} must not be greater than ${max}.`, `must be at most ${max}.`);
  return undefined;
}

/** A user or token id. */
export const idIssue = (field: string, value: unknown) => wholeNumberIssue(field, value, 1, MAX_ID);

/** Credits: a grant, a balance or a price. */
export const amountIssue = (field: string, value: unknown, min: number) => wholeNumberIssue(field, value, min, MAX_AMOUNT);

/** Text of at most MAX_TEXT_LENGTH characters; a required one may not be blank. */
export function textIssue(field: string, value: unknown, options: { required: boolean }): Issue | undefined {
  const name = attribute(field);
  if (value === undefined || (typeof value === 'string' && value.trim() === '')) {
    return options.required ? issue(field, `The ${name} field is required.`, 'is required.') : undefined;
  }
  if (typeof value !== 'string') return issue(field, `The ${name} must be a string.`, 'must be text.');
  if ([...value].length > MAX_TEXT_LENGTH) {
    return issue(field, `The ${name} must not be greater than ${MAX_TEXT_LENGTH} characters.`, `must be at most ${MAX_TEXT_LENGTH} characters.`);
  }
  return undefined;
}

export function emailIssue(value: string): Issue | undefined {
  return isValidEmail(value) ? undefined : issue('email', 'The email must be a valid email address.', `must be a valid e-mail address ${shown(value)}.`);
}

export function notProductIssue(value: unknown): Issue {
  return issue('product', 'The selected product is invalid.', `must be one of ${PRODUCTS.join(', ')} ${shown(value)}.`);
}

export const productIssue = (value: unknown): Issue | undefined => (isProduct(value) ? undefined : notProductIssue(value));

export function stripeCustomerIssue(value: string): Issue | undefined {
  return STRIPE_CUSTOMER.test(value)
    ? undefined
    : issue('customer', 'The customer format is invalid.', `must be a Stripe customer id such as ${STRIPE_CUSTOMER_EXAMPLE} ${shown(value)}.`);
}

/** One of a list of names (a plan, a priced operation): `for` ends the operator's sentence ("for scraping"). */
export function notOneOfIssue(field: string, allowed: readonly string[], options: { for?: string } = {}): Issue {
  return issue(field, `The selected ${attribute(field)} is invalid.`, `must be one of ${allowed.join(', ')}${options.for ? ` for ${options.for}` : ''}.`);
}

export function oneOfIssue(field: string, value: string, allowed: readonly string[], options: { for?: string } = {}): Issue | undefined {
  return allowed.includes(value) ? undefined : notOneOfIssue(field, allowed, options);
}

/**
 * A filter of an operation that acts on everything unless narrowed (plan renewal, the audit):
 * leaving it out means "all", but a filter that is present must be a real one. An empty string,
 * null or a value of the wrong type never falls back to "all".
 */
export function filterIssue(field: string, value: unknown, check: (value: unknown) => Issue | undefined): Issue | undefined {
  if (value === undefined) return undefined;
  if (value === null || (typeof value === 'string' && value.trim() === '')) {
    return issue(field, `The ${attribute(field)} field must have a value.`, 'must not be empty (leave it out to mean every one).');
  }
  return check(value);
}

/** A user's record (a job, a monitor) as the operator's lists name it: its id and its owner. */
export const ownedBy = (row: { id: string; user_id: number }) => ({ id: row.id, user: row.user_id });
