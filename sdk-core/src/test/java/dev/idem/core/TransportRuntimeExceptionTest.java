package dev.idem.core;

import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.RequestNotSentException;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import static dev.idem.core.support.ScriptedTransport.response;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Issue 15: a RuntimeException from a transport was reported as "interrupted or cancelled" and left
 * the operation PENDING. It is a failed attempt: ambiguous (retried with the same key, UNCERTAIN on
 * exhaustion) unless the transport says nothing was sent, and the message names the exception.
 */
class TransportRuntimeExceptionTest {
  /** Throws {@code failures} times, then answers 201; records the key of every call. */
  private static final class Throwing implements Transport, AsyncTransport {
    final List<IdempotencyKey> keys = new ArrayList<>();
    final RuntimeException failure;
    int failures;

    Throwing(int failures, RuntimeException failure) {
      this.failures = failures;
      this.failure = failure;
    }

    @Override
    public ResponseSnapshot send(RequestSnapshot request, IdempotencyKey key) {
      keys.add(key);
      if (failures-- > 0) {
        throw failure;
      }
      return response(201);
    }

    @Override
    public CompletableFuture<ResponseSnapshot> sendAsync(RequestSnapshot request, IdempotencyKey key) {
      return CompletableFuture.completedFuture(send(request, key));
    }
  }

  private static Operation op() {
    return Operation.builder("create-order", Requests.order("{\"amount\":1}")).build();
  }

  @Test
  void aRuntimeExceptionIsAnAmbiguousAttemptThatIsRetriedWithTheSameKey() throws Exception {
    Harness h = new Harness();
    Operation op = op();
    Throwing t = new Throwing(1, new NumberFormatException("For input string: \"99999999999999999999\""));
    Outcome out = h.executor.execute(op, t);
    assertEquals(201, out.response().status());
    assertEquals(List.of(op.key(), op.key()), t.keys);
    AttemptRecord first = h.record(op).attempts().get(0);
    assertEquals(Classification.AMBIGUOUS, first.classification());
    assertEquals(NumberFormatException.class.getName(), first.exceptionClass());
    assertTrue(first.reason().contains("java.lang.NumberFormatException"), first.reason());
    assertTrue(!first.reason().contains("99999"), "the journaled reason must not quote the exception's message");
  }

  @Test
  void exhaustionEndsUncertainWithAMessageThatNamesTheException() throws Exception {
    Harness h = new Harness();
    Operation op = op();
    Throwing t = new Throwing(Integer.MAX_VALUE, new IllegalStateException("bug in an interceptor"));
    OperationUncertainException e = assertThrows(OperationUncertainException.class, () -> h.executor.execute(op, t));
    assertTrue(e.getMessage().contains("java.lang.IllegalStateException"), e.getMessage());
    assertTrue(!e.getMessage().contains("interrupted or cancelled"), e.getMessage());
    assertEquals(OperationState.UNCERTAIN, h.state(op));
    assertEquals(Harness.POLICY.maxAttempts(), t.keys.size());
    assertTrue(t.keys.stream().allMatch(op.key()::equals));
  }

  @Test
  void aTransportThatKnowsItSentNothingMakesTheOperationFailedNotUncertain() throws Exception {
    Harness h = new Harness();
    Operation op = op();
    Transport t = (request, key) -> {
      throw new RequestNotSentException("refused before writing", new IllegalStateException("no connection"));
    };
    assertThrows(OperationFailedException.class, () -> h.executor.execute(op, t));
    assertEquals(OperationState.FAILED, h.state(op));
  }

  @Test
  void theAsyncPathDoesTheSame() throws Exception {
    Harness h = new Harness();
    Operation op = op();
    Throwing t = new Throwing(1, new IllegalStateException("bug"));
    CompletableFuture<Outcome> f = h.executor.executeAsync(op, t);
    h.time.runUntilIdle();
    assertEquals(201, Harness.Driver.join(f).response().status());
    assertEquals(List.of(op.key(), op.key()), t.keys);
  }

  @Test
  void aTransportWhoseFutureFailsWithARuntimeExceptionToo() throws Exception {
    Harness h = new Harness();
    Operation op = op();
    List<IdempotencyKey> keys = new ArrayList<>();
    AsyncTransport t = (request, key) -> {
      keys.add(key);
      return keys.size() == 1 ? CompletableFuture.failedFuture(new IllegalArgumentException("bad"))
          : CompletableFuture.completedFuture(response(201));
    };
    CompletableFuture<Outcome> f = h.executor.executeAsync(op, t);
    h.time.runUntilIdle();
    assertEquals(201, Harness.Driver.join(f).response().status());
    assertEquals(2, keys.size());
  }
}
