/** Request history (docs/spec/contract.md §4): read side. Rows are written by the metered pipeline. */
import type { Database } from '../storage/db.ts';
import { isoColumn } from '../accounts/store.ts';
import { productPlans, usageByDay, usageWindowStart } from './usage.ts';
import { boundedParams, CUT_MARKER, HISTORY_PARAMS_MAX_BYTES, HISTORY_VALUE_MAX_CHARS } from './params.ts';

/**
 * A row's params as read for a page: as stored when small, which every row written since the
 * summary is (params.ts); a larger one, stored before it, has its first fields (at most 16), each
 * cut to its first characters, so that no page carries megabytes out of the database.
 * `boundedParams` then applies the row's budget exactly. $6: the row's budget in bytes, $7: a
 * value's in characters; $8: the cut marker.
 */
const BOUNDED_PARAMS_SQL = `CASE
    WHEN jsonb_typeof(params) <> 'object' THEN '{}'::jsonb
    WHEN octet_length(params::text) <= 2 * $6::int THEN params
    ELSE (SELECT coalesce(jsonb_object_agg(field.key, CASE
                   WHEN jsonb_typeof(field.value) = 'string' AND length(field.value #>> '{}') > $7::int
                     THEN to_jsonb(left(field.value #>> '{}', $7::int) || $8::text)
                   WHEN jsonb_typeof(field.value) IN ('object', 'array') AND length(field.value::text) > $7::int
                     THEN to_jsonb(left(field.value::text, $7::int) || $8::text)
                   ELSE field.value END), '{}'::jsonb)
            FROM (SELECT key, value FROM jsonb_each(params) LIMIT 16) AS field)
  END`;

export interface HistoryRow {
  id: number;
  request_id: string;
  method: string;
  endpoint: string;
  product: string | null;
  status: number;
  credits: number;
  duration_ms: number;
  params: Record<string, unknown>;
  created_at: string;
}

export class HistoryStore {
  readonly db: Database;

  constructor(db: Database) {
    this.db = db;
  }

  /** One page, newest first, plus whether a next page exists (simple pagination: no count). */
  async page(userId: number, options: { page: number; perPage: number; endpoint?: string; status?: number }) {
    const rows = await this.db.query<HistoryRow>(
      `SELECT id, request_id, method, endpoint, product, status, credits, duration_ms, ${BOUNDED_PARAMS_SQL} AS params, ${isoColumn('created_at')} AS created_at
         FROM request_history
        WHERE user_id = $1
          AND ($2::text IS NULL OR endpoint = $2)
          AND ($3::int IS NULL OR status = $3)
        ORDER BY id DESC
        LIMIT $4 OFFSET $5`,
      [userId, options.endpoint ?? null, options.status ?? null, options.perPage + 1, (options.page - 1) * options.perPage, HISTORY_PARAMS_MAX_BYTES, HISTORY_VALUE_MAX_CHARS, CUT_MARKER],
    );
    const hasMore = rows.length > options.perPage;
    return {
      rows: rows.slice(0, options.perPage).map((r) => ({
        ...r,
        id: Number(r.id),
        params: boundedParams(typeof r.params === 'string' ? JSON.parse(r.params) : r.params),
      })),
      hasMore,
    };
  }

  /** Credits and requests per UTC day and product over the last `days` days, and the balances' plans (GET /usage). */
  async usage(userId: number, days: number, now = new Date()) {
    const since = usageWindowStart(now, days);
    const [daily, plans] = await Promise.all([usageByDay(this.db, userId, since), productPlans(this.db, userId)]);
    return { since, daily, plans };
  }
}
