-- Idem journal, schema version 1 (H2).
-- Every statement is idempotent: H2 commits each DDL statement on its own, so a process killed
-- between two leaves them half applied, and the next open runs the script again from its start.
-- Instants are BIGINT nanoseconds since 1970-01-01T00:00:00Z (exact, comparable, dialect-neutral).
CREATE TABLE IF NOT EXISTS idem_operation (
  scope             VARCHAR(200)  NOT NULL,
  operation         VARCHAR(200)  NOT NULL,
  op_key            VARCHAR(255)  NOT NULL,
  reference         VARCHAR(200),
  fingerprint       VARCHAR(64)   NOT NULL,
  request_json      VARCHAR(1000000) NOT NULL,
  state             VARCHAR(32)   NOT NULL,
  owner             VARCHAR(200),
  generation        BIGINT        NOT NULL,
  lease_expires_at  BIGINT,
  next_attempt_at   BIGINT,
  created_at        BIGINT        NOT NULL,
  updated_at        BIGINT        NOT NULL,
  attempts_json     VARCHAR(1000000) NOT NULL,
  response_json     VARCHAR(1000000),
  reason            VARCHAR(2000),
  quarantined_at    BIGINT,
  quarantine_reason VARCHAR(500),
  PRIMARY KEY (scope, operation, op_key)
);
CREATE INDEX IF NOT EXISTS idem_operation_state_updated ON idem_operation (state, updated_at);
CREATE INDEX IF NOT EXISTS idem_operation_state_next ON idem_operation (state, next_attempt_at);
CREATE INDEX IF NOT EXISTS idem_operation_reference ON idem_operation (scope, reference);
CREATE INDEX IF NOT EXISTS idem_operation_quarantined ON idem_operation (quarantined_at);
