package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What is wrong: with {@code resumeConcurrency} above 1, {@code PendingResumer.Batches.claimNext}
 * decides whether a pass leads an operation with {@code handlers.containsKey(name)}, joins its single
 * flight and claims it in the journal; the lane then looks the handler up with
 * {@code handlers.get(name)}, and for a null handler counts the operation unhandled and goes on,
 * without {@code notSent(job)}. A handler map that holds the name with a null value (a
 * {@code HashMap} filled from optional configuration: "no handler for create-order in this
 * deployment") therefore leaves the operation claimed IN_FLIGHT under this owner and its flight
 * never left. The one-lane pass treats the same map as "no handler" and leaves the operation
 * PENDING, as the Javadoc of resumePending says ("Operations whose name has no handler are left as
 * they are and counted as unhandled").
 *
 * <p>Why it matters: the operation is not "left as it is" (it is IN_FLIGHT, a claim the journal
 * shows as maybe sent), and every later call for it in this process waits forever for the leaked
 * flight: the next resumePending with a real handler hangs, as does the app's execute of the same
 * Operation, until the executor is closed.
 */
class RvRcoreNullHandlerLeaksClaimTest {

  @Test
  void aNullHandlerInAConcurrentPassLeavesTheOperationAsItIs() throws Exception {
    check(2);
  }

  /** The control: one lane. Passes today. */
  @Test
  void aNullHandlerInAOneLanePassLeavesTheOperationAsItIs() throws Exception {
    check(1);
  }

  /**
   * The closing count of leases held elsewhere asked {@code containsKey} too: an operation another
   * owner holds, whose name has a null handler, was counted leased elsewhere, and a waiting resume
   * slept for a lease it has no handler to resume after.
   */
  @Test
  void aNullHandlersOperationLeasedElsewhereIsUnhandledAndNotWaitedFor() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.leaseFor(Duration.ofMinutes(2)));
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    h.executor.enqueue(op);
    assertTrue(h.journal.claim(op.id(), "pod-a", h.time.now(), Duration.ofMinutes(2)).isPresent());

    Map<String, ResumeHandler> none = new HashMap<>();
    none.put("create-order", null);
    ResumeSummary summary = h.executor.resumePending(none, Duration.ofMinutes(5));

    assertEquals(new ResumeSummary(1, 0, 0, 0, 0, 0, 1, 0), summary);
    assertEquals(List.of(), h.time.sleeperWaits(), "no wait for a lease whose operation has no handler here");
    OperationRecord r = h.record(op);
    assertEquals(OperationState.IN_FLIGHT, r.state());
    assertEquals("pod-a", r.owner(), "another owner's lease is left alone");
  }

  /**
   * A map whose handler is gone by the time the lane reads it (an app's map changed since the batch
   * was claimed, which no contract forbids): the lane treats the operation as unhandled, and its
   * batch claim is given back with its flight, as for a name without a handler.
   */
  @Test
  void aHandlerGoneBetweenTheBatchClaimAndTheLaneLeavesTheOperationAsItIs() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.resumeConcurrency(2)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    h.executor.enqueue(op);
    ResumeHandler handler = ResumeHandler.of((request, key) -> {
      throw new AssertionError("sent by a pass whose handler was gone");
    }, o -> { }, f -> { });
    AtomicInteger lookups = new AtomicInteger();
    Map<String, ResumeHandler> fading = new HashMap<>(Map.of("create-order", handler)) {
      @Override
      public ResumeHandler get(Object name) {
        return lookups.getAndIncrement() == 0 ? super.get(name) : null;  // there for the claim only
      }
    };

    ResumeSummary summary = h.executor.resumePending(fading);

    assertEquals(new ResumeSummary(1, 0, 0, 0, 0, 0, 1, 0), summary);
    assertEquals(OperationState.PENDING, h.state(op), "its claim given back");
    CompletableFuture<Outcome> call = h.executor.executeAsync(op,
        (AsyncTransport) (request, key) -> CompletableFuture.completedFuture(ScriptedTransport.response(201)));
    h.time.runUntilIdle();
    assertTrue(call.isDone(), "the app's call waits for the flight the lane never left");
    assertEquals(OperationState.SUCCEEDED, h.state(op));
  }

  private static void check(int concurrency) throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.resumeConcurrency(concurrency)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    h.executor.enqueue(op);

    Map<String, ResumeHandler> none = new HashMap<>();
    none.put("create-order", null);
    ResumeSummary first = h.executor.resumePending(none);
    assertEquals(new ResumeSummary(1, 0, 0, 0, 0, 0, 1, 0), first);
    OperationRecord left = h.record(op);
    assertEquals(OperationState.PENDING, left.state(),
        "an operation without a handler is left as it is (resumeConcurrency " + concurrency + ")");
    assertEquals(List.of(), left.attempts(), "no attempt recorded");

    AtomicInteger sends = new AtomicInteger();
    Transport fixed = (request, key) -> {
      sends.incrementAndGet();
      assertEquals(op.id().key(), key, "the operation's own key");
      return ScriptedTransport.response(201);
    };
    // The app's own call of the operation joins its flight: asynchronous, so that a flight never
    // left shows as a future not done once the virtual scheduler ran all that is due.
    CompletableFuture<Outcome> call = h.executor.executeAsync(op, (AsyncTransport) (request, key) -> {
      sends.incrementAndGet();
      assertEquals(op.id().key(), key, "the operation's own key");
      return CompletableFuture.completedFuture(ScriptedTransport.response(201));
    });
    h.time.runUntilIdle();
    assertTrue(call.isDone(), "the app's call of " + op.id() + " waits for the flight the null-handler pass never"
        + " left (resumeConcurrency " + concurrency + "); journal holds " + h.state(op));
    assertEquals(201, Harness.Driver.join(call).response().status());
    assertEquals(1, sends.get());
    assertEquals(OperationState.SUCCEEDED, h.state(op));
  }
}
