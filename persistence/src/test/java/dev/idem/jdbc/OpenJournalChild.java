package dev.idem.jdbc;

import dev.idem.core.JournalException;
import java.nio.file.Path;

/**
 * A child JVM that tries to open an embedded journal another process holds. Prints the outcome and exits
 * 0 if it got a {@link JournalException}, 1 if the open succeeded, 2 on anything else.
 */
public final class OpenJournalChild {
  private OpenJournalChild() {
  }

  public static void main(String[] args) {
    try (JdbcJournal j = JdbcJournal.openEmbedded(Path.of(args[0]))) {
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
