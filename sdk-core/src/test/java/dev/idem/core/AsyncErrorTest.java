package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.response;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 15: an Error thrown while the async driver runs on the scheduler's thread (here: the
 * transport throws it when the retry after a 503 is sent) escaped into the scheduler, where an
 * executor swallows it, and the call's future never completed. Now the call fails with the Error.
 */
class AsyncErrorTest {
  static final class InjectedError extends Error {
    InjectedError() {
      super("injected");
    }
  }

  @Test
  void anErrorOnTheSchedulersThreadFailsTheCallInsteadOfLeavingItHanging() {
    Harness h = new Harness();
    InjectedError error = new InjectedError();
    AtomicInteger calls = new AtomicInteger();
    AsyncTransport transport = (request, key) -> {
      if (calls.incrementAndGet() == 1) {
        return CompletableFuture.completedFuture(response(503));
      }
      throw error;
    };
    Operation op = Operation.builder("create-order", Requests.order("{\"amount\":1}")).build();
    CompletableFuture<Outcome> call = h.executor.executeAsync(op, transport);

    h.time.runUntilIdle();  // the retry runs on the scheduler; before, the Error came out here

    assertTrue(call.isDone(), "the call completed");
    ExecutionException e = assertThrows(ExecutionException.class, call::get);
    assertSame(error, e.getCause());
    assertTrue(calls.get() == 2);
  }
}
