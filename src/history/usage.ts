/**
 * Usage per day and product (GET /usage): requests from the history, credits from the history
 * net of the ledger's refunds (a request whose client hung up during capture was charged, then
 * given back), plus what wallet monitors were charged with no request (from the ledger's captures).
 * One SQL query; days are UTC.
 */
import type { Database } from '../storage/db.ts';

export interface UsageDay {
  date: string;
  product: string;
  requests: number;
  credits: number;
}

export interface ProductPlan {
  product: string;
  balance: number;
  plan: string | null;
}

/** The UTC day `days - 1` days before `now`'s, at midnight: the first day of the window. */
export function usageWindowStart(now: Date, days: number): Date {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  start.setUTCDate(start.getUTCDate() - (days - 1));
  return start;
}

/**
 * Charges taken by work that runs with no request of its own: a wallet monitor's delivered events
 * and daily address fees (src/monitors). They count as credits, not requests. A crawl's pages are
 * not here: their credits reach the history row of the request that created the crawl.
 */
const BACKGROUND_CHARGES = ['chain-event:%', 'chain-day:%'];

export async function usageByDay(db: Database, userId: number, since: Date): Promise<UsageDay[]> {
  const rows = await db.query<{ date: string; product: string; requests: number | string; credits: number | string }>(
    `WITH requests AS (
       SELECT to_char(h.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date,
              h.product,
              count(*) AS requests,
              COALESCE(sum(h.credits), 0) - COALESCE(sum(r.delta), 0) AS credits
         FROM request_history h
         LEFT JOIN credit_ledger r ON r.reference = h.request_id AND r.kind = 'refund'
        WHERE h.user_id = $1 AND h.created_at >= $2 AND h.product IS NOT NULL
        GROUP BY 1, 2),
     background AS (
       SELECT to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date,
              l.product,
              0 AS requests,
              sum(l.charged) AS credits
         FROM credit_ledger l
        WHERE l.user_id = $1 AND l.created_at >= $2 AND l.kind = 'capture' AND l.reference LIKE ANY ($3)
        GROUP BY 1, 2)
     SELECT date, product, sum(requests) AS requests, sum(credits) AS credits
       FROM (SELECT * FROM requests UNION ALL SELECT * FROM background) AS u
      GROUP BY 1, 2
      ORDER BY 1, 2`,
    [userId, since.toISOString(), BACKGROUND_CHARGES],
  );
  return rows.map((r) => ({ date: r.date, product: r.product, requests: Number(r.requests), credits: Number(r.credits) }));
}

export async function productPlans(db: Database, userId: number): Promise<ProductPlan[]> {
  const rows = await db.query<{ product: string; balance: number | string; plan: string | null }>(
    'SELECT product, balance, plan FROM balances WHERE user_id = $1 ORDER BY product',
    [userId],
  );
  return rows.map((r) => ({ product: r.product, balance: Number(r.balance), plan: r.plan }));
}
