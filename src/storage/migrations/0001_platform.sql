-- Accounts, tokens, credit balances with holds and a ledger, prices, request history.

CREATE TABLE users (
  id              BIGSERIAL PRIMARY KEY,
  name            TEXT NOT NULL,
  email           TEXT NOT NULL,
  secret_key_hash TEXT NOT NULL,
  is_owner        BOOLEAN NOT NULL DEFAULT FALSE,
  created_at      TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  updated_at      TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX users_email_unique ON users (lower(email));

-- Sanctum-style personal access tokens: only the SHA-256 of the secret part is stored.
CREATE TABLE api_tokens (
  id           BIGSERIAL PRIMARY KEY,
  user_id      BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name         TEXT NOT NULL DEFAULT 'default',
  token_hash   TEXT NOT NULL UNIQUE,
  last_used_at TIMESTAMPTZ,
  revoked_at   TIMESTAMPTZ,
  created_at   TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX api_tokens_user ON api_tokens (user_id);

-- Available credits per user and product. Held credits are already subtracted, so the CHECK
-- makes overdraft impossible whatever the concurrency.
CREATE TABLE balances (
  user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  product TEXT NOT NULL CHECK (product IN ('scraping', 'extraction', 'blockchain')),
  balance BIGINT NOT NULL DEFAULT 0 CHECK (balance >= 0),
  plan    TEXT,
  PRIMARY KEY (user_id, product)
);

-- Credits set aside for a request in flight. Settled exactly once: capture/release delete the
-- row; the sweeper returns rows whose process died (expires_at passed).
CREATE TABLE credit_holds (
  request_id TEXT PRIMARY KEY,
  user_id    BIGINT NOT NULL,
  product    TEXT NOT NULL,
  amount     BIGINT NOT NULL CHECK (amount > 0),
  expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX credit_holds_expiry ON credit_holds (expires_at);

-- Every movement of a balance. SUM(delta) per user and product equals the stored balance.
CREATE TABLE credit_ledger (
  id         BIGSERIAL PRIMARY KEY,
  user_id    BIGINT NOT NULL,
  product    TEXT NOT NULL,
  kind       TEXT NOT NULL CHECK (kind IN ('grant', 'set', 'renew', 'hold', 'extend', 'capture', 'release', 'expire')),
  delta      BIGINT NOT NULL,
  charged    BIGINT NOT NULL DEFAULT 0,
  reference  TEXT NOT NULL,
  note       TEXT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (reference, kind)
);
CREATE INDEX credit_ledger_account ON credit_ledger (user_id, product);

-- The price table is data: the operator changes it without a release.
CREATE TABLE prices (
  operation TEXT PRIMARY KEY,
  credits   INTEGER NOT NULL CHECK (credits >= 0)
);
INSERT INTO prices (operation, credits) VALUES
  ('search', 3),
  ('pdf_page', 1),
  ('image', 3),
  ('web', 1),
  ('web_geo', 5),
  ('web_browser', 5),
  ('forum', 3),
  ('mb_tweet', 3),
  ('mb_legacy', 3),
  ('mb_user', 3),
  ('mb_search', 10),
  ('mb_user_tweets', 10);

CREATE TABLE request_history (
  id          BIGSERIAL PRIMARY KEY,
  user_id     BIGINT NOT NULL,
  request_id  TEXT NOT NULL,
  method      TEXT NOT NULL,
  endpoint    TEXT NOT NULL,
  product     TEXT,
  status      INTEGER NOT NULL,
  credits     INTEGER NOT NULL DEFAULT 0,
  duration_ms INTEGER NOT NULL,
  params      JSONB NOT NULL DEFAULT '{}'::jsonb,
  created_at  TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX request_history_user ON request_history (user_id, id DESC);
