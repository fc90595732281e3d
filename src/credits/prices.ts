/**
 * The price table lives in the database (table `prices`) so the operator can change it without a
 * release. Reads are served from memory and refreshed every few seconds, which keeps the hot
 * path free of an extra query; every process converges within `refreshMs` of a change.
 */
import type { Database } from '../storage/db.ts';

export type Operation =
  | 'search'
  | 'pdf_page'
  | 'image'
  | 'web'
  | 'web_geo'
  | 'web_browser'
  | 'forum'
  | 'mb_tweet'
  | 'mb_legacy'
  | 'mb_user'
  | 'mb_search'
  | 'mb_user_tweets';

export type PriceTable = Readonly<Record<string, number>>;

export class Prices {
  readonly db: Database;
  readonly refreshMs: number;
  private table: PriceTable = {};
  private loadedAt = 0;
  private loading: Promise<PriceTable> | null = null;

  constructor(db: Database, options: { refreshMs?: number } = {}) {
    this.db = db;
    this.refreshMs = options.refreshMs ?? 5_000;
  }

  async current(): Promise<PriceTable> {
    if (Date.now() - this.loadedAt < this.refreshMs) return this.table;
    this.loading ??= this.load().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  private async load(): Promise<PriceTable> {
    const rows = await this.db.query<{ operation: string; credits: number }>('SELECT operation, credits FROM prices');
    this.table = Object.freeze(Object.fromEntries(rows.map((r) => [r.operation, Number(r.credits)])));
    this.loadedAt = Date.now();
    return this.table;
  }

  async list(): Promise<Array<{ operation: string; credits: number }>> {
    return this.db.query<{ operation: string; credits: number }>('SELECT operation, credits FROM prices ORDER BY operation');
  }

  async set(operation: string, credits: number): Promise<void> {
    await this.db.query(
      'INSERT INTO prices (operation, credits) VALUES ($1, $2) ON CONFLICT (operation) DO UPDATE SET credits = EXCLUDED.credits',
      [operation, credits],
    );
    this.loadedAt = 0;
  }
}

/** Looks an operation up, failing loudly when the table lacks it (a broken price table is a fault). */
export function price(table: PriceTable, operation: Operation): number {
  const value = table[operation];
  if (value === undefined) throw new Error(`The price table has no entry for "${operation}".`);
  return value;
}
