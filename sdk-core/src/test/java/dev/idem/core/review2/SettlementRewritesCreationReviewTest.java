package dev.idem.core.review2;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Jitter;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.resume.Reconciliation;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Round 2 of the re-drive fix (5ad120e0): settleIfUnchanged (reconcileUncertain) now also moves
 * createdAt, to the settlement, although a settlement sends nothing and ends the operation, so no
 * age limit is at stake. The operation's creation time is overwritten for good (the journal keeps
 * no other copy): `idem journal show` and the listing print "created" at the reconciliation, and
 * findByReference, documented "oldest first", now lists the reconciled charge after an operation
 * that was begun hours after it.
 */
class SettlementRewritesCreationReviewTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  private IdempotentExecutor executor() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).sleeper(time.sleeper())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .retryPolicy(RetryPolicy.builder().jitter(Jitter.NONE).maxAttempts(1).build())
        .circuitBreaker(CircuitBreakerSettings.disabled()).retryBudget(RetryBudget.unlimited()).build();
  }

  @Test
  void reconcilingAnUncertainOperationKeepsItsCreationTimeAndItsPlaceInFindByReference() throws Exception {
    IdempotentExecutor idem = executor();
    Operation charge = Operation.builder("charge", Requests.order("{\"cart\":\"cart-5\",\"amount\":100}"))
        .reference("cart-5").build();
    Instant t0 = time.clock().instant();
    idem.enqueue(charge);
    ScriptedTransport timeouts = new ScriptedTransport(time).otherwise(
        ScriptedTransport.fail(new SocketTimeoutException("Read timed out")));
    idem.resumePending(Map.of("charge", ResumeHandler.of(timeouts, o -> {}, f -> {})));
    assertEquals(OperationState.UNCERTAIN, journal.find(charge.id()).orElseThrow().state());

    time.advance(Duration.ofHours(1));
    Operation ship = Operation.builder("ship", Requests.order("{\"cart\":\"cart-5\"}")).reference("cart-5").build();
    idem.enqueue(ship);

    time.advance(Duration.ofHours(4));
    // The reconciler finds no charge at the provider: the operation is settled FAILED, nothing sent.
    assertEquals(1, idem.reconcileUncertain(r -> Reconciliation.failed("no charge found at the provider")));

    OperationRecord settled = journal.find(charge.id()).orElseThrow();
    assertEquals(OperationState.FAILED, settled.state());
    List<String> oldestFirst = idem.findByReference("default", "cart-5").stream()
        .map(r -> r.id().operation()).toList();
    assertEquals(List.of("charge", "ship"), oldestFirst,
        "findByReference is documented oldest first; the charge was begun an hour before the shipment");
    assertEquals(t0, settled.createdAt(), "the charge's creation time was overwritten by its reconciliation");
  }
}
