package dev.idem.storage;

import dev.idem.core.JournalException;
import java.sql.SQLException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns JDBC failures into {@link JournalException}s whose messages say what could not be done and
 * the likely cause, without quoting SQL values (which could hold request data). The driver's
 * exception stays attached as the cause.
 */
public final class StoreErrors {
  /** SQLite result codes (the primary code is the low byte of the extended one). */
  static final int SQLITE_BUSY = 5;
  static final int SQLITE_READONLY = 8;
  static final int SQLITE_IOERR = 10;
  static final int SQLITE_CORRUPT = 11;
  static final int SQLITE_FULL = 13;
  static final int SQLITE_CANTOPEN = 14;
  static final int SQLITE_CONSTRAINT = 19;
  static final int SQLITE_NOTADB = 26;
  /** H2: "Database may be already in use" (another process holds the file lock). */
  static final int H2_DATABASE_ALREADY_OPEN = 90020;
  /** H2: "The database is read only". */
  static final int H2_DATABASE_IS_READ_ONLY = 90097;
  /** H2: "File corrupted". */
  static final int H2_FILE_CORRUPTED = 90030;
  /** H2: "IO Exception". */
  static final int H2_IO_EXCEPTION = 90028;
  /** H2: "Error while creating file". */
  static final int H2_FILE_CREATION_FAILED = 90062;
  /** H2: "Database is already closed". */
  static final int H2_DATABASE_CALLED_AT_SHUTDOWN = 90121;

  /** SQL standard (PostgreSQL, H2): "insufficient privilege", a privilege of the database role missing. */
  static final String INSUFFICIENT_PRIVILEGE = "42501";
  /**
   * PostgreSQL's {@code query_canceled}: one statement cancelled ({@code statement_timeout}, or a
   * cancel request), not the server shutting down.
   */
  static final String QUERY_CANCELED = "57014";
  private static final Pattern PERMISSION_DENIED = Pattern.compile(
      "permission denied for (schema|table|relation|sequence|function|database) \"?([\\w.$]+)\"?");
  /**
   * PostgreSQL's "must be owner of table idem_operation": DDL on an object (ALTER TABLE, CREATE
   * INDEX on it), which no grant allows, only ownership.
   */
  private static final Pattern MUST_BE_OWNER = Pattern.compile(
      "must be owner of (?:(table|relation|index|schema|sequence|view|database|function|type) )?\"?([\\w.$]+)\"?");

  private StoreErrors() {
  }

  /**
   * @param store the store in messages ({@link Schema#what()}: "journal", "idempotency store", "webhook
   *     inbox")
   * @param doing what it was doing, such as "statement on /var/lib/app/journal"
   * @param e the driver's exception
   */
  public static JournalException wrap(String store, String doing, SQLException e) {
    return new JournalException(store + " " + doing + " failed: " + diagnose(store, e) + codes(e), e);
  }

  /**
   * For a commit that failed: whether it took effect is unknown ({@link CommitUnconfirmedException}),
   * and the message says so.
   *
   * @param doing what it was doing, such as "commit on /var/lib/app/journal"
   * @param e the driver's exception, from {@code commit()} or a disk sync after it
   */
  public static CommitUnconfirmedException wrapCommit(String store, String doing, Exception e) {
    String why = e instanceof SQLException s ? diagnose(store, s) + codes(s) : e.toString();
    return new CommitUnconfirmedException(store + " " + doing + " failed: " + why + "; the database may or may"
        + " not have committed the write", e);
  }

  /**
   * For a failure to open the {@code store}'s database file {@code db}: a corrupt or foreign file
   * is named and explained; anything else is worded as {@link #wrap} does.
   */
  public static JournalException wrapOpen(String store, java.nio.file.Path db, SQLException e) {
    if (isCorrupt(e)) {
      return corrupt(store, db, diagnose(store, e), e);
    }
    return wrap(store, "open of " + db, e);
  }

