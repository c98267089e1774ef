-- Idem journal, schema version 1 (SQLite, the embedded default).
-- Instants are INTEGER nanoseconds since 1970-01-01T00:00:00Z (exact, comparable, dialect-neutral).
-- SQLite does not enforce VARCHAR widths, so CHECK constraints hold the same limits as the other
-- dialects; their names end in "_length" so that an error can name the column without its value.
-- Identity columns compare with SQLite's BINARY collation (UTF-8 bytes): paging order matches
-- Java's String order for ASCII, as on PostgreSQL's "C" collation.
CREATE TABLE idem_operation (
  scope             TEXT    NOT NULL CONSTRAINT scope_length CHECK (length(scope) <= 200),
  operation         TEXT    NOT NULL CONSTRAINT operation_length CHECK (length(operation) <= 200),
  op_key            TEXT    NOT NULL CONSTRAINT op_key_length CHECK (length(op_key) <= 255),
  reference         TEXT    CONSTRAINT reference_length CHECK (length(reference) <= 200),
  fingerprint       TEXT    NOT NULL CONSTRAINT fingerprint_length CHECK (length(fingerprint) <= 64),
  request_json      TEXT    NOT NULL,
  request_check     TEXT,
  state             TEXT    NOT NULL CONSTRAINT state_length CHECK (length(state) <= 32),
  owner             TEXT    CONSTRAINT owner_length CHECK (length(owner) <= 200),
  generation        INTEGER NOT NULL,
  lease_expires_at  INTEGER,
  next_attempt_at   INTEGER,
  created_at        INTEGER NOT NULL,
  updated_at        INTEGER NOT NULL,
  attempts_json     TEXT    NOT NULL,
  response_json     TEXT,
  reason            TEXT,
  quarantined_at    INTEGER,
  quarantine_reason TEXT,
  PRIMARY KEY (scope, operation, op_key)
);
CREATE INDEX idem_operation_state_updated ON idem_operation (state, updated_at);
CREATE INDEX idem_operation_reference ON idem_operation (scope, reference) WHERE reference IS NOT NULL;
CREATE INDEX idem_operation_quarantined ON idem_operation (quarantined_at) WHERE quarantined_at IS NOT NULL;
-- What the journal knows about itself: its id (also in the directory's marker file, so that a
-- deleted or swapped database file is noticed) and whether the last session closed cleanly.
CREATE TABLE idem_journal_meta (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
