package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.DelayFunction;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.RetryPolicy;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/**
 * The DelayFunction Javadoc's own example parses a rate-limit header with Long.parseLong. A server
 * that sends "1.5" makes it throw NumberFormatException, an IllegalArgumentException, which the
 * dispatcher takes for "the operation vanished from the journal": a terminal ending. The handle
 * fails, the outcome is recorded as delivered, while the journal still holds the operation (IN_FLIGHT,
 * its answered attempt unrecorded) and delivers it later.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class ThrowingDelayFunctionInOutboxTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  /** Verbatim from DelayFunction.WithResponse's Javadoc. */
  private static final DelayFunction FROM_DOC = (DelayFunction.WithResponse) (retry, previous, random, response) ->
      response.flatMap(r -> r.header("X-RateLimit-Reset-After")).map(s -> Duration.ofSeconds(Long.parseLong(s)))
          .orElse(Duration.ofMillis(200L << Math.min(retry, 10)));

  @Test
  void theHandleNeverReportsAnEndingTheJournalDoesNotHold() throws Exception {
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
        .retryPolicy(RetryPolicy.builder().delayFunction(FROM_DOC).build()).build();
    FakeHost host = new FakeHost(time, (k, n, now) -> n == 1
        ? Reply.status(429, Map.of("X-RateLimit-Reset-After", "1.5")) : Reply.status(201));
    OutboxDispatcher outbox = OutboxDispatcher.builder(executor).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", host).build().start();
    Operation op = Operation.builder("create-order", Requests.order("{}")).build();

    CompletableFuture<Outcome> handle = outbox.submit(op);
    time.advance(Duration.ZERO);

    OperationState inJournal = journal.find(op.id()).orElseThrow().state();
    if (handle.isCompletedExceptionally()) {
      Throwable told = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, handle::get).getCause();
      assertTrue(inJournal.isTerminal(), "handle failed with " + told + " while the journal holds the operation "
          + inJournal);
    }
    time.advance(Duration.ofMinutes(5));
    assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
    assertTrue(handle.isDone() && !handle.isCompletedExceptionally(), "the journal says SUCCEEDED; handle: " + handle);
    outbox.close();
  }
}
