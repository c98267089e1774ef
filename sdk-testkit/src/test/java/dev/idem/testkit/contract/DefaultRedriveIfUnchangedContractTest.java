package dev.idem.testkit.contract;

import dev.idem.core.spi.Journal;

/**
 * The contract against a journal that keeps {@link Journal#redriveIfUnchanged}'s default (a
 * journal written before that method): one thread sees it keep the contract; only its atomicity
 * is left to the journals that override it.
 */
class DefaultRedriveIfUnchangedContractTest extends JournalContract {
  private final Journal journal = DefaultsJournal.keeping(m -> m.getName().equals("redriveIfUnchanged"));

  @Override
  protected Journal journal() {
    return journal;
  }
}
