package dev.idem.server.internal;

import java.util.List;

/** The few statements in which SQLite and PostgreSQL differ: the schema's types. */
public enum SqlDialect {
  /** SQLite 3.35 or later (upsert with RETURNING). */
  SQLITE("BLOB"),
  /** PostgreSQL 9.5 or later. */
  POSTGRESQL("BYTEA");

  /** The table every statement uses. */
  public static final String TABLE = "idem_server_record";

  private final String blob;

  SqlDialect(String blob) {
    this.blob = blob;
  }

  /** @return the statements that create the schema if it is missing */
  public List<String> schema() {
    return List.of(
        "CREATE TABLE IF NOT EXISTS " + TABLE + " ("
            + "caller TEXT NOT NULL, route TEXT NOT NULL, idem_key TEXT NOT NULL, "
            + "fingerprint TEXT NOT NULL, state TEXT NOT NULL, generation BIGINT NOT NULL, owner TEXT NOT NULL, "
            + "lease_until BIGINT NOT NULL, expires_at BIGINT NOT NULL, "
            + "status INTEGER, headers TEXT, body " + blob + ", body_omitted INTEGER NOT NULL DEFAULT 0, "
            + "PRIMARY KEY (caller, route, idem_key))",
        "CREATE INDEX IF NOT EXISTS " + TABLE + "_expires ON " + TABLE + " (expires_at)");
  }
}
