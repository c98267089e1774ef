package dev.idem.webhooks.internal;

import java.util.List;

/**
 * The SQL that differs between SQLite and PostgreSQL: column types, and how due events are claimed.
 * SQLite has one writer (this process holds the inbox's lock file), so select-then-update inside
 * the writer's transaction is atomic. PostgreSQL may have several instances: a claim locks the
 * rows it takes with {@code FOR UPDATE SKIP LOCKED}, so instances never wait for or take each
 * other's rows.
 */
public enum Dialect {
  SQLITE("BLOB", "INTEGER"),
  POSTGRES("BYTEA", "BIGINT");

  public static final String INBOX = "idem_webhook_inbox";
  public static final String ATTEMPTS = "idem_webhook_attempts";

  private final String bytes;
  private final String bigint;

  Dialect(String bytes, String bigint) {
    this.bytes = bytes;
    this.bigint = bigint;
  }

  /** Idempotent DDL, run at open. Times are epoch milliseconds. */
  public List<String> schema() {
    return List.of(
        "CREATE TABLE IF NOT EXISTS " + INBOX + " ("
            + " source VARCHAR(64) NOT NULL,"
            + " event_id VARCHAR(255) NOT NULL,"
            + " event_type VARCHAR(255) NOT NULL,"
            + " signature_digest " + bytes + " NOT NULL,"
            + " body " + bytes + " NOT NULL,"
            + " signed_at " + bigint + ","
            + " received_at " + bigint + " NOT NULL,"
            + " state VARCHAR(16) NOT NULL,"
            + " attempts INTEGER NOT NULL DEFAULT 0,"
            + " runs INTEGER NOT NULL DEFAULT 0,"
            + " next_attempt_at " + bigint + " NOT NULL,"
            + " first_attempt_at " + bigint + ","
            + " last_delay_ms " + bigint + " NOT NULL DEFAULT 0,"
            + " lease_owner VARCHAR(128),"
            + " lease_until " + bigint + ","
            + " lease_generation " + bigint + " NOT NULL DEFAULT 0,"
            + " last_error VARCHAR(1000),"
            + " finished_at " + bigint + ","
            + " PRIMARY KEY (source, event_id))",
        // The remembered signatures: a replay carries one already accepted for this source.
        "CREATE UNIQUE INDEX IF NOT EXISTS " + INBOX + "_signature ON " + INBOX + " (source, signature_digest)",
        "CREATE INDEX IF NOT EXISTS " + INBOX + "_due ON " + INBOX + " (state, next_attempt_at)",
        "CREATE TABLE IF NOT EXISTS " + ATTEMPTS + " ("
            + " source VARCHAR(64) NOT NULL,"
            + " event_id VARCHAR(255) NOT NULL,"
            + " run INTEGER NOT NULL,"
            + " owner VARCHAR(128) NOT NULL,"
            + " started_at " + bigint + " NOT NULL,"
            + " ended_at " + bigint + ","
            + " outcome VARCHAR(16),"
            + " error VARCHAR(1000),"
            + " decision VARCHAR(300),"
            + " PRIMARY KEY (source, event_id, run))");
  }

  static final String CLAIMED_COLUMNS = "source, event_id, event_type, body, received_at, attempts, runs,"
      + " lease_generation, first_attempt_at, last_delay_ms";

  static final String DUE = "(state = 'PENDING' AND next_attempt_at <= ?) OR (state = 'PROCESSING' AND lease_until < ?)";

  /** PostgreSQL only: claims up to N due rows in one statement. Parameters: now, now, limit, owner, leaseUntil, now. */
  static final String PG_CLAIM = "WITH c AS (SELECT source, event_id FROM " + INBOX + " WHERE " + DUE
      + " ORDER BY next_attempt_at LIMIT ? FOR UPDATE SKIP LOCKED)"
      + " UPDATE " + INBOX + " i SET state = 'PROCESSING', attempts = i.attempts + 1, runs = i.runs + 1,"
      + " lease_owner = ?, lease_until = ?, lease_generation = i.lease_generation + 1,"
      + " first_attempt_at = COALESCE(i.first_attempt_at, ?)"
      + " FROM c WHERE i.source = c.source AND i.event_id = c.event_id"
      + " RETURNING i.source, i.event_id, i.event_type, i.body, i.received_at, i.attempts, i.runs,"
      + " i.lease_generation, i.first_attempt_at, i.last_delay_ms";
}
