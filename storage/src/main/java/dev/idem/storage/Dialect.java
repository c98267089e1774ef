package dev.idem.storage;

import java.util.Locale;

/** What differs between the databases Idem's stores support. Everything else is shared SQL. */
public enum Dialect {
  /**
   * SQLite 3 (the embedded default): one process, one writer connection, group commit. Its
   * connection runs with {@code synchronous=FULL}, so every commit syncs.
   */
  SQLITE("sqlite", " ON CONFLICT DO NOTHING", "", "", null),
  /**
   * H2 2.x through an app's DataSource: one process, one connection, group commit. Not a default:
   * H2 lost committed rows under repeated kills in our measurements (see JdbcJournal). It has no
   * ON CONFLICT outside its PostgreSQL mode; a duplicate key is caught instead.
   */
  H2("h2", "", "", "", null),
  /**
   * PostgreSQL 12 or later: a fleet shares the database. Its migrations hold an advisory lock on
   * one arbitrary constant ("idem" in ASCII) until the migration transaction ends.
   */
  POSTGRESQL("postgresql", " ON CONFLICT DO NOTHING", " FOR UPDATE SKIP LOCKED", " FOR UPDATE",
      "SELECT pg_advisory_xact_lock(1768187245)");

  private final String resourceDir;
  private final String insertIfAbsentSuffix;
  private final String lockForClaim;
  private final String lockForUpdate;
  private final String migrationLockSql;

  Dialect(String resourceDir, String insertIfAbsentSuffix, String lockForClaim, String lockForUpdate,
      String migrationLockSql) {
    this.resourceDir = resourceDir;
    this.insertIfAbsentSuffix = insertIfAbsentSuffix;
    this.lockForClaim = lockForClaim;
    this.lockForUpdate = lockForUpdate;
    this.migrationLockSql = migrationLockSql;
  }

  /** The name of this dialect's migration folder ({@link Schema#folder()}). */
  public String resourceDir() {
    return resourceDir;
  }

  /**
   * Whether a failure means that a statement waited for a lock as long as it was allowed to: for
   * PostgreSQL, {@code lock_timeout} ({@code 55P03}) or a cancelled statement ({@code 57014}); for
   * SQLite, a busy database.
   */
  public boolean isLockWaitOver(java.sql.SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof java.sql.SQLException s) {
        String state = s.getSQLState();
        if (this == POSTGRESQL && ("55P03".equals(state) || "57014".equals(state))) {
          return true;
        }
        // SQLITE_BUSY is 5; its extended codes (BUSY_SNAPSHOT 517, ...) keep 5 in the low byte.
        if (this == SQLITE && (s.getErrorCode() & 0xff) == 5) {
          return true;
        }
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  /**
   * The statement that sets commit durability for the current transaction, or null if none is
   * needed (the single-connection dialects: the store decides when to commit).
   */
  public String synchronousCommitSql(Durability durability) {
    if (this != POSTGRESQL) {
      return null;
    }
    return durability == Durability.SYNC ? "SET LOCAL synchronous_commit TO on" : "SET LOCAL synchronous_commit TO off";
  }

  /**
   * What a store's transaction on a shared database runs as its first statement, or null if
   * nothing: on PostgreSQL, READ COMMITTED for this transaction ({@code SET TRANSACTION}, which lasts
   * only for the transaction and leaves the pooled connection's session as it was), followed, for a
   * write, by its {@link #synchronousCommitSql commit durability}, in one statement string (one
   * round trip).
   *
   * <p>Why READ COMMITTED, whatever the database's, role's or pool's default: the claim protocol
   * reads a row {@code FOR UPDATE} and, having waited for another instance's lock on it, must see
   * that instance's committed change (READ COMMITTED re-reads the row; REPEATABLE READ and
   * SERIALIZABLE fail with 40001 instead, a journal failure where the caller must be told the
   * operation is pending); and a migration that waited for another's advisory lock must read the
   * version table as the other left it, not through a snapshot taken before the wait (it would
   * migrate again and fail on tables that exist). The single-connection dialects need nothing: one
   * connection per store serializes every unit of work, and no other process writes its tables.
   *
   * @param durability the write's, or null for a read or a migration (the session's
   *     {@code synchronous_commit} then applies)
   */
  public String transactionStartSql(Durability durability) {
    if (this != POSTGRESQL) {
      return null;
    }
    String isolation = "SET TRANSACTION ISOLATION LEVEL READ COMMITTED";
    return durability == null ? isolation : isolation + "; " + synchronousCommitSql(durability);
  }

  /**
   * The locking clause for reading a row that is about to be claimed: PostgreSQL skips rows another
   * node is claiming right now, so two nodes never wait on each other for the same operation.
   */
  public String lockForClaim() {
    return lockForClaim; // SQLite and H2 need none: one connection, whose lock serializes every unit
  }

  /** The locking clause for a read-modify-write of one row by its holder. */
  public String lockForUpdate() {
    return lockForUpdate;
  }

  /** The clause that makes an INSERT a no-op on a duplicate key, or empty if the dialect lacks one. */
  public String insertIfAbsentSuffix() {
    return insertIfAbsentSuffix;
  }

  /** A statement that serializes concurrent migrations, or null if the database is not shared. */
  public String migrationLockSql() {
    return migrationLockSql;
  }

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
