package dev.idem.testkit.contract;

import dev.idem.core.spi.Journal;

/**
 * The contract against a journal that keeps the default of {@link Journal#findByState(
 * dev.idem.core.OperationState, java.util.Set, dev.idem.core.OperationId, int)} (a journal written
 * before that method, which reads every name's operations in the state and keeps those of the
 * names asked for).
 */
class DefaultFindByStateOfNamesContractTest extends JournalContract {
  private final Journal journal =
      DefaultsJournal.keeping(m -> m.getName().equals("findByState") && m.getParameterCount() == 4);

  @Override
  protected Journal journal() {
    return journal;
  }
}
