package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: Claims.claimAll gives back the batch's fresh claims when recording a takeover's owed attempt fails.
 *
 * <p>Review (core3) of the batch claim path (PendingResumer.Batches.claimNext, Claims.claimAll).
 *
 * <p>Journal.claimAll's contract: "A caller that does not send a claimed operation after all gives
 * the claim back". Claims.claimAll makes the journal's batch claim, then records the AMBIGUOUS
 * attempt owed for each takeover in the batch. If that record fails (a transient journal failure),
 * Claims.claimAll throws; Batches.claimNext only leaves the flights and throws on, and the pass's
 * giveBackUnsent sees none of these jobs (they never reached {@code ready}). Every fresh claim of
 * the batch is left IN_FLIGHT under this owner, unsent: other instances wait out its lease, and the
 * next pass takes it back as a takeover and records a phantom AMBIGUOUS attempt for an operation no
 * byte of which was ever sent, so a later permanent refusal ends it UNCERTAIN instead of FAILED
 * (and its age limit too).
 */
class BatchClaimOwedAttemptFailureTest {
  private static final Duration LEASE = Duration.ofMinutes(2);

  /** Recording an attempt fails once: the owed attempt of the batch's takeover. */
  private final AtomicBoolean failOnce = new AtomicBoolean(true);
  private final Journal journal = new ForwardingJournal(new InMemoryJournal()) {
    @Override
    public List<Optional<Lease>> claimAll(List<OperationRecord> asRead, String owner, Instant now,
        Duration leaseFor) throws IdempotencyException {
      return delegate().claimAll(asRead, owner, now, leaseFor);
    }

    @Override
    public void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt) throws IdempotencyException {
      if (failOnce.getAndSet(false)) {
        throw new JournalException("disk full for a moment", null);
      }
      super.recordAttempt(id, lease, attempt);
    }
  };
  private final Harness h = new Harness(journal, Harness.POLICY, b -> b.resumeConcurrency(2).leaseFor(LEASE)
      .circuitBreaker(CircuitBreakerSettings.disabled()));
  private final Operation fresh = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();

  /** Enqueues {@link #fresh} and an orphan a dead instance held, whose lease ran out: one batch. */
  private void orphanedBesideFresh() throws Exception {
    Operation orphan = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
    h.executor.enqueue(fresh);
    h.executor.enqueue(orphan);
    journal.claim(orphan.id(), "pod-gone", h.time.now(), LEASE).orElseThrow();
    h.time.advance(LEASE.plusSeconds(1));
  }

  @Test
  void aFreshClaimOfTheBatchIsGivenBackWhenATakeoversOwedAttemptCannotBeRecorded() throws Exception {
    orphanedBesideFresh();

    FakeHost host = new FakeHost(h.time, FakeHost.always(404));
    Map<String, ResumeHandler> handlers = Map.of("create-order", ResumeHandler.of(host, o -> { }, e -> { }));
    assertThrows(JournalException.class, () -> h.executor.resumePending(handlers));
    assertEquals(0, host.attempts(fresh.key()), "nothing was sent");

    OperationRecord r = journal.find(fresh.id()).orElseThrow();
    assertEquals(OperationState.PENDING, r.state(), "claimed by the failed batch and never sent, the fresh"
        + " operation must be given back, not left " + r.state() + " under " + r.owner() + " until "
        + r.leaseExpiresAt());
  }

  /** The consequence: the next pass records a phantom ambiguous attempt, and a 404 ends it UNCERTAIN. */
  @Test
  void anOperationNeverSentIsNotEndedUncertainAfterTheFailedBatch() throws Exception {
    orphanedBesideFresh();

    FakeHost host = new FakeHost(h.time, FakeHost.always(404));
    Map<String, ResumeHandler> handlers = Map.of("create-order", ResumeHandler.of(host, o -> { }, e -> { }));
    assertThrows(JournalException.class, () -> h.executor.resumePending(handlers));
    h.executor.resumePending(handlers);  // the disk is back

    assertEquals(1, host.attempts(fresh.key()), "sent once, refused 404");
    assertEquals(OperationState.FAILED, journal.find(fresh.id()).orElseThrow().state(),
        "its only attempt was refused outright (404) and nothing else was ever sent: FAILED, not UNCERTAIN; history: "
            + journal.find(fresh.id()).orElseThrow().attempts());
  }
}
