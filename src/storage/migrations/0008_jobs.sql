-- Jobs that outlive one request (docs/jobs.md, contract §9): crawls and batches, their pages, and
-- the webhook events they emit. The queue itself (which page runs next, retries, expiry of dead
-- workers) is pg-boss's, in its own schema; these tables hold what the user reads back.

-- One crawl or batch. `page_limit` caps the pages delivered; `admitted` counts the pages queued,
-- being fetched or delivered (never above the limit: a page that fails makes room for a waiting
-- one); `robots` is the site's robots.txt as read when the crawl started, so every replica judges
-- URLs by the same rules; `request_id` is the request that created it (its history row).
CREATE TABLE jobs (
  id             UUID PRIMARY KEY,
  user_id        BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  kind           TEXT NOT NULL,
  status         TEXT NOT NULL,
  params         JSONB NOT NULL,
  webhook        JSONB,
  page_limit     INTEGER NOT NULL,
  request_id     TEXT NOT NULL,
  robots         TEXT,
  crawl_delay_ms INTEGER NOT NULL DEFAULT 0,
  admitted       INTEGER NOT NULL DEFAULT 0,
  completed      INTEGER NOT NULL DEFAULT 0,
  failed_pages   INTEGER NOT NULL DEFAULT 0,
  credits_used   BIGINT NOT NULL DEFAULT 0,
  error          TEXT,
  webhook_error  TEXT,
  created_at     TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  started_at     TIMESTAMPTZ,
  finished_at    TIMESTAMPTZ,
  expires_at     TIMESTAMPTZ NOT NULL
);
CREATE INDEX jobs_user ON jobs (user_id, created_at DESC);
CREATE INDEX jobs_status ON jobs (status) WHERE status IN ('queued', 'running');
CREATE INDEX jobs_expires ON jobs (expires_at);

-- Every URL a job has seen, once per canonical form (`url_key`). States:
--   waiting  found, not yet admitted (the limit may still need it)
--   queued   admitted: a page task is in the queue for it
--   fetching a worker holds a credit for it and is fetching it (attempt counts the tries)
--   done     delivered and billed (seq orders the results)
--   failed   the target could not be read (not billed)
--   skipped  the job ended before it was fetched (not billed)
CREATE SEQUENCE job_page_found;
CREATE SEQUENCE job_page_delivered;
CREATE TABLE job_pages (
  job_id      UUID NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  url_key     TEXT NOT NULL,
  url         TEXT NOT NULL,
  depth       INTEGER NOT NULL,
  state       TEXT NOT NULL,
  found       BIGINT NOT NULL DEFAULT nextval('job_page_found'),
  attempt     INTEGER NOT NULL DEFAULT 0,
  seq         BIGINT,
  status_code INTEGER,
  final_url   TEXT,
  content     TEXT,
  links       JSONB,
  error       TEXT,
  charged     INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (job_id, url_key)
);
CREATE INDEX job_pages_waiting ON job_pages (job_id, depth, found) WHERE state = 'waiting';
CREATE INDEX job_pages_active ON job_pages (job_id) WHERE state IN ('queued', 'fetching');
CREATE INDEX job_pages_delivered ON job_pages (job_id, seq) WHERE seq IS NOT NULL;

-- The fetch slots of each target host, shared by every process: at most JOB_HOST_CONCURRENCY
-- fetches of a host at once (one when its robots.txt asks for a crawl-delay). A slot is leased for
-- the length of a fetch (a process that dies frees it when the lease ends); when the fetch ends,
-- the slot is free again after the host's crawl-delay.
CREATE TABLE job_host_slots (
  host        TEXT NOT NULL,
  slot        INTEGER NOT NULL,
  free_at     TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (host, slot)
);

-- Each user's webhook signing secret (shown on request: it must be readable, as Stripe's are).
CREATE TABLE webhook_secrets (
  user_id    BIGINT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  secret     TEXT NOT NULL,
  rotated_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);

-- One webhook event: its body is fixed when the event happens, so every retry sends the same
-- bytes under the same id. `source` names what emitted it (a job today, a wallet monitor later).
CREATE TABLE webhook_events (
  id           UUID PRIMARY KEY,
  user_id      BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  job_id       UUID REFERENCES jobs(id) ON DELETE CASCADE,
  source       TEXT NOT NULL,
  url          TEXT NOT NULL,
  type         TEXT NOT NULL,
  body         TEXT NOT NULL,
  state        TEXT NOT NULL DEFAULT 'pending',
  attempts     INTEGER NOT NULL DEFAULT 0,
  last_status  INTEGER,
  last_error   TEXT,
  created_at   TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  delivered_at TIMESTAMPTZ,
  expires_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX webhook_events_job ON webhook_events (job_id, created_at);
CREATE INDEX webhook_events_pending ON webhook_events (state) WHERE state = 'pending';
CREATE INDEX webhook_events_expires ON webhook_events (expires_at);
