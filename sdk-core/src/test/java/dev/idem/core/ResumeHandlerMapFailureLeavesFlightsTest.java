package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A concurrent resume pass looks each operation of a batch up in the app's map of resume handlers
 * and joins the flight of those it will lead before claiming them ({@code Batches.claimNext}). An
 * app's map whose {@code get} throws for one name (a map backed by configuration that fails on a
 * bad entry, say) ends the pass, as it does with one lane; it must not leave the flights already
 * joined for the batch's earlier operations taken, or every later call of those operations in this
 * process waits for a flight no one leads, until close().
 */
class ResumeHandlerMapFailureLeavesFlightsTest {

  @Test
  void aHandlerMapThatThrowsMidBatchLeavesTheFlightsItJoined() throws Exception {
    Harness h = new Harness(Harness.POLICY, b -> b.resumeConcurrency(2)
        .circuitBreaker(CircuitBreakerSettings.disabled()));
    Operation first = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    Operation broken = Operation.builder("refund-order", Requests.order("{\"n\":2}")).build();
    h.executor.enqueue(first);
    h.time.jump(Duration.ofMillis(1));  // due after the first: the batch looks it up second
    h.executor.enqueue(broken);

    IllegalStateException mapFailure = new IllegalStateException("handler configuration for refund-order is broken");
    AtomicInteger sends = new AtomicInteger();
    ResumeHandler handler = ResumeHandler.of((request, key) -> {
      sends.incrementAndGet();
      return ScriptedTransport.response(201);
    }, o -> { }, f -> { });
    HashMap<String, ResumeHandler> handlers = new HashMap<>() {
      @Override
      public ResumeHandler get(Object name) {
        if ("refund-order".equals(name)) {
          throw mapFailure;
        }
        return super.get(name);
      }
    };
    handlers.put("create-order", handler);
    handlers.put("refund-order", handler);

    assertSame(mapFailure, assertThrows(IllegalStateException.class, () -> h.executor.resumePending(handlers)));
    assertEquals(0, sends.get(), "nothing was sent");
    for (Operation op : List.of(first, broken)) {
      OperationRecord r = h.record(op);
      assertEquals(OperationState.PENDING, r.state(), op.id() + " is left as it was: " + r);
      assertEquals(List.of(), r.attempts());
    }

    CompletableFuture<Outcome> call = h.executor.executeAsync(first, (AsyncTransport) (request, key) -> {
      sends.incrementAndGet();
      assertEquals(first.id().key(), key, "the operation's own key");
      return CompletableFuture.completedFuture(ScriptedTransport.response(201));
    });
    h.time.runUntilIdle();
    assertTrue(call.isDone(), "the app's call of " + first.id() + " waits for the flight the pass joined for its"
        + " batch and never left; the journal holds " + h.state(first));
    assertEquals(201, Harness.Driver.join(call).response().status());
    assertEquals(1, sends.get(), "sent once, by the app's call");
    assertEquals(OperationState.SUCCEEDED, h.state(first));
  }
}
