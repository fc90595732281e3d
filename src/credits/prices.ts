/**
 * The price table lives in the database (table `prices`) so the operator can change it without a
 * release. Reads are served from memory and refreshed every few seconds, which keeps the hot
 * path free of an extra query; every process converges within `refreshMs` of a change.
 *
 * Which operations exist, and what each costs until the operator says otherwise, is declared once
 * here (`OPERATION_DEFAULTS`); `seedPrices` adds what the table lacks after every migration run.
 */
import type { Database } from '../storage/db.ts';

/**
 * Every billed operation with its default price in credits. A row's `billing.operation` is typed
 * against these keys; a new operation is one line here, and the next start (or `gleaner migrate`)
 * adds it to the price table. Changing a default here never changes a price already in a table
 * (migration 0001 inserted the first twelve at these values).
 */
export const OPERATION_DEFAULTS = {
  search: 3,
  pdf_page: 1,
  image: 3,
  web: 1,
  web_geo: 5,
  web_browser: 5,
  // A /v1/web screenshot, on top of the browser page's price.
  web_screenshot: 1,
  forum: 3,
  mb_tweet: 3,
  mb_legacy: 3,
  mb_user: 3,
  mb_search: 10,
  mb_user_tweets: 10,
  // Video (YouTube): one video, its transcript, a search page, a channel page, a comments page, a playlist page.
  video: 3,
  video_transcript: 3,
  video_search: 10,
  video_channel: 10,
  video_comments: 3,
  video_playlist: 10,
  // Freelance marketplace (Freelancer.com): a page of search results, one project.
  freelance_search: 3,
  freelance_project: 3,
  // A page a crawl or batch job delivered (contract §9), and one site map.
  crawl_page: 1,
  map: 1,
  // Wallet monitors (src/monitors): one event delivered, and one watched address for one UTC day.
  chain_event: 1,
  chain_address_day: 5,
  // Blockchain reads (contract §10): a wallet's balances, a page of its transfers.
  chain_wallet: 5,
  chain_transactions: 10,
} as const satisfies Record<string, number>;

export type Operation = keyof typeof OPERATION_DEFAULTS;

/**
 * Adds every operation the price table lacks, at its default; a price already there (the operator's
 * or an earlier default) is kept. Run right after migrations. Answers the operations added.
 */
export async function seedPrices(db: Database, defaults: Readonly<Record<string, number>> = OPERATION_DEFAULTS): Promise<string[]> {
  const entries = Object.entries(defaults);
  if (entries.length === 0) return [];
  const values = entries.map((_, i) => `($${2 * i + 1}, $${2 * i + 2})`).join(', ');
  const rows = await db.query<{ operation: string }>(
    `INSERT INTO prices (operation, credits) VALUES ${values} ON CONFLICT (operation) DO NOTHING RETURNING operation`,
    entries.flat(),
  );
  return rows.map((row) => row.operation);
}

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
