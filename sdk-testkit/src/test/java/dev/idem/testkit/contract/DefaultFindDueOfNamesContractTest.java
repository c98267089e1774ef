package dev.idem.testkit.contract;

import dev.idem.core.spi.Journal;

/**
 * The contract against a journal that keeps the default of {@link Journal#findDue(java.time.Instant,
 * String, java.util.Set, dev.idem.core.OperationRecord, int)} (a journal written before that method,
 * which reads every name's due operations and keeps those of the names asked for).
 */
class DefaultFindDueOfNamesContractTest extends JournalContract {
  private final Journal journal =
      DefaultsJournal.keeping(m -> m.getName().equals("findDue") && m.getParameterCount() == 5);

  @Override
  protected Journal journal() {
    return journal;
  }
}
