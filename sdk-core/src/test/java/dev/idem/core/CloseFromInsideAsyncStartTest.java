package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The start of {@code executeAsync} and {@code resumeAsync} (the first claim and the first send,
 * on the caller's thread) is counted as work in progress, which close waits for, so that the
 * claim is never written after close returned. A transport that closes the executor from inside
 * that first send (as an app does when its HTTP client is shutting down) runs inside that start:
 * close waited for the start it was called from, which could only end after close returned, so
 * the caller's thread hung for close's whole grace (10 s) before close gave up and returned.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class CloseFromInsideAsyncStartTest {
  enum Call { EXECUTE_ASYNC, RESUME_ASYNC }

  @ParameterizedTest
  @EnumSource(Call.class)
  void aTransportThatClosesTheExecutorInItsFirstSendDoesNotWaitForItself(Call call) throws Exception {
    Harness h = new Harness();
    Operation op = Operation.builder("create-order", Requests.order("{}")).build();
    if (call == Call.RESUME_ASYNC) {
      h.executor.enqueue(op);
    }
    AtomicInteger sent = new AtomicInteger();
    AsyncTransport closing = (request, key) -> {
      sent.incrementAndGet();
      h.executor.close();  // from inside the first send, on the caller's thread
      return CompletableFuture.completedFuture(ScriptedTransport.response(201));
    };

    CompletableFuture<Outcome> f = Assertions.assertTimeoutPreemptively(Duration.ofSeconds(5),
        () -> call == Call.EXECUTE_ASYNC ? h.executor.executeAsync(op, closing)
            : h.executor.resumeAsync(op.id(), closing),
        "close from inside the first send waited for the call it was made from");

    assertTrue(h.executor.isClosed());
    CompletionException e = Assertions.assertThrows(CompletionException.class, f::join);
    assertInstanceOf(OperationPendingException.class, e.getCause(), "ended by close, with its key");
    assertEquals(1, sent.get());
    // The attempt was on the wire at close: the operation keeps its key, IN_FLIGHT under this
    // executor's lease until it expires, as for any asynchronous execution in progress at close.
    OperationRecord r = h.record(op);
    assertEquals(op.id().key(), r.id().key());
    assertEquals(OperationState.IN_FLIGHT, r.state());
  }
}
