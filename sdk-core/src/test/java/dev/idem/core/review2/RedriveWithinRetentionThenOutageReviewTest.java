package dev.idem.core.review2;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.Classification;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Jitter;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Round 2 of the re-drive fix (5ad120e0): a re-drive now moves createdAt, from which the age limit
 * counts. But the age limit stands for the server's key retention, and the server's retention of
 * this key started at the first attempt that reached it, not at the re-drive. An UNCERTAIN charge
 * (read timeout at T0: the server may hold the key, and the charge) re-driven 12 hours later, well
 * within the 24 h retention, as the docs allow (they warn only about a re-drive "past the server's
 * key retention"), then meets an outage: every resume is refused before a byte is written, so it
 * stays PENDING. At T0+26h the target is back and resume sends it with a key the server forgot two
 * hours ago: a second charge, with no warning (its age limit now falls at T0+30h, past the retention). Before the fix its age limit (T0+18h) ended it
 * UNCERTAIN, unsent.
 */
class RedriveWithinRetentionThenOutageReviewTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  private IdempotentExecutor executor() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .retryPolicy(RetryPolicy.builder().jitter(Jitter.NONE).maxAttempts(2).build())
        .serverKeyRetention(Duration.ofHours(24))  // maxPendingAge defaults to 18 h
        .circuitBreaker(CircuitBreakerSettings.disabled()).retryBudget(RetryBudget.unlimited()).build();
  }

  @Test
  void aRedriveWithinRetentionIsNotResentAfterTheServerForgotTheKeyOfItsAmbiguousAttempt() throws Exception {
    IdempotentExecutor idem = executor();
    Operation op = Operation.builder("charge", Requests.order("{\"cart\":\"cart-7\",\"amount\":100}")).build();
    idem.enqueue(op);

    // T0: the charge times out twice: the server may have charged, and holds the key from now on.
    ScriptedTransport timeouts = new ScriptedTransport(time).otherwise(
        ScriptedTransport.fail(new SocketTimeoutException("Read timed out")));
    idem.resumePending(Map.of("charge", ResumeHandler.of(timeouts, o -> {}, f -> {})));
    OperationRecord uncertain = journal.find(op.id()).orElseThrow();
    assertEquals(OperationState.UNCERTAIN, uncertain.state());
    assertEquals(Classification.AMBIGUOUS, uncertain.attempts().get(0).classification());

    // T0+12h, well within the server's 24 h key retention: the operator re-drives it, so that the
    // server's idempotency answers the retry (replays the charge if it was made).
    time.advance(Duration.ofHours(12));
    idem.redrive(op.id());

    // The target goes down: every resume is refused before anything is written; still PENDING.
    ScriptedTransport down = new ScriptedTransport(time).otherwise(
        ScriptedTransport.fail(new ConnectException("Connection refused")));
    Map<String, ResumeHandler> whileDown = Map.of("charge", ResumeHandler.of(down, o -> {}, f -> {}));
    for (int hour = 12; hour < 26; hour++) {
      idem.resumePending(whileDown);
      time.advance(Duration.ofHours(1));
    }
    // T0+26h: the server forgot the key 2 hours ago. The target is back.
    ScriptedTransport up = new ScriptedTransport(time).otherwise(ScriptedTransport.status(201));
    idem.resumePending(Map.of("charge", ResumeHandler.of(up, o -> {}, f -> {})));

    OperationRecord now = journal.find(op.id()).orElseThrow();
    assertEquals(0, up.count(), "sent again 26 h after an attempt that may have charged, 2 h after the server's"
        + " 24 h key retention forgot its key (a duplicate charge the server cannot catch); the journal says "
        + now.state() + ", createdAt " + now.createdAt() + ": " + now.reason());
    assertEquals(OperationState.UNCERTAIN, now.state());
  }
}
