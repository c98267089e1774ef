package dev.idem.jdbc;

import java.nio.file.Path;

/**
 * Opens the embedded journal in {@code args[0]}, prints {@code HOLDING}, and holds it until it is
 * terminated; its shutdown hook closes the journal then. Main never closes it itself, so that no
 * close of its own races the hook's.
 */
public final class HoldJournalChild {
  private HoldJournalChild() {
  }

  public static void main(String[] args) throws Exception {
    JdbcJournal.openEmbedded(Path.of(args[0]));
    System.out.println("HOLDING");
    System.out.flush();
    Thread.currentThread().join();
  }
}
