package dev.idem.jdbc;

import dev.idem.core.InMemoryJournal;
import dev.idem.core.spi.Journal;

/** The contract against the reference implementation, so the contract itself is known to be right. */
class InMemoryJournalContractTest extends JournalContract {
  private final InMemoryJournal journal = new InMemoryJournal();

  @Override
  Journal journal() {
    return journal;
  }
}
