/** Plans: the table, assigning one to a user's product, and renewing balances to their plan's credits. */
import { findPlan, PLANS, type Plan } from '../credits/plans.ts';
import type { Product } from '../credits/products.ts';
import { assignPlan as assignPlanInLedger, renewPlans as renewPlansInLedger, type Renewal } from '../credits/renewal.ts';
import { OperationError } from './errors.ts';
import { filterIssue, idIssue, notOneOfIssue, productIssue, textIssue } from './rules.ts';
import { requireUser } from './users.ts';
import type { OperationStores } from './stores.ts';

export function listPlans(): Record<Product, Plan[]> {
  return PLANS;
}

/** Sets the product's plan (named in any case) and resets the balance to its credits (no roll-over). */
export async function assignPlan(stores: OperationStores, input: { user: number; product: Product; plan: string }): Promise<Renewal> {
  const user = await requireUser(stores, input.user);
  OperationError.throwIfAny([productIssue(input.product), textIssue('plan', input.plan, { required: true })]);
  const plan = findPlan(input.product, input.plan);
  if (!plan) {
    const names = PLANS[input.product].map((p) => p.name);
    throw OperationError.invalid(notOneOfIssue('plan', names, { for: input.product }));
  }
  return assignPlanInLedger(stores.ledger, user, input.product, plan);
}

/**
 * Resets every balance that has a plan to that plan's credits. `user` and `product` narrow it;
 * only leaving a filter out widens it: a filter that is present but empty, null or of the wrong
 * type is `invalid`, never "every user" (a malformed script must not reset everyone's balance).
 */
export async function renewPlans(stores: OperationStores, input: { user?: number; product?: Product } = {}): Promise<{ renewed: Renewal[] }> {
  OperationError.throwIfAny([filterIssue('user', input.user, (value) => idIssue('user', value)), filterIssue('product', input.product, productIssue)]);
  const user = input.user === undefined ? null : await requireUser(stores, input.user);
  return { renewed: await renewPlansInLedger(stores.ledger, { userId: user, product: input.product ?? null }) };
}
