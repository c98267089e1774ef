package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Regression test for a defect found by review, described as it was; fixed: the SPI's default claimIfUnchanged reads the operation and claims it only if still as read.
 *
 * <p>Review (core3) of 4ffc716d/dd638d67: "fleets respect another instance's backoff" holds for a
 * multi-lane resume only if the journal's claimAll is fenced on the state and generation read. The
 * Journal SPI makes that fence optional ("A journal may claim an operation only if it is still as
 * read"), and its own default claimAll (what an app's own Journal, or any ForwardingJournal subclass,
 * gets) claims each operation with claim(), which takes any PENDING one. PendingResumer only re-checks
 * dueness for an operation its batch did not claim, so with such a journal a pass with two lanes sends
 * at once an operation another instance answered 503 and queued 5 s later, while the same pass with
 * one lane leaves it: one lane and two lanes disagree, and the other instance's backoff (or the
 * server's Retry-After) is ignored.
 *
 * <p>Here the journal is an InMemoryJournal behind a ForwardingJournal that does not forward
 * claimAll, i.e. a journal using the SPI's default claimAll.
 */
class ResumeDefaultClaimAllFenceTest {
  private static final Duration LEASE = Duration.ofMinutes(2);

  @ParameterizedTest
  @ValueSource(ints = {1, 2})
  void anOperationAnotherInstanceQueuedAfterThePageReadIsNotSentAheadOfItsBackoff(int lanes) throws Exception {
    run(lanes);
  }

  private void run(int lanes) throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    AtomicReference<Harness> hr = new AtomicReference<>();
    AtomicBoolean race = new AtomicBoolean(true);
    Journal journal = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
          throws IdempotencyException {
        List<OperationRecord> page = new ArrayList<>(super.findDue(now, owner, after, limit));
        if (!page.isEmpty() && race.getAndSet(false)) {
          // Another instance claims it, sends it, gets 503 and journals it PENDING, due in 5 s.
          Instant t = hr.get().time.now();
          Lease l = claim(op.id(), "pod-b", t, LEASE).orElseThrow();
          transition(op.id(), l, Transition.retryAt(t, t.plusSeconds(5), "503 at pod-b"));
        }
        return page;
      }
    };
    Harness h = new Harness(journal, Harness.POLICY, b -> b.resumeConcurrency(lanes).leaseFor(LEASE)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    hr.set(h);
    h.executor.enqueue(op);
    FakeHost host = new FakeHost(h.time, FakeHost.always(201));
    List<OperationException> told = new CopyOnWriteArrayList<>();
    List<Outcome> succeeded = new CopyOnWriteArrayList<>();

    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(host, succeeded::add, told::add)));

    assertEquals(0, host.attempts(op.key()), "not sent ahead of the backoff pod-b journaled");
    assertEquals(1, summary.stillPending(), "left for the pass that finds it due: " + summary);
  }
}
