package dev.idem.jdbc.internal;

import java.util.Locale;

/** What differs between the databases the journal supports. Everything else is shared SQL. */
public enum Dialect {
  /** SQLite 3 (the embedded default): one process, one writer connection, group commit. */
  SQLITE("sqlite") {
    @Override
    String synchronousCommitSql(Durability durability) {
      return null; // synchronous=FULL on the connection: every commit syncs
    }

    @Override
    String lockForClaim() {
      return ""; // one connection: the store's lock already serializes every unit of work
    }

    @Override
    String lockForUpdate() {
      return "";
    }

    @Override
    String insertIfAbsentSuffix() {
      return " ON CONFLICT DO NOTHING";
    }

    @Override
    String migrationLockSql() {
      return null;
    }
  },
  /**
   * H2 2.x through an app's DataSource: one process, one connection, group commit. Not a default:
   * H2 lost committed rows under repeated kills in our measurements (see JdbcJournal).
   */
  H2("h2") {
    @Override
    String synchronousCommitSql(Durability durability) {
      return null;
    }

    @Override
    String lockForClaim() {
      return ""; // one connection: the store's lock already serializes every unit of work
    }

    @Override
    String lockForUpdate() {
      return "";
    }

    @Override
    String insertIfAbsentSuffix() {
      return "";
    }

    @Override
    String migrationLockSql() {
      return null;
    }
  },
  /** PostgreSQL 12 or later: a fleet shares the database. */
  POSTGRESQL("postgresql") {
    @Override
    String synchronousCommitSql(Durability durability) {
      return durability == Durability.SYNC ? "SET LOCAL synchronous_commit TO on"
          : "SET LOCAL synchronous_commit TO off";
    }

    @Override
    String lockForClaim() {
      return " FOR UPDATE SKIP LOCKED";
    }

    @Override
    String lockForUpdate() {
      return " FOR UPDATE";
    }

    @Override
    String insertIfAbsentSuffix() {
      return " ON CONFLICT DO NOTHING";
    }

    @Override
    String migrationLockSql() {
      // One arbitrary constant: "idem" in ASCII. Held until the migration transaction ends.
      return "SELECT pg_advisory_xact_lock(1768187245)";
    }
  };

  private final String resourceDir;

  Dialect(String resourceDir) {
    this.resourceDir = resourceDir;
  }

  /** The classpath folder of this dialect's migrations. */
  String migrationsFolder() {
    return "dev/idem/jdbc/migrations/" + resourceDir + "/";
  }

  /** The statement that sets commit durability for the current transaction, or null if none is needed. */
  abstract String synchronousCommitSql(Durability durability);

  /**
   * The locking clause for reading a row that is about to be claimed: PostgreSQL skips rows another
   * node is claiming right now, so two nodes never wait on each other for the same operation.
   */
  abstract String lockForClaim();

  /** The locking clause for a read-modify-write of one row by its holder. */
  abstract String lockForUpdate();

  /** The clause that makes an INSERT a no-op on a duplicate key, or empty if the dialect lacks one. */
  abstract String insertIfAbsentSuffix();

  /** A statement that serializes concurrent migrations, or null if the database is not shared. */
  abstract String migrationLockSql();

  /**
   * Picks the dialect from {@link java.sql.DatabaseMetaData#getDatabaseProductName()}.
   *
   * @return the dialect, or null if the database is not supported
   */
  public static Dialect fromProductName(String productName) {
    String p = productName == null ? "" : productName.toLowerCase(Locale.ROOT);
    if (p.contains("sqlite")) {
      return SQLITE;
    }
    if (p.contains("h2")) {
      return H2;
    }
    if (p.contains("postgresql")) {
      return POSTGRESQL;
    }
    return null;
  }
}
