package dev.idem.testkit.contract;

import dev.idem.core.spi.Journal;

/**
 * The contract against a journal that keeps {@link Journal#settleIfUnchanged}'s default (a journal
 * written before that method: a re-drive, a claim and a transition): one thread sees it keep the
 * contract and leave the same record; only the single write is left to the journals that override
 * it.
 */
class DefaultSettleIfUnchangedContractTest extends JournalContract {
  private final Journal journal = DefaultsJournal.keeping(m -> m.getName().equals("settleIfUnchanged"));

  @Override
  protected Journal journal() {
    return journal;
  }
}
