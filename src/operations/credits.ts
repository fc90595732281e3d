/** Balances: grant, set, show, and the audit that recomputes them from the ledger. */
import type { Product } from '../credits/products.ts';
import { OperationError } from './errors.ts';
import { amountIssue, filterIssue, idIssue, MIN_BALANCE, MIN_GRANT, productIssue } from './rules.ts';
import { requireUser } from './users.ts';
import type { OperationStores } from './stores.ts';

export interface BalanceChange {
  user: number;
  product: Product;
  balance: number;
}

/** Adds `amount` to the balance. */
export async function grantCredits(stores: OperationStores, input: { user: number; product: Product; amount: number }): Promise<BalanceChange> {
  const user = await requireUser(stores, input.user);
  OperationError.throwIfAny([productIssue(input.product), amountIssue('amount', input.amount, MIN_GRANT)]);
  return { user, product: input.product, balance: await stores.ledger.grant(user, input.product, input.amount) };
}

/** Sets the balance to `amount` (credits held by requests in flight are counted as spent). */
export async function setCredits(stores: OperationStores, input: { user: number; product: Product; amount: number }): Promise<BalanceChange> {
  const user = await requireUser(stores, input.user);
  OperationError.throwIfAny([productIssue(input.product), amountIssue('amount', input.amount, MIN_BALANCE)]);
  return { user, product: input.product, balance: await stores.ledger.setTo(user, input.product, input.amount, 'set') };
}

/** Per product: the balance, the credits held by requests in flight, and the plan. */
export async function showCredits(stores: OperationStores, input: { user: number }) {
  const user = await requireUser(stores, input.user);
  return { user, balances: await stores.ledger.balances(user) };
}

/**
 * Every stored balance against the sum of its ledger, of one user or (with `user` left out) of
 * everyone; `mismatches` lists those that differ (none, normally).
 */
export async function auditCredits(stores: OperationStores, input: { user?: number } = {}) {
  OperationError.throwIfAny([filterIssue('user', input.user, (value) => idIssue('user', value))]);
  const user = input.user === undefined ? undefined : await requireUser(stores, input.user);
  const rows = await stores.ledger.recompute(user);
  return { checked: rows.length, mismatches: rows.filter((row) => row.stored !== row.ledger) };
}
