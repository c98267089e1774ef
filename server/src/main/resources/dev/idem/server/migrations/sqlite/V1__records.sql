-- The records as the first guard created them. Times are epoch milliseconds.
CREATE TABLE IF NOT EXISTS idem_server_record (
  caller TEXT NOT NULL, route TEXT NOT NULL, idem_key TEXT NOT NULL,
  fingerprint TEXT NOT NULL, state TEXT NOT NULL, generation BIGINT NOT NULL, owner TEXT NOT NULL,
  lease_until BIGINT NOT NULL, expires_at BIGINT NOT NULL,
  status INTEGER, headers TEXT, body BLOB, body_omitted INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (caller, route, idem_key));
CREATE INDEX IF NOT EXISTS idem_server_record_expires ON idem_server_record (expires_at);
