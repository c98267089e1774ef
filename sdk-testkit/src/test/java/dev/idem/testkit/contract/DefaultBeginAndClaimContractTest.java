package dev.idem.testkit.contract;

import dev.idem.core.spi.Journal;
import java.util.Set;

/**
 * The contract against a journal that keeps the defaults of {@link Journal#beginAndClaim} (a begin,
 * then a claim) and {@link Journal#recordOutcomesDelivered} (one recordOutcomeDelivered each), as a
 * journal written before those methods does: the defaults keep the contract that the journals
 * which override them are held to.
 */
class DefaultBeginAndClaimContractTest extends JournalContract {
  private static final Set<String> DEFAULTS = Set.of("beginAndClaim", "recordOutcomesDelivered");

  private final Journal journal = DefaultsJournal.keeping(m -> DEFAULTS.contains(m.getName()));

  @Override
  protected Journal journal() {
    return journal;
  }
}
