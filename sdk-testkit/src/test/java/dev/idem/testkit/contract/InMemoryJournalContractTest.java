package dev.idem.testkit.contract;

import dev.idem.core.InMemoryJournal;
import dev.idem.core.spi.Journal;

/** The contract against the reference implementation, so the contract itself is known to be right. */
class InMemoryJournalContractTest extends JournalContract {
  private final InMemoryJournal journal = new InMemoryJournal();

  @Override
  protected Journal journal() {
    return journal;
  }
}