  /** For a {@code store}'s database file that is damaged or not a database. */
  public static JournalException corrupt(String store, java.nio.file.Path db, String what, Throwable cause) {
    if (!store.equals("journal")) {
      return new JournalException("the " + store + " database " + db + " is corrupt (" + what + "). Stop the app,"
          + " move the database file and the files beside it named after it aside (keep them: the rows may be"
          + " recoverable with the sqlite3 tool's .recover command), and restore them from a backup if you have"
          + " one", cause);
    }
    return new JournalException("the journal database " + db + " is corrupt (" + what + "). Nothing was sent from"
        + " it. Stop the app, move the journal directory aside (keep it: the operations in it may be recoverable"
        + " with the sqlite3 tool's .recover command), restore the directory from a backup if you have one, and"
        + " reconcile the operations that were pending with the server", cause);
  }

  private static String codes(SQLException e) {
    return " [SQLState " + e.getSQLState() + ", vendor code " + e.getErrorCode() + "]";
  }

  /** True if the driver says the file is damaged or is not a database. */
  static boolean isCorrupt(SQLException e) {
    int primary = e.getErrorCode() & 0xff;
    String text = chainText(e);
    return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB || e.getErrorCode() == H2_FILE_CORRUPTED
        || text.contains("database disk image is malformed") || text.contains("file is not a database");
  }

  /** For the write whose failure just left the store unusable: its own cause, and what follows. */
  static JournalException wrapUnusable(String store, String name, SQLException e) {
    return new JournalException(store + " " + name + " failed: " + diagnose(store, e) + "; the failed write took the"
        + " open transaction with it, so the " + store + " is unusable until it is reopened" + codes(e), e);
  }

  /**
   * For a call on a store that an earlier failed write left unusable: callers that were waiting
   * cannot know whether their record reached the disk, so nothing goes on until a reopen.
   */
  static JournalException unusable(String store, String name, Throwable earlier) {
    return new JournalException(store + " " + name + " is unusable after a failed write; reopen it (earlier failure: "
        + (earlier instanceof SQLException s ? diagnose(store, s) : earlier.getClass().getSimpleName()) + ")", earlier);
  }

  /**
   * Returns if a store may be used; otherwise throws "is closed" (a closed store, with how, when that
   * is news to the caller: its JVM shutdown hook) or {@link #unusable} (one that an earlier failure
   * broke, {@code broken} non-null).
   *
   * @param closedHow null while open; otherwise how it was closed ({@link Store#CLOSED}, or a reason)
   */
  static void checkUsable(String store, String name, String closedHow, Throwable broken) throws JournalException {
    if (closedHow != null) {
      throw new JournalException(store + " " + name + " is closed" + (closedHow.isEmpty() ? "" : " " + closedHow), null);
    }
    if (broken != null) {
      throw unusable(store, name, broken);
    }
  }

