/**
 * Assigning and renewing plans: what `gleaner plans assign` / `plans renew` and the Stripe
 * `invoice.paid` webhook do. A renewal sets the balance to the plan's credits (no roll-over),
 * through the ledger (kind `renew`), so the audit still adds up. Given a transaction handle, every
 * statement runs in it; on the embedded database that handle is the only way in while the
 * transaction is open.
 */
import type { Queryable } from '../storage/db.ts';
import type { CreditLedger } from './ledger.ts';
import { findPlan, type Plan } from './plans.ts';
import type { Product } from './products.ts';

export interface Renewal {
  user: number;
  product: Product;
  plan: string;
  balance: number;
}

/** Sets the user's plan for the product and resets the balance to the plan's credits. */
export async function assignPlan(ledger: CreditLedger, userId: number, product: Product, plan: Plan, tx?: Queryable): Promise<Renewal> {
  const balance = await ledger.setTo(userId, product, plan.credits, 'renew', plan.name, tx);
  return { user: userId, product, plan: plan.name, balance };
}

/**
 * Resets every balance that has a plan to that plan's credits, optionally only one user's and/or
 * one product's. Returns what was renewed, by user then product.
 */
export async function renewPlans(
  ledger: CreditLedger,
  filter: { userId?: number | null; product?: Product | null } = {},
  tx?: Queryable,
): Promise<Renewal[]> {
  const subscribed = await (tx ?? ledger.db).query<{ user_id: number; product: Product; plan: string }>(
    `SELECT user_id, product, plan FROM balances
      WHERE plan IS NOT NULL AND ($1::bigint IS NULL OR user_id = $1) AND ($2::text IS NULL OR product = $2)
      ORDER BY user_id, product`,
    [filter.userId ?? null, filter.product ?? null],
  );
  const renewed: Renewal[] = [];
  for (const row of subscribed) {
    const plan = findPlan(row.product, row.plan);
    if (!plan) continue;
    const userId = Number(row.user_id);
    const balance = await ledger.setTo(userId, row.product, plan.credits, 'renew', undefined, tx);
    renewed.push({ user: userId, product: row.product, plan: plan.name, balance });
  }
  return renewed;
}
