-- Stripe: which user a Stripe customer pays for, and the webhook events already handled.

-- Set by `gleaner users link-stripe`. A customer pays for one user; a user has one customer.
ALTER TABLE users ADD COLUMN stripe_customer_id TEXT;
CREATE UNIQUE INDEX users_stripe_customer_unique ON users (stripe_customer_id) WHERE stripe_customer_id IS NOT NULL;

-- One row per `invoice.paid` event acted upon (renewed, or refused as misconfigured), written in
-- the same transaction as the renewal: a redelivered event finds its id here and changes nothing.
CREATE TABLE stripe_events (
  event_id    TEXT PRIMARY KEY,
  type        TEXT NOT NULL,
  received_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  outcome     TEXT NOT NULL
);
