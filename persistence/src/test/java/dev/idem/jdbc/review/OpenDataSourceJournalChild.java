package dev.idem.jdbc.review;

import dev.idem.core.JournalException;
import dev.idem.jdbc.JdbcJournal;
import org.sqlite.SQLiteDataSource;

/**
 * A child JVM that opens a journal in an app's SQLite file through a DataSource. Prints the
 * outcome and exits 0 if it got a {@link JournalException}, 1 if the open succeeded, 2 on anything
 * else.
 */
public final class OpenDataSourceJournalChild {
  private OpenDataSourceJournalChild() {
  }

  public static void main(String[] args) {
    SQLiteDataSource ds = new SQLiteDataSource();
    ds.setUrl("jdbc:sqlite:" + args[0]);
    try (JdbcJournal j = JdbcJournal.dataSource(ds).open()) {
      System.out.println("OPENED " + j);
      System.exit(1);
    } catch (JournalException e) {
      System.out.println("JOURNAL_EXCEPTION " + e.getMessage());
      System.exit(0);
    } catch (Throwable t) {
      System.out.println("OTHER " + t);
      System.exit(2);
    }
  }
}
