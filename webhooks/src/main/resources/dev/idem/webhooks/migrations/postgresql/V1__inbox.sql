-- The inbox as WebhookInbox created it before versioned migrations, with IF NOT EXISTS, so that
-- an inbox from then is adopted as it is. Times are epoch milliseconds.
CREATE TABLE IF NOT EXISTS idem_webhook_inbox (
  source VARCHAR(64) NOT NULL,
  event_id VARCHAR(255) NOT NULL,
  event_type VARCHAR(255) NOT NULL,
  signature_digest BYTEA NOT NULL,
  body BYTEA NOT NULL,
  signed_at BIGINT,
  received_at BIGINT NOT NULL,
  state VARCHAR(16) NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  runs INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT NOT NULL,
  first_attempt_at BIGINT,
  last_delay_ms BIGINT NOT NULL DEFAULT 0,
  lease_owner VARCHAR(128),
  lease_until BIGINT,
  lease_generation BIGINT NOT NULL DEFAULT 0,
  last_error VARCHAR(1000),
  finished_at BIGINT,
  PRIMARY KEY (source, event_id));
-- The remembered signatures: a replay carries one already accepted for this source.
CREATE UNIQUE INDEX IF NOT EXISTS idem_webhook_inbox_signature ON idem_webhook_inbox (source, signature_digest);
CREATE INDEX IF NOT EXISTS idem_webhook_inbox_due ON idem_webhook_inbox (state, next_attempt_at);
CREATE TABLE IF NOT EXISTS idem_webhook_attempts (
  source VARCHAR(64) NOT NULL,
  event_id VARCHAR(255) NOT NULL,
  run INTEGER NOT NULL,
  owner VARCHAR(128) NOT NULL,
  started_at BIGINT NOT NULL,
  ended_at BIGINT,
  outcome VARCHAR(16),
  error VARCHAR(1000),
  decision VARCHAR(300),
  PRIMARY KEY (source, event_id, run));
