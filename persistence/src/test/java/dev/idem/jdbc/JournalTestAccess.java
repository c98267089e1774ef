package dev.idem.jdbc;

/**
 * The journal's test-only settings, for tests outside this package: the test kit runs the journal
 * contract against {@link JdbcJournal} (persistence's own tests cannot depend on the test kit).
 */
public final class JournalTestAccess {
  private JournalTestAccess() {
  }

  /** A purge batch of {@code rows}, so that a test's purge spans several batches cheaply. */
  public static JdbcJournal.Builder purgeBatch(JdbcJournal.Builder builder, int rows) {
    return builder.purgeBatch(rows);
  }
}
