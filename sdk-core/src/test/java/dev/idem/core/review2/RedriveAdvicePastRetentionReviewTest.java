package dev.idem.core.review2;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Jitter;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.RetryPolicy;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Round 2 of the re-drive fix (5ad120e0). An operation whose attempt timed out (the server may
 * have charged) ends UNCERTAIN, and the exception the app
 * gets for it says "reconcile or re-drive it with the same key" (AttemptLoop.settled), as if the
 * server's idempotency would catch a duplicate. Following that advice 30 h after the attempt (the
 * server's 24 h key retention has forgotten the key) now resends it at the next resume: re-drive
 * moved createdAt, so the age limit no longer stops it. No refusal, no warning (no log, no event)
 * at the re-drive or at the send; only a sentence in Javadoc/CLI help. Before the fix the re-drive
 * was ended UNCERTAIN again, unsent (DESIGN 6: "not re-sent blindly").
 */
class RedriveAdvicePastRetentionReviewTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  private IdempotentExecutor executor() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .retryPolicy(RetryPolicy.builder().jitter(Jitter.NONE).maxAttempts(1).build())
        .serverKeyRetention(Duration.ofHours(24))
        .circuitBreaker(CircuitBreakerSettings.disabled()).retryBudget(RetryBudget.unlimited()).build();
  }

  @Test
  void followingTheUncertainAdviceToRedriveDoesNotResendPastTheServersKeyRetention() throws Exception {
    IdempotentExecutor idem = executor();
    Operation op = Operation.builder("charge", Requests.order("{\"cart\":\"cart-8\",\"amount\":100}")).build();
    idem.enqueue(op);
    // T0: the attempt times out (the server may have charged): UNCERTAIN, as the policy allows one attempt.
    ScriptedTransport timeouts = new ScriptedTransport(time).otherwise(
        ScriptedTransport.fail(new SocketTimeoutException("Read timed out")));
    Map<String, ResumeHandler> h = Map.of("charge", ResumeHandler.of(timeouts, o -> {}, f -> {}));
    idem.resumePending(h);
    assertEquals(OperationState.UNCERTAIN, journal.find(op.id()).orElseThrow().state());

    time.advance(Duration.ofHours(30));  // the server forgot the key 6 hours ago
    OperationUncertainException told = assertThrows(OperationUncertainException.class,
        () -> idem.resume(op.id(), timeouts));
    // Fixed: past the age limit after an attempt that may have reached the server, the message no
    // longer advises a re-drive with the same key; it says to reconcile.
    assertFalse(told.getMessage().contains("re-drive it with the same key"), told.getMessage());
    assertTrue(told.getMessage().contains("Reconcile it"), told.getMessage());

    // The operator follows the advice.
    idem.redrive(op.id());
    ScriptedTransport up = new ScriptedTransport(time).otherwise(ScriptedTransport.status(201));
    idem.resumePending(Map.of("charge", ResumeHandler.of(up, o -> {}, f -> {})));

    OperationRecord now = journal.find(op.id()).orElseThrow();
    assertEquals(0, up.count(), "re-sent, without any warning, 30 h after an attempt that may have charged (the"
        + " server's 24 h key retention forgot the key), after the product's own message advised a re-drive 'with"
        + " the same key'; the journal says " + now.state());
  }
}
