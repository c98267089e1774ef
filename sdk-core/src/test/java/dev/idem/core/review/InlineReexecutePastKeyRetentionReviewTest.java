package dev.idem.core.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Jitter;
import dev.idem.core.Operation;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * DESIGN guarantee 6: "An operation still pending past the server's key retention is not re-sent
 * blindly." Queued delivery honours it (maxPendingAge). But an inline {@code execute} of an
 * Operation whose journal record is days old (the app's own key for a business reference, in a batch
 * job that reruns, or "executing the same Operation again", which the OperationPendingException message
 * itself recommends) takes no account of the record's age: AttemptLoop sets {@code ageLimit} only
 * for queued delivery, and the executor's execute path never calls KeyRetention.expireIfDue. The
 * operation below had an ambiguous attempt (read timeout: the server may have charged), was left
 * PENDING, and 48 hours later (the server's 24 h key retention long gone) execute sends it again
 * with the forgotten key: a second charge.
 */
class InlineReexecutePastKeyRetentionReviewTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  /** Denies the first retry (leaving the operation PENDING, as an empty budget does), then allows. */
  private final AtomicBoolean denyNext = new AtomicBoolean(true);

  private IdempotentExecutor executor() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .retryPolicy(RetryPolicy.builder().jitter(Jitter.NONE).build())
        .serverKeyRetention(Duration.ofHours(24))
        .circuitBreaker(CircuitBreakerSettings.disabled())
        .retryBudget(new RetryBudget() {
          @Override
          public boolean tryAcquireRetry(String host) {
            return !denyNext.getAndSet(false);
          }

          @Override
          public void onSuccess(String host) {}
        }).build();
  }

  @Test
  void executingAnOperationAgainPastTheServersKeyRetentionDoesNotResendIt() throws Exception {
    Operation op = Operation.builder("charge", Requests.order("{\"cart\":\"cart-42\",\"amount\":100}"))
        .key(IdempotencyKey.of("order-cart-42-charge")).reference("cart-42").build();
    ScriptedTransport day1 = new ScriptedTransport(time)
        .then(ScriptedTransport.fail(new SocketTimeoutException("Read timed out")));  // may have charged

    IdempotentExecutor first = executor();
    assertThrows(OperationPendingException.class, () -> first.execute(op, day1));
    assertEquals(OperationState.PENDING, journal.find(op.id()).orElseThrow().state());
    assertEquals(Classification.AMBIGUOUS, journal.find(op.id()).orElseThrow().attempts().get(0).classification());

    time.advance(Duration.ofHours(48));  // the server forgot the key 24 hours ago

    // The batch job runs again: same order, so the same key and the same journaled operation.
    Operation again = Operation.builder("charge", Requests.order("{\"cart\":\"cart-42\",\"amount\":100}"))
        .key(IdempotencyKey.of("order-cart-42-charge")).reference("cart-42").build();
    assertEquals(op.id(), again.id());
    ScriptedTransport day3 = new ScriptedTransport(time).otherwise(ScriptedTransport.status(201));
    try {
      executor().execute(again, day3);
    } catch (Exception expected) {
      // UNCERTAIN (not sent again) is the expected answer
    }

    assertEquals(0, day3.count(), "the operation, created 48 h ago with an ambiguous attempt, was sent again"
        + " after the server's 24 h key retention; the journal now says "
        + journal.find(op.id()).orElseThrow().state());
    assertEquals(OperationState.UNCERTAIN, journal.find(op.id()).orElseThrow().state());
  }
}
