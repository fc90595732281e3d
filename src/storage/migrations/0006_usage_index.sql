-- GET /usage sums a user's history by day over the last N days. This index serves that range
-- directly (user, then time) and carries the summed columns, so the query reads the index only,
-- never the history rows with their JSON params: fast for a user with millions of rows.
CREATE INDEX request_history_user_time ON request_history (user_id, created_at) INCLUDE (product, credits, request_id);
