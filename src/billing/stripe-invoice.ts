/**
 * Reading a Stripe invoice: which customer paid, and which plans its lines name.
 *
 * A line names a plan through two metadata keys, `gleaner_product` and `gleaner_plan`, set by the
 * operator on the Stripe price. They are looked for, in order, on `line.price.metadata` (API
 * versions before 2025-03-31), on `line.pricing.price_details.price.metadata` (newer versions,
 * when the price is expanded; unexpanded it is only an id) and on `line.metadata` (newer versions
 * copy the subscription's metadata there). The first of those that carries either key is used.
 */
import { findPlan, PLANS, type Plan } from '../credits/plans.ts';
import { isProduct, PRODUCTS, type Product } from '../credits/products.ts';
import { isObject, type Json } from '../core/json.ts';

export const PRODUCT_KEY = 'gleaner_product';
export const PLAN_KEY = 'gleaner_plan';

export interface NamedPlan {
  product: Product;
  plan: Plan;
}

export interface InvoicePlans {
  /** One per product named by a line, in line order. */
  plans: NamedPlan[];
  /** Metadata that names no valid product and plan: a configuration error, nothing is applied. */
  problems: string[];
}


/** `invoice.customer` is an id, or the customer object when the event expanded it. */
export function invoiceCustomer(invoice: Json): string | null {
  const customer = invoice.customer;
  if (typeof customer === 'string' && customer !== '') return customer;
  if (isObject(customer) && typeof customer.id === 'string' && customer.id !== '') return customer.id;
  return null;
}

/** The metadata of a line that carries gleaner keys, or null when none does. */
function lineMetadata(line: Json): Json | null {
  const price = isObject(line.price) ? line.price : null;
  const pricing = isObject(line.pricing) ? line.pricing : null;
  const details = pricing && isObject(pricing.price_details) ? pricing.price_details : null;
  const expanded = details && isObject(details.price) ? details.price : null;
  for (const metadata of [price?.metadata, expanded?.metadata, line.metadata]) {
    if (isObject(metadata) && (PRODUCT_KEY in metadata || PLAN_KEY in metadata)) return metadata;
  }
  return null;
}

/**
 * The plans an invoice's lines name. Lines with a negative amount are credits for unused time
 * (the old price of a plan change) and name nothing that was paid for; they are skipped.
 * Only the lines the event carries are read (Stripe includes the first page of them).
 */
export function plansNamedByInvoice(invoice: Json): InvoicePlans {
  const lines = isObject(invoice.lines) && Array.isArray(invoice.lines.data) ? invoice.lines.data : [];
  const chosen = new Map<Product, NamedPlan>();
  const problems: string[] = [];
  lines.forEach((line: unknown, index) => {
    if (!isObject(line)) return;
    if (typeof line.amount === 'number' && line.amount < 0) return;
    const metadata = lineMetadata(line);
    if (!metadata) return;
    const where = `line ${index + 1}${typeof line.id === 'string' ? ` (${line.id})` : ''}`;
    const productName = metadata[PRODUCT_KEY];
    const planName = metadata[PLAN_KEY];
    if (typeof productName !== 'string' || productName.trim() === '') {
      problems.push(`${where}: ${PLAN_KEY} is set but ${PRODUCT_KEY} is missing`);
      return;
    }
    const product = productName.trim().toLowerCase();
    if (!isProduct(product)) {
      problems.push(`${where}: ${PRODUCT_KEY} "${productName}" is not one of ${PRODUCTS.join(', ')}`);
      return;
    }
    if (typeof planName !== 'string' || planName.trim() === '') {
      problems.push(`${where}: ${PRODUCT_KEY} is set but ${PLAN_KEY} is missing`);
      return;
    }
    const plan = findPlan(product, planName);
    if (!plan) {
      problems.push(`${where}: ${product} has no plan "${planName}" (${PLANS[product].map((p) => p.name).join(', ')})`);
      return;
    }
    const earlier = chosen.get(product);
    if (earlier && earlier.plan.name !== plan.name) {
      problems.push(`${where}: names ${product} plan ${plan.name}, an earlier line names ${earlier.plan.name}`);
      return;
    }
    chosen.set(product, { product, plan });
  });
  return { plans: [...chosen.values()], problems };
}
