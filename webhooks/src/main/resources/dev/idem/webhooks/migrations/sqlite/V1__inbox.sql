-- The inbox as WebhookInbox created it before versioned migrations, with IF NOT EXISTS, so that
-- an inbox from then is adopted as it is. Times are epoch milliseconds.
CREATE TABLE IF NOT EXISTS idem_webhook_inbox (
  source VARCHAR(64) NOT NULL,
  event_id VARCHAR(255) NOT NULL,
  event_type VARCHAR(255) NOT NULL,
  signature_digest BLOB NOT NULL,
  body BLOB NOT NULL,
  signed_at INTEGER,
  received_at INTEGER NOT NULL,
  state VARCHAR(16) NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  runs INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  first_attempt_at INTEGER,
  last_delay_ms INTEGER NOT NULL DEFAULT 0,
  lease_owner VARCHAR(128),
  lease_until INTEGER,
  lease_generation INTEGER NOT NULL DEFAULT 0,
  last_error VARCHAR(1000),
  finished_at INTEGER,
  PRIMARY KEY (source, event_id));
-- The remembered signatures: a replay carries one already accepted for this source.
CREATE UNIQUE INDEX IF NOT EXISTS idem_webhook_inbox_signature ON idem_webhook_inbox (source, signature_digest);
CREATE INDEX IF NOT EXISTS idem_webhook_inbox_due ON idem_webhook_inbox (state, next_attempt_at);
CREATE TABLE IF NOT EXISTS idem_webhook_attempts (
  source VARCHAR(64) NOT NULL,
  event_id VARCHAR(255) NOT NULL,
  run INTEGER NOT NULL,
  owner VARCHAR(128) NOT NULL,
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  outcome VARCHAR(16),
  error VARCHAR(1000),
  decision VARCHAR(300),
  PRIMARY KEY (source, event_id, run));
