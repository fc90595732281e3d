-- Secrets the service generates for itself and every process must share (the HMAC key of the
-- microblog page tokens when PAGE_TOKEN_SECRET is not set). Created once, never rotated by code.
CREATE TABLE service_secrets (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
