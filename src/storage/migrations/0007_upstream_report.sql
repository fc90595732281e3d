-- The operator's upstream drift report (src/upstream-report/, GET /admin/upstreams, `gleaner
-- upstreams`). Every server process aggregates its upstream calls in memory and merges them here in
-- one statement every few seconds. Only names, verdicts, HTTP statuses, durations and times are
-- stored: never a query, a body, a reason or a credential.

-- Per upstream and operation: the last verdicts (newest first, a JSON array of
-- {"at": ms since the epoch, "verdict", "status", "duration_ms"}, at most 20), and the last call
-- that came back `changed` (the parser cannot read the answer) or `blocked` (we were refused).
CREATE TABLE upstream_operations (
  upstream TEXT NOT NULL,
  operation TEXT NOT NULL,
  recent JSONB NOT NULL DEFAULT '[]'::jsonb,
  last_changed_at TIMESTAMPTZ,
  last_changed_status INTEGER,
  last_blocked_at TIMESTAMPTZ,
  last_blocked_status INTEGER,
  last_seen_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (upstream, operation)
);
CREATE INDEX upstream_operations_seen ON upstream_operations (last_seen_at);

-- Calls per verdict in 5-minute buckets (`bucket` is the bucket's start), kept for 25 hours: the
-- report sums the last hour and the last day from them.
CREATE TABLE upstream_verdict_counts (
  upstream TEXT NOT NULL,
  operation TEXT NOT NULL,
  bucket TIMESTAMPTZ NOT NULL,
  verdict TEXT NOT NULL,
  calls INTEGER NOT NULL,
  PRIMARY KEY (upstream, operation, bucket, verdict)
);
CREATE INDEX upstream_verdict_counts_bucket ON upstream_verdict_counts (bucket);

-- Per upstream: its circuit breaker's state as of the last change any process reported.
CREATE TABLE upstream_circuits (
  upstream TEXT PRIMARY KEY,
  state TEXT NOT NULL,
  open_until TIMESTAMPTZ,
  trips INTEGER NOT NULL,
  since TIMESTAMPTZ NOT NULL
);
