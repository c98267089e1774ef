package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Journal;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Why: an operation due when a resume pass read its page, but claimed by another instance before
 * the pass claimed it, was counted twice in {@code ResumeSummary.examined}: once when the pass's
 * claim failed (as still PENDING), and again by the pass's closing count of operations leased
 * elsewhere, which found it IN_FLIGHT under that instance's lease. Likewise one the pass had no
 * handler for. Now each operation is examined once per pass, and counted in one place:
 * leasedElsewhere if the other owner still holds it at the pass's end (so that a waiting resume
 * waits for it), unhandled if this process has no handler for it.
 */
class ResumeHeldElsewhereCountedOnceTest {
  private static final Duration LEASE = Duration.ofMinutes(2);
  private static final String OTHER = "pod-a";

  /**
   * Resumes {@code ops} with a handler for "create-order" only; as the pass reads its first page of
   * due operations, another instance claims {@code grabbed}, between that read and the pass's claim.
   */
  private static Pass resumeWhileAnotherInstanceClaims(int lanes, Operation grabbed, List<Operation> ops)
      throws Exception {
    AtomicReference<Harness> hr = new AtomicReference<>();
    AtomicBoolean grab = new AtomicBoolean(true);
    Journal journal = new ForwardingJournal(new InMemoryJournal()) {
      @Override
      public List<OperationRecord> findDue(Instant now, String owner, OperationRecord after, int limit)
          throws IdempotencyException {
        List<OperationRecord> page = new ArrayList<>(super.findDue(now, owner, after, limit));
        if (grab.getAndSet(false)) {
          claim(grabbed.id(), OTHER, hr.get().time.now(), LEASE).orElseThrow();
        }
        return page;
      }
    };
    Harness h = new Harness(journal, Harness.POLICY, b -> b.resumeConcurrency(lanes).leaseFor(LEASE)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    hr.set(h);
    for (Operation op : ops) {
      h.executor.enqueue(op);
    }
    FakeHost host = new FakeHost(h.time, FakeHost.always(201));
    ResumeSummary summary = h.executor.resumePending(Map.of("create-order",
        ResumeHandler.of(host, o -> { }, e -> { })));
    assertEquals(OperationState.IN_FLIGHT, h.record(grabbed).state());
    assertEquals(OTHER, h.record(grabbed).owner(), "the other instance still holds it at the pass's end");
    return new Pass(summary, host);
  }

  private record Pass(ResumeSummary summary, FakeHost host) {}

  @ParameterizedTest
  @ValueSource(ints = {1, 2})
  void anOperationClaimedByAnotherOwnerAfterThePageWasReadIsExaminedOnce(int lanes) throws Exception {
    Operation grabbed = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    Operation other = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();

    Pass pass = resumeWhileAnotherInstanceClaims(lanes, grabbed, List.of(grabbed, other));

    assertEquals(0, pass.host().attempts(grabbed.key()), "left to the owner that holds it");
    assertEquals(1, pass.host().attempts(other.key()));
    // examined = succeeded + failed + uncertain + stillPending + unhandled + leasedElsewhere, each once.
    assertEquals(new ResumeSummary(2, 1, 0, 0, 0, 0, 0, 1), pass.summary());
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2})
  void anOperationWithoutAHandlerClaimedByAnotherOwnerIsExaminedOnce(int lanes) throws Exception {
    Operation grabbed = Operation.builder("ship-order", Requests.order("{\"n\":1}")).build();
    Operation other = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();

    Pass pass = resumeWhileAnotherInstanceClaims(lanes, grabbed, List.of(grabbed, other));

    assertEquals(0, pass.host().attempts(grabbed.key()));
    assertEquals(new ResumeSummary(2, 1, 0, 0, 0, 0, 1, 0), pass.summary());
  }
}
