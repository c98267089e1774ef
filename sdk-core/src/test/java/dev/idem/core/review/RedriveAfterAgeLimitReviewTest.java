package dev.idem.core.review;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Jitter;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.net.ConnectException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Re-drive is "the explicit way out of FAILED or UNCERTAIN" (DESIGN), and ExpiredPendingAction says
 * an operation ended at its age limit is left "for reconciliation or an explicit re-drive". But the
 * age limit counts from the record's createdAt, which redrive keeps: a re-driven operation is
 * already past its limit, and the next queued delivery (resumePending here; an OutboxDispatcher
 * alike) ends it again at once, sending nothing. Here the target was down for 20 hours, every
 * attempt refused before a byte was written, so the order ended FAILED at 18 h; it can never have
 * reached the server, so sending it now is safe. The operator fixes the target and re-drives it
 * (`idem journal redrive`, or executor.redrive): queued delivery never sends it, and the journal
 * says FAILED again, "no attempt can have reached the server". The re-drive is silently a no-op.
 */
class RedriveAfterAgeLimitReviewTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  private IdempotentExecutor executor() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .retryPolicy(RetryPolicy.builder().jitter(Jitter.NONE).build())
        .circuitBreaker(CircuitBreakerSettings.disabled()).retryBudget(RetryBudget.unlimited()).build();
  }

  @Test
  void aRedrivenNeverSentOperationIsDeliveredByQueuedDelivery() throws Exception {
    IdempotentExecutor idem = executor();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    idem.enqueue(op);

    ScriptedTransport down = new ScriptedTransport(time).otherwise(
        ScriptedTransport.fail(new ConnectException("Connection refused")));
    Map<String, ResumeHandler> whileDown = Map.of("create-order", ResumeHandler.of(down, o -> {}, f -> {}));
    for (int hour = 0; hour < 20; hour++) {       // resumed every hour while the target is down
      idem.resumePending(whileDown);
      time.advance(Duration.ofHours(1));
    }
    idem.resumePending(whileDown);
    assertEquals(OperationState.FAILED, journal.find(op.id()).orElseThrow().state(), "ended at its age limit");

    // The target is back; the operator re-drives the never-sent order.
    idem.redrive(op.id());
    assertEquals(OperationState.PENDING, journal.find(op.id()).orElseThrow().state());
    ScriptedTransport up = new ScriptedTransport(time).otherwise(ScriptedTransport.status(201));
    idem.resumePending(Map.of("create-order", ResumeHandler.of(up, o -> {}, f -> {})));

    assertEquals(1, up.count(), "the re-driven operation was not sent; the journal says "
        + journal.find(op.id()).orElseThrow().state() + ": " + journal.find(op.id()).orElseThrow().reason());
    assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
  }
}