  /** A short cause, in words, naming the {@code store}'s files. */
  static String diagnose(String store, SQLException e) {
    String state = e.getSQLState() == null ? "" : e.getSQLState();
    String text = chainText(e);
    int sqlite = e.getErrorCode() & 0xff;
    if (text.contains("sqlite")) {
      if (sqlite == SQLITE_FULL || text.contains("database or disk is full")) {
        return "the disk is full (or the database reached its size limit)";
      }
      if (isCorrupt(e)) {
        return "the " + store + " file is corrupt";
      }
      if (sqlite == SQLITE_READONLY) {
        return "the " + store + " is read-only";
      }
      if (sqlite == SQLITE_BUSY) {
        return "the " + store + " file is locked by another connection or process";
      }
      if (sqlite == SQLITE_CANTOPEN) {
        return "the " + store + " file cannot be opened (missing directory, or permission denied)";
      }
      if (sqlite == SQLITE_IOERR) {
        return "an I/O error on the " + store + " files";
      }
      if (sqlite == SQLITE_CONSTRAINT && text.contains("_length")) {
        return TooLongValue.describe(store, TooLongValue.lengthConstraintColumn(text));
      }
    }
    if (e.getErrorCode() == H2_DATABASE_ALREADY_OPEN || text.contains("already in use")
        || text.contains("file is locked")) {
      return "the " + store + " file is locked by another process (a " + store + " in a file database belongs to"
          + " one process; use PostgreSQL to share it between processes)";
    }
    if (e.getErrorCode() == H2_DATABASE_IS_READ_ONLY || state.equals("25006") || text.contains("read only")
        || text.contains("read-only")) {
      return "the " + store + " is read-only";
    }
    if (state.equals("53100") || text.contains("no space left") || text.contains("disk full")) {
      return "the disk is full";
    }
    if (e.getErrorCode() == H2_FILE_CORRUPTED) {
      return "the " + store + " file is corrupted";
    }
    if (state.equals(INSUFFICIENT_PRIVILEGE)) {
      return missingPrivilege(store, e.getMessage());
    }
    if (text.contains("permission denied") || text.contains("access denied") || text.contains("accessdenied")
        || text.contains("operation not permitted")) {
      return "permission denied on the " + store + " files";
    }
    if (e.getErrorCode() == H2_IO_EXCEPTION || e.getErrorCode() == H2_FILE_CREATION_FAILED) {
      return "an I/O error on the " + store + " files";
    }
    if (e.getErrorCode() == H2_DATABASE_CALLED_AT_SHUTDOWN || text.contains("database is closed")
        || text.contains("database is already closed")) {
      return "the database is closed";
    }
    if (state.equals("22001")) {
      return TooLongValue.describe(store, TooLongValue.columnOf(e.getMessage()), e.getMessage());
    }
    if (state.startsWith("08")) {
      return "the database connection failed";
    }
    if (state.equals(QUERY_CANCELED)) {
      // Not a shutdown (57P01-57P03): the server cancelled this one statement and goes on.
      return text.contains("statement timeout")
          ? "the statement was cancelled by the connection's statement_timeout (set on the database role, the"
              + " database or the pool's connections), which is shorter than the statement took"
          : "the statement was cancelled (by statement_timeout, or a cancel request from the app or an"
              + " administrator)";
    }
    if (state.startsWith("57")) {
      return "the database is shutting down or refused the operation";
    }
    return "a database error";
  }

  /**
   * A database role's missing privilege (SQLState 42501), named from PostgreSQL's "permission
   * denied for schema public" or "... for table idem_operation" where the message says it: not the
   * store's files, which a database server's store does not have. "must be owner of table ..." (a
   * migration's DDL run by a role that has every grant but does not own the table) says that the
   * migration needs the owner.
   */
  static String missingPrivilege(String store, String message) {
    Matcher owner = MUST_BE_OWNER.matcher(message == null ? "" : message);
    if (owner.find()) {
      String object = (owner.group(1) == null ? "" : owner.group(1) + " ") + owner.group(2);
      return "the database role lacks a privilege on " + object + " that no GRANT gives: only its owner (or a"
          + " member of the owning role) may change it, and creating or migrating the " + store + "'s schema"
          + " (a new index or column after an Idem upgrade) changes it. Run that open as the role that owns the"
          + " " + store + "'s tables (the one that created them), then let the instances open it with their"
          + " least privileges; see docs/fleet.md, \"Database privileges\"";
    }
    Matcher m = PERMISSION_DENIED.matcher(message == null ? "" : message);
    if (m.find() && m.group(1).equalsIgnoreCase("schema")) {
      return "the database role lacks a privilege on schema " + m.group(2) + " (USAGE, to use the " + store
          + "'s tables; CREATE, to create or migrate them, which an open needs only while the " + store + "'s"
          + " schema is new or older than this Idem version: open it once as a role that may create tables,"
          + " such as the schema's owner; see docs/fleet.md, \"Database privileges\")";
    }
    if (m.find(0)) {
      return "the database role lacks a privilege on " + m.group(1) + " " + m.group(2) + " (the " + store
          + " needs SELECT, INSERT, UPDATE and DELETE on its tables; see docs/fleet.md, \"Database privileges\")";
    }
    return "the database role lacks a privilege the " + store + " needs (USAGE on the schema, and SELECT, INSERT,"
        + " UPDATE and DELETE on its tables; see docs/fleet.md, \"Database privileges\")";
  }

  private static String chainText(Throwable t) {
    StringBuilder sb = new StringBuilder();
    for (Throwable c = t; c != null && sb.length() < 10_000; c = c.getCause()) {
      sb.append(c.getClass().getSimpleName()).append(':').append(c.getMessage()).append('\n');
      if (c.getCause() == c) {
        break;
      }
    }
    return sb.toString().toLowerCase(Locale.ROOT);
  }
}
