-- The statements inside the two ledger batch functions are planned once per connection and then
-- only executed. By default PostgreSQL re-plans a statement with parameters for each call until
-- it has seen five, and keeps re-planning when a custom plan looks cheaper; with a handful of
-- requests per batch (a quiet server, or the PDF route with few in flight) it never stops. The
-- plans do not depend on the values (index look-ups by request id and by (user, product) over the
-- batch's arrays), and planning these statements costs more than running them: about a third of
-- the CPU time of a batch of one on the embedded database, a fifth on PostgreSQL.
ALTER FUNCTION gleaner_hold_batch(TEXT[], BIGINT[], TEXT[], BIGINT[], BIGINT[], DOUBLE PRECISION)
  SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION gleaner_settle_batch(TEXT[], BIGINT[], BIGINT[], TEXT[], TEXT[], TEXT[], TEXT[], INTEGER[], INTEGER[], JSONB[])
  SET plan_cache_mode = force_generic_plan;
