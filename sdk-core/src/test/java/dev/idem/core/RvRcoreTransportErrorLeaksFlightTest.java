package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * What is wrong: with {@code resumeConcurrency} above 1, a resume pass leads each operation's single
 * flight from the batch claim ({@code PendingResumer.Batches.claimNext}), and a lane then asks the
 * handler for its transport ({@code PendingResumer.transportOf}), which catches only
 * RuntimeException. When the app's {@code ResumeHandler.transport()} throws an Error (a
 * NoClassDefFoundError or ExceptionInInitializerError of the credentials class it loads, an
 * AssertionError: the kind of Error the Classifier's contract treats as the app's code failing, not
 * the JVM), the Error leaves {@code resumeOne} without {@code notSent(job)}: the flight ticket is
 * never left (nor the claim given back). The operation's flight stays "running" in this process
 * forever.
 *
 * <p>Why it matters: every later call for that operation in this process joins the dead flight as a
 * follower and waits for a leader that will never finish: the next {@code resumePending} (with a
 * fixed handler) hangs, and so does the app's own {@code execute} of the same Operation, until the
 * executor is closed. With {@code resumeConcurrency(1)} the same Error leaves nothing behind, and
 * the next pass sends the operation.
 */
class RvRcoreTransportErrorLeaksFlightTest {

  @Test
  void aHandlersTransportErrorInAConcurrentPassDoesNotHangTheNextPass() throws Exception {
    assertNextPassResumes(2);
  }

  /** The control: one lane, no batch claim, no leak. Passes today. */
  @Test
  void withOneLaneTheNextPassResumes() throws Exception {
    assertNextPassResumes(1);
  }

  /**
   * The lane that dies takes the pass down: the other lanes end what they run, and what the batches
   * claimed that no lane took is given back. Whatever the lanes' timing, each operation is either
   * sent once (SUCCEEDED) or PENDING and unsent, with no flight left behind.
   */
  @Test
  void aLaneThatDiesLeavesNoOtherOperationOfItsBatchClaimed() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.resumeConcurrency(2)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    List<Operation> ops = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      Operation op = Operation.builder("create-order", Requests.order("{\"n\":" + i + "}")).build();
      h.executor.enqueue(op);
      ops.add(op);
    }
    Map<OperationId, AtomicInteger> sends = new ConcurrentHashMap<>();
    AtomicInteger asked = new AtomicInteger();
    ResumeHandler brokenOnce = ResumeHandler.of(new Transport() {
      @Override
      public ResponseSnapshot send(RequestSnapshot request, IdempotencyKey key) {
        sends.computeIfAbsent(idOf(ops, key), k -> new AtomicInteger()).incrementAndGet();
        return ScriptedTransport.response(201);
      }
    }, o -> { }, f -> { });
    ResumeHandler handler = new ResumeHandler() {
      @Override
      public Transport transport() {
        if (asked.getAndIncrement() == 0) {
          throw new NoClassDefFoundError("com/example/Credentials");
        }
        return brokenOnce.transport();
      }

      @Override
      public void onSuccess(Outcome outcome) {
      }

      @Override
      public void onFailure(OperationException failure) {
      }
    };
    assertThrows(NoClassDefFoundError.class, () -> h.executor.resumePending(Map.of("create-order", handler)));

    for (Operation op : ops) {
      OperationRecord r = h.record(op);
      int sent = sends.getOrDefault(op.id(), new AtomicInteger()).get();
      if (r.state() == OperationState.SUCCEEDED) {
        assertEquals(1, sent, op.id() + " sent once");
        continue;
      }
      assertEquals(OperationState.PENDING, r.state(), op.id() + ": claimed by the pass and never given back");
      assertEquals(0, sent);
      assertEquals(List.of(), r.attempts());
      CompletableFuture<Outcome> call = h.executor.executeAsync(op, (AsyncTransport) (request, key) -> {
        sends.computeIfAbsent(op.id(), k -> new AtomicInteger()).incrementAndGet();
        return CompletableFuture.completedFuture(ScriptedTransport.response(201));
      });
      h.time.runUntilIdle();
      assertTrue(call.isDone(), "the app's call of " + op.id() + " waits for a flight the pass never left");
      assertEquals(OperationState.SUCCEEDED, h.state(op));
      assertEquals(1, sends.get(op.id()).get());
    }
  }

  private static OperationId idOf(List<Operation> ops, IdempotencyKey key) {
    return ops.stream().map(Operation::id).filter(id -> id.key().equals(key)).findFirst().orElseThrow();
  }

  private static void assertNextPassResumes(int concurrency) throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.resumeConcurrency(concurrency)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    h.executor.enqueue(op);

    ResumeHandler broken = new ResumeHandler() {
      @Override
      public Transport transport() {
        throw new NoClassDefFoundError("com/example/Credentials");
      }

      @Override
      public void onSuccess(Outcome outcome) {
      }

      @Override
      public void onFailure(OperationException failure) {
      }
    };
    // The pass ends with the Error, as with one lane: the app's handler is broken.
    assertThrows(NoClassDefFoundError.class, () -> h.executor.resumePending(Map.of("create-order", broken)));
    OperationRecord left = h.record(op);
    assertEquals(OperationState.PENDING, left.state(),
        "nothing was sent: the claim is given back (resumeConcurrency " + concurrency + ")");
    assertEquals(List.of(), left.attempts(), "no attempt recorded");

    AtomicInteger sends = new AtomicInteger();
    Transport fixed = (request, key) -> {
      sends.incrementAndGet();
      assertEquals(op.id().key(), key, "the operation's own key");
      return ScriptedTransport.response(201);
    };
    // The app's own call of the operation: it joins the operation's flight. Asynchronous, so that a
    // flight never left shows as a future not done once the virtual scheduler ran all that is due,
    // rather than as a thread stuck until close().
    CompletableFuture<Outcome> call = h.executor.executeAsync(op, (AsyncTransport) (request, key) -> {
      sends.incrementAndGet();
      assertEquals(op.id().key(), key, "the operation's own key");
      return CompletableFuture.completedFuture(ScriptedTransport.response(201));
    });
    h.time.runUntilIdle();
    assertTrue(call.isDone(), "the app's call of " + op.id() + " (resumeConcurrency " + concurrency + ") waits for"
        + " the flight that the pass whose handler threw an Error never left; sends=" + sends.get()
        + ", journal holds " + h.state(op));
    assertEquals(201, Harness.Driver.join(call).response().status());
    assertEquals(1, sends.get());
    assertEquals(OperationState.SUCCEEDED, h.state(op));

    // The next pass sends nothing: it hands the handler the outcome the journal owes it (enqueued).
    List<Outcome> told = new ArrayList<>();
    ResumeSummary next = h.executor.resumePending(Map.of("create-order", ResumeHandler.of(fixed, told::add, f -> { })));
    assertEquals(1, next.succeeded(), next.toString());
    assertEquals(1, told.size());
    assertTrue(told.get(0).fromJournal(), "handed over from the journal, not sent again");
    assertEquals(1, sends.get());
  }
}
