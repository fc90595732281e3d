-- Wallet monitors of the blockchain product (docs/blockchain.md, "Monitors"): one follower per
-- chain reads new blocks once for every monitor of that chain; what a monitor sees is delivered as
-- signed webhooks through webhook_events (source 'monitor').

CREATE TABLE chain_monitors (
  id             UUID PRIMARY KEY,
  user_id        BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  chain          TEXT NOT NULL,
  -- As the user wrote them, and in the form transfers are matched in (lowercase where case does not count).
  addresses      TEXT[] NOT NULL,
  webhook_url    TEXT NOT NULL,
  asset          TEXT NOT NULL DEFAULT 'all',
  min_value      NUMERIC(78, 0) NOT NULL DEFAULT 0,
  confirmations  INTEGER NOT NULL,
  status         TEXT NOT NULL DEFAULT 'active',
  -- The first block it watches: the one after the head when it was created.
  from_block     BIGINT NOT NULL,
  -- The last UTC day whose address fee was taken, and the tries at taking today's.
  billed_day     DATE,
  fee_tries      INTEGER NOT NULL DEFAULT 0,
  -- One process delivers a monitor's events at a time, in order: it leases the monitor.
  deliver_owner  TEXT,
  deliver_until  TIMESTAMPTZ,
  created_at     TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  updated_at     TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX chain_monitors_user ON chain_monitors (user_id, created_at);
CREATE INDEX chain_monitors_chain ON chain_monitors (chain, status);

-- Watched addresses, in matching form: a block's transfers are matched with one indexed lookup,
-- whatever the number of monitors.
CREATE TABLE chain_monitor_addresses (
  monitor_id UUID NOT NULL REFERENCES chain_monitors(id) ON DELETE CASCADE,
  chain      TEXT NOT NULL,
  address    TEXT NOT NULL,
  PRIMARY KEY (monitor_id, address)
);
CREATE INDEX chain_monitor_addresses_lookup ON chain_monitor_addresses (chain, address);

-- One follower per chain: the last block it processed, and its lease (one process follows at a time).
CREATE TABLE chain_cursors (
  chain         TEXT PRIMARY KEY,
  block_number  BIGINT,
  block_hash    TEXT,
  lease_owner   TEXT,
  lease_until   TIMESTAMPTZ,
  updated_at    TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);

-- Hashes of recent processed blocks: a new block whose parent hash is not the stored one is a reorg.
CREATE TABLE chain_blocks (
  chain        TEXT NOT NULL,
  number       BIGINT NOT NULL,
  hash         TEXT NOT NULL,
  parent_hash  TEXT NOT NULL,
  PRIMARY KEY (chain, number)
);

-- A transfer one monitor matched, until it is sent (confirmations), reverted (reorg) or dropped.
--   waiting   seen, fewer confirmations than the monitor asks
--   sent      its chain.transfer event is recorded
--   orphaned  sent, then its block was replaced: reverted unless the new branch has it too
--   dropped   waiting, then its block was replaced: never sent
--   reverted  its chain.transfer_reverted event is recorded
CREATE TABLE chain_matches (
  monitor_id    UUID NOT NULL REFERENCES chain_monitors(id) ON DELETE CASCADE,
  chain         TEXT NOT NULL,
  tx_hash       TEXT NOT NULL,
  log_index     INTEGER NOT NULL,
  block_number  BIGINT NOT NULL,
  block_hash    TEXT NOT NULL,
  transfer      JSONB NOT NULL,
  state         TEXT NOT NULL DEFAULT 'waiting',
  -- Times it was mined again after being reverted: part of its event ids from then on.
  generation    INTEGER NOT NULL DEFAULT 0,
  created_at    TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (monitor_id, tx_hash, log_index)
);
CREATE INDEX chain_matches_open ON chain_matches (chain, state, block_number) WHERE state IN ('waiting', 'sent', 'orphaned');

-- A monitor's events in the order they are delivered; delivery state is the webhook_events row's.
CREATE TABLE chain_monitor_events (
  event_id         UUID PRIMARY KEY REFERENCES webhook_events(id) ON DELETE CASCADE,
  monitor_id       UUID NOT NULL REFERENCES chain_monitors(id) ON DELETE CASCADE,
  seq              BIGINT GENERATED ALWAYS AS IDENTITY,
  type             TEXT NOT NULL,
  -- Paid events hold a credit before each attempt (chain.transfer); the others are free.
  billable         BOOLEAN NOT NULL,
  -- Attempts claimed (each holds under its own id), and when the next may be made.
  tries            INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX chain_monitor_events_order ON chain_monitor_events (monitor_id, seq);
