-- Holds and settlements of many requests in one statement (group commit, see
-- src/storage/group-commit.ts): under load one round trip and one commit serve a whole batch.
-- Both functions lock balance rows in (user_id, product) order, so concurrent batches (in one
-- process or several) never deadlock on each other.

-- A request has one history row. A batch retried after an ambiguous failure (the connection
-- dropped after the commit) finds its holds already settled and must not record them twice.
CREATE UNIQUE INDEX request_history_request_id ON request_history (request_id);

-- Holds up to p_maxs[i] credits (at least p_mins[i], and at least 1) for each request, in array
-- order per balance: the same answer as holding them one by one. Returns the requests that got
-- a hold and how much; a request missing from the answer was refused.
-- Commits without waiting for the WAL flush, as the single hold always did: the settlement that
-- follows commits synchronously and its flush covers the hold (see src/credits/ledger.ts).
CREATE FUNCTION gleaner_hold_batch(
  p_request_ids TEXT[], p_user_ids BIGINT[], p_products TEXT[], p_mins BIGINT[], p_maxs BIGINT[],
  p_ttl_seconds DOUBLE PRECISION)
RETURNS TABLE (hold_request_id TEXT, hold_amount BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
  account RECORD;
  item RECORD;
  available BIGINT;
  take BIGINT;
  ids TEXT[] := '{}';
  users BIGINT[] := '{}';
  products TEXT[] := '{}';
  amounts BIGINT[] := '{}';
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  FOR account IN
    SELECT b.user_id, b.product, b.balance FROM balances b
     WHERE (b.user_id, b.product) IN (SELECT u, p FROM unnest(p_user_ids, p_products) AS k(u, p))
     ORDER BY b.user_id, b.product
       FOR UPDATE
  LOOP
    available := account.balance;
    FOR item IN
      SELECT r.id, r.lo, r.hi
        FROM unnest(p_request_ids, p_user_ids, p_products, p_mins, p_maxs) WITH ORDINALITY AS r(id, u, p, lo, hi, ord)
       WHERE r.u = account.user_id AND r.p = account.product
       ORDER BY r.ord
    LOOP
      IF available >= GREATEST(item.lo, 1) AND item.hi > 0 THEN
        take := LEAST(item.hi, available);
        available := available - take;
        ids := ids || item.id;
        users := users || account.user_id;
        products := products || account.product;
        amounts := amounts || take;
      END IF;
    END LOOP;
    IF available < account.balance THEN
      UPDATE balances SET balance = available WHERE user_id = account.user_id AND product = account.product;
    END IF;
  END LOOP;

  INSERT INTO credit_holds (request_id, user_id, product, amount, expires_at)
  SELECT h.id, h.u, h.p, h.amount, clock_timestamp() + make_interval(secs => p_ttl_seconds)
    FROM unnest(ids, users, products, amounts) AS h(id, u, p, amount);
  INSERT INTO credit_ledger (user_id, product, kind, delta, reference)
  SELECT h.u, h.p, 'hold', -h.amount, h.id
    FROM unnest(ids, users, products, amounts) AS h(id, u, p, amount);

  RETURN QUERY SELECT h.id, h.amount FROM unnest(ids, amounts) AS h(id, amount);
END
$$;

-- Settles holds (keeps LEAST(charge, held), returns the rest to the balance) and records history
-- rows (a request already recorded keeps its row), in one transaction. A hold already settled or swept is simply not found: nothing is
-- charged twice. History rows take the credits charged for their request (0 without a hold).
-- Returns the settled requests and what each was charged.
CREATE FUNCTION gleaner_settle_batch(
  p_request_ids TEXT[], p_charges BIGINT[],
  h_user_ids BIGINT[], h_request_ids TEXT[], h_methods TEXT[], h_endpoints TEXT[], h_products TEXT[],
  h_statuses INTEGER[], h_durations INTEGER[], h_params JSONB[])
RETURNS TABLE (settled_request_id TEXT, settled_charge BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
  ids TEXT[];
  users BIGINT[];
  products TEXT[];
  amounts BIGINT[];
  charges BIGINT[];
BEGIN
  WITH settled AS (
    DELETE FROM credit_holds h
     USING unnest(p_request_ids, p_charges) AS s(id, charge)
     WHERE h.request_id = s.id
    RETURNING h.request_id AS id, h.user_id AS u, h.product AS p, h.amount, LEAST(GREATEST(s.charge, 0), h.amount) AS charged)
  SELECT COALESCE(array_agg(id), '{}'), COALESCE(array_agg(u), '{}'), COALESCE(array_agg(p), '{}'),
         COALESCE(array_agg(amount), '{}'), COALESCE(array_agg(charged), '{}')
    INTO ids, users, products, amounts, charges
    FROM settled;

  -- What goes back to balances (a full capture returns nothing and leaves the row alone).
  PERFORM 1 FROM balances b
    WHERE (b.user_id, b.product) IN (
      SELECT r.u, r.p FROM unnest(users, products, amounts, charges) AS r(u, p, amount, charged) WHERE r.amount > r.charged)
    ORDER BY b.user_id, b.product
      FOR UPDATE;
  UPDATE balances b SET balance = b.balance + r.back
    FROM (SELECT s.u, s.p, sum(s.amount - s.charged) AS back
            FROM unnest(users, products, amounts, charges) AS s(u, p, amount, charged)
           GROUP BY s.u, s.p HAVING sum(s.amount - s.charged) > 0) r
   WHERE b.user_id = r.u AND b.product = r.p;

  INSERT INTO credit_ledger (user_id, product, kind, delta, charged, reference)
  SELECT s.u, s.p, CASE WHEN s.charged > 0 THEN 'capture' ELSE 'release' END, s.amount - s.charged, s.charged, s.id
    FROM unnest(ids, users, products, amounts, charges) AS s(id, u, p, amount, charged);

  INSERT INTO request_history (user_id, request_id, method, endpoint, product, status, credits, duration_ms, params)
  SELECT x.u, x.id, x.method, x.endpoint, x.p, x.status, COALESCE(s.charged, 0), x.duration, x.params
    FROM unnest(h_user_ids, h_request_ids, h_methods, h_endpoints, h_products, h_statuses, h_durations, h_params)
           WITH ORDINALITY AS x(u, id, method, endpoint, p, status, duration, params, ord)
    LEFT JOIN unnest(ids, charges) AS s(id, charged) ON s.id = x.id
   ORDER BY x.ord
  ON CONFLICT (request_id) DO NOTHING;

  RETURN QUERY SELECT s.id, s.charged FROM unnest(ids, charges) AS s(id, charged);
END
$$;
