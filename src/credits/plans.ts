/** Monthly plans per product (interface document, "Plans"). Renewal resets the balance: no roll-over. */
import type { Product } from './products.ts';

export interface Plan {
  name: string;
  credits: number;
  priceUsd: number;
}

export const PLANS: Record<Product, Plan[]> = {
  scraping: [
    { name: 'starter', credits: 10_000, priceUsd: 10 },
    { name: 'growth', credits: 55_000, priceUsd: 50 },
    { name: 'business', credits: 115_000, priceUsd: 100 },
    { name: 'enterprise', credits: 600_000, priceUsd: 500 },
    { name: 'scale', credits: 1_250_000, priceUsd: 1_000 },
  ],
  extraction: [
    { name: 'starter', credits: 10_000, priceUsd: 10 },
    { name: 'growth', credits: 55_000, priceUsd: 50 },
    { name: 'business', credits: 115_000, priceUsd: 100 },
    { name: 'enterprise', credits: 600_000, priceUsd: 500 },
  ],
  blockchain: [
    { name: 'starter', credits: 20_000, priceUsd: 10 },
    { name: 'growth', credits: 110_000, priceUsd: 50 },
    { name: 'business', credits: 230_000, priceUsd: 100 },
    { name: 'enterprise', credits: 720_000, priceUsd: 300 },
    { name: 'scale', credits: 1_250_000, priceUsd: 500 },
  ],
};

/** Finds a plan by name, case-insensitively ("Growth" and "growth" both work). */
export function findPlan(product: Product, name: string): Plan | undefined {
  return PLANS[product].find((p) => p.name === name.trim().toLowerCase());
}
