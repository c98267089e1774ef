package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Takeover;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: Claims.claimAll also gives back the takeovers whose owed attempt it recorded before the failure.
 *
 * <p>Review of 3da3064a (Claims.claimAll's give-back). When recording a takeover's owed attempt fails,
 * the batch's fresh claims are given back, and every takeover's claim is kept IN_FLIGHT ("a
 * takeover's stays held: it owes one"). But a takeover whose owed AMBIGUOUS attempt was recorded
 * already, before the failure, owes nothing more: held under a lease under which nothing was sent,
 * the next pass takes it over again and records a second "the process that held this attempt
 * stopped" AMBIGUOUS attempt for a generation that sent no byte. The journal then says two attempts
 * may have reached the server where one may have (every attempt recorded is to be true; a phantom
 * also counts against the operation's attempts), and other instances wait out its lease for nothing.
 * Giving such a claim back (its owed attempt is in the history) keeps the record true.
 */
class BatchTakeoverOwedAttemptOnceTest {
  private static final Duration LEASE = Duration.ofMinutes(2);

  @Test
  void aTakeoverWhoseOwedAttemptWasRecordedIsNotOwedASecondOne() throws Exception {
    AtomicInteger records = new AtomicInteger();
    Journal journal = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public List<Optional<Lease>> claimAll(List<OperationRecord> asRead, String owner, Instant now,
          Duration leaseFor) throws IdempotencyException {
        return delegate().claimAll(asRead, owner, now, leaseFor);
      }

      @Override
      public void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt) throws IdempotencyException {
        if (records.incrementAndGet() == 2) {
          throw new JournalException("disk full for a moment", null);  // the second takeover's owed attempt
        }
        super.recordAttempt(id, lease, attempt);
      }
    };
    Harness h = new Harness(journal, Harness.POLICY, b -> b.resumeConcurrency(2).leaseFor(LEASE)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    Operation a = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    Operation b = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
    h.executor.enqueue(a);
    h.executor.enqueue(b);
    // A dead instance held both (it may have sent each once); its leases ran out.
    journal.claim(a.id(), "pod-gone", h.time.now(), LEASE).orElseThrow();
    journal.claim(b.id(), "pod-gone", h.time.now(), LEASE).orElseThrow();
    h.time.advance(LEASE.plusSeconds(1));

    FakeHost host = new FakeHost(h.time, FakeHost.always(201));
    Map<String, ResumeHandler> handlers = Map.of("create-order", ResumeHandler.of(host, o -> { }, e -> { }));
    assertThrows(JournalException.class, () -> h.executor.resumePending(handlers));
    assertEquals(0, host.totalAttempts(), "nothing was sent by the failed batch");
    h.executor.resumePending(handlers);  // the disk is back

    for (Operation op : List.of(a, b)) {
      OperationRecord r = journal.find(op.id()).orElseThrow();
      assertEquals(OperationState.SUCCEEDED, r.state());
      long owed = r.attempts().stream().filter(x -> Takeover.REASON.equals(x.reason())).count();
      assertEquals(1, owed, op.id() + ": pod-gone's one attempt is owed once; the failed batch sent nothing under its"
          + " own claim, yet it is recorded as another attempt that may have reached the server: " + r.attempts());
    }
  }
}
