package dev.idem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TimedJournalTest {
  /**
   * The PostgreSQL journal's claimWaiting waits briefly for a row another process holds; a timing
   * wrapper that ran ForwardingJournal's default (a plain claim) would measure a journal that never
   * waits.
   */
  @Test
  void theAppsClaimOfANamedOperationReachesTheDelegatesOwnClaimWaitingAndIsTimedAsAClaim() throws Exception {
    AtomicInteger waiting = new AtomicInteger();
    AtomicInteger plain = new AtomicInteger();
    ForwardingJournal delegate = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public Optional<Lease> claimWaiting(OperationId id, String owner, Instant now, Duration leaseFor) {
        waiting.incrementAndGet();
        return Optional.empty();
      }

      @Override
      public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor) {
        plain.incrementAndGet();
        return Optional.empty();
      }
    };
    TimedJournal timed = new TimedJournal(delegate);

    timed.claimWaiting(new OperationId("default", "create-order", IdempotencyKey.generate()), "pod-0",
        Instant.EPOCH, Duration.ofSeconds(30));

    assertEquals(1, waiting.get(), "claimWaiting reached the delegate's claimWaiting");
    assertEquals(0, plain.get(), "and not its plain claim");
    assertEquals(1, timed.claim.calls.sum(), "timed as a claim");
  }
}
