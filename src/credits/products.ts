/** The three products, each with its own balance; credits of one cannot be spent on another. */
export const PRODUCTS = ['scraping', 'extraction', 'blockchain'] as const;
export type Product = (typeof PRODUCTS)[number];

export function isProduct(value: unknown): value is Product {
  return typeof value === 'string' && (PRODUCTS as readonly string[]).includes(value);
}
