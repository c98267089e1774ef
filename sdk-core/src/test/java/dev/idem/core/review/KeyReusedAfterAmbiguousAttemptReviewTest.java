package dev.idem.core.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Jitter;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.RetryPolicy;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Guarantee 4: "Failure is never reported while the effect may exist." A 400 "key missing" (or any
 * PERMANENT answer) after an earlier ambiguous attempt ends UNCERTAIN (AttemptLoop.permanent checks
 * the history). The "key reused" answer (422 by default) does not: AttemptLoop.keyReused ends the
 * operation FAILED whatever the history holds. Yet a 422 after a first attempt that timed out after
 * sending is exactly when the effect is most likely to exist: the server holds a record for this
 * key (from attempt 1) and refuses the retry, because it fingerprints something that changed
 * between attempts (a re-applied Authorization token, a header) or because it answers 422 to a
 * duplicate it already processed. Reporting FAILED invites the app to submit the order again with a
 * new key: a second charge.
 */
class KeyReusedAfterAmbiguousAttemptReviewTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  private IdempotentExecutor executor() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .retryPolicy(RetryPolicy.builder().jitter(Jitter.NONE).build())
        .circuitBreaker(CircuitBreakerSettings.disabled()).retryBudget(RetryBudget.unlimited()).build();
  }

  @Test
  void aKeyReusedAnswerAfterATimedOutAttemptEndsUncertainNotFailed() throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    ScriptedTransport t = new ScriptedTransport(time)
        .then(ScriptedTransport.fail(new SocketTimeoutException("Read timed out")),   // sent, maybe committed
            ScriptedTransport.status(422, Map.of(), "{\"error\":\"key reused with different parameters\"}"));

    IdempotencyException e = assertThrows(IdempotencyException.class, () -> executor().execute(op, t));

    assertEquals(2, t.count());
    assertEquals(OperationState.UNCERTAIN, journal.find(op.id()).orElseThrow().state(),
        "attempt 1 may have taken effect; the journal says " + journal.find(op.id()).orElseThrow().reason());
    assertEquals(OperationUncertainException.class, e.getClass(), "the caller is told: " + e);
  }

  @Test
  void aKeyReusedAnswerAfterA500EndsUncertainNotFailed() throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
    ScriptedTransport t = new ScriptedTransport(time)
        .then(ScriptedTransport.status(500),                                      // may follow the commit
            ScriptedTransport.status(422, Map.of(), "{\"error\":\"key reused with different parameters\"}"));

    IdempotencyException e = assertThrows(IdempotencyException.class, () -> executor().execute(op, t));

    assertEquals(2, t.count());
    assertEquals(OperationState.UNCERTAIN, journal.find(op.id()).orElseThrow().state(),
        "attempt 1 (HTTP 500) may have taken effect; the journal says " + journal.find(op.id()).orElseThrow().reason());
    assertEquals(OperationUncertainException.class, e.getClass(), "the caller is told: " + e);
  }
}
