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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Regression test for a defect found by review, described as it was; fixed: the handler is told OperationPendingException for an operation left as not due.
 *
 * <p>Review (core2) of 4ffc716d: PendingResumer.resumeOne's new "still due?" check, for an operation
 * its batch did not claim (every operation with one lane), leaves an operation that another
 * instance took between the page read and the claim with {@code leftPending(id)} only: it is
 * counted in {@code ResumeSummary.stillPending}, but its {@link ResumeHandler#onFailure} is never
 * called. ResumeHandler's contract: onFailure is "called when a resumed operation ... is still
 * PENDING (for example owned by another process)", and IdempotentExecutor.resumePending: an
 * operation left PENDING "is counted in stillPending(); its handler gets an
 * OperationPendingException". Before the commit the lane's own claim failed and the handler was told
 * (an OperationPendingException), for one lane and for several.
 *
 * <p>Here another instance sends the operation between this pass's page read and its claim, gets a
 * 503, and journals it PENDING due in 5 s. This pass rightly does not send it again, counts it
 * stillPending, and tells the handler nothing: an app that tracks its queued operations through
 * the handler (or logs/alerts "still pending" from onFailure) never hears of it.
 */
class ResumeNotDueHandlerToldTest {
  private static final Duration LEASE = Duration.ofMinutes(2);

  @ParameterizedTest
  @ValueSource(ints = {1, 2})
  void anOperationAnotherInstanceQueuedAgainAfterThePageReadIsToldToTheHandlerAsPending(int lanes) throws Exception {
    run(lanes, true);
  }

  /**
   * The same with pod B still sending (IN_FLIGHT under its live lease): before 4ffc716d the lane's
   * claim failed and onFailure got "IN_FLIGHT under owner pod-b ..."; now nothing at all.
   */
  @ParameterizedTest
  @ValueSource(ints = {1, 2})
  void anOperationAnotherInstanceClaimedAfterThePageReadIsToldToTheHandlerAsPending(int lanes) throws Exception {
    run(lanes, false);
  }

  private void run(int lanes, boolean podBAnswered) throws Exception {
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
          if (podBAnswered) {
            transition(op.id(), l, Transition.retryAt(t, t.plusSeconds(5), "503 at pod-b"));
          }
        }
        return page;
      }

      @Override
      public List<Optional<Lease>> claimAll(List<OperationRecord> asRead, String owner, Instant now,
          Duration leaseFor) throws IdempotencyException {
        return delegate().claimAll(asRead, owner, now, leaseFor); // the in-memory journal's fenced batch claim
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
    assertEquals(1, summary.stillPending() + summary.leasedElsewhere(), "counted as left: " + summary);
    assertTrue(succeeded.isEmpty());
    assertEquals(1, told.size(), "the pass counted the operation as left (" + summary + "), yet the"
        + " handler's onFailure was never called with an OperationPendingException; told: " + told);
    assertTrue(told.get(0) instanceof OperationPendingException, "told: " + told);
  }
}
