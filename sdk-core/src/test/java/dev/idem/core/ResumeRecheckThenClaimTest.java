package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a window left by review: a one-lane {@code resumePending} re-reads an
 * operation its batch did not claim and sends it only if still due, then claimed it with a plain
 * claim, which takes any PENDING operation. Another instance that sent it and journaled it PENDING
 * until the server's {@code Retry-After} between that re-read and the claim saw it resent at once.
 * The claim is now fenced on the record re-read ({@code Journal.claimIfUnchanged}), as an outbox
 * delivery's first claim is.
 *
 * <p>Deterministic: pod B's attempt happens inside pod A's re-read.
 */
class ResumeRecheckThenClaimTest {
  private static final Duration LEASE = Duration.ofMinutes(2);

  @Test
  void aPassDoesNotSendWhatAnotherInstanceQueuedAgainBetweenItsReReadAndItsClaim() throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    AtomicReference<Harness> hr = new AtomicReference<>();
    AtomicBoolean pageRead = new AtomicBoolean();
    AtomicBoolean raced = new AtomicBoolean();
    Journal journal = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
          throws IdempotencyException {
        List<OperationRecord> page = super.findDue(now, owner, after, limit);
        pageRead.compareAndSet(false, !page.isEmpty());
        return page;
      }

      @Override
      public Optional<OperationRecord> find(OperationId id) throws IdempotencyException {
        Optional<OperationRecord> r = super.find(id);
        if (pageRead.get() && r.isPresent() && r.get().state() == OperationState.PENDING
            && raced.compareAndSet(false, true)) {
          // Pod A re-read it, unchanged and due; pod B now claims it, sends it, is answered 429
          // Retry-After: 5 and journals it PENDING until then.
          Instant t = hr.get().time.now();
          Lease l = claim(id, "pod-b", t, LEASE).orElseThrow();
          transition(id, l, Transition.retryAt(t, t.plusSeconds(5), "429 at pod-b"));
        }
        return r;
      }
    };
    Harness h = new Harness(journal, Harness.POLICY, b -> b.resumeConcurrency(1).leaseFor(LEASE)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    hr.set(h);
    h.executor.enqueue(op);
    FakeHost host = new FakeHost(h.time, FakeHost.always(201));
    List<OperationException> told = new CopyOnWriteArrayList<>();
    List<Outcome> succeeded = new CopyOnWriteArrayList<>();

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(host, succeeded::add, told::add)));

    assertTrue(raced.get(), "pod B sent between pod A's re-read and its claim");
    assertEquals(0, host.attempts(op.key()), "pod A sent it again ahead of the Retry-After pod B journaled: "
        + summary);
    assertTrue(succeeded.isEmpty());
    assertEquals(1, told.size(), "told: " + told);
    assertTrue(told.get(0) instanceof OperationPendingException, "told: " + told);
    assertEquals(OperationState.PENDING, journal.find(op.id()).orElseThrow().state());
  }
}
