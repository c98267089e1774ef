package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: AttemptLoop takes a null response for a failed attempt, ambiguous.
 *
 * <p>A registered transport that returns null instead of a response (an app's bug: a wrapper that
 * swallows the client's answer, say). It was called: the request may have gone out and taken
 * effect. The executor's safety net for the app's code promises that "the attempt that was sent,
 * if one was and it is not recorded yet, is recorded" (AttemptLoop#appCodeThrew), AMBIGUOUS, so
 * that a later permanent refusal ends the operation UNCERTAIN, never FAILED.
 *
 * <p>Today AttemptLoop.onResponse(null) throws a NullPointerException inside judgeAndDecide, and
 * appCodeThrew is called with response == null and failure == null, which it reads as "nothing was
 * answered": no attempt is recorded, the operation goes back to PENDING with an empty history, and
 * the next attempt's 404 ends it FAILED although the first attempt may have taken effect.
 */
class TransportReturnsNullTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  @Test
  void anAttemptWhoseTransportReturnedNullIsRecordedAndAPermanentRefusalAfterItEndsUncertain() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    Transport transport = (request, key) -> calls.incrementAndGet() == 1 ? null : ScriptedTransport.response(404);
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .workers(Runnable::run).register("create-order", transport).build().start();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();

    CompletableFuture<Outcome> handle = outbox.submit(op);
    time.advance(Duration.ofHours(1));

    assertEquals(2, calls.get(), "the transport was called twice: null, then 404");
    OperationRecord r = journal.find(op.id()).orElseThrow();
    assertTrue(handle.isDone());
    assertEquals(OperationState.UNCERTAIN, r.state(), "a 404 after an attempt that may have taken effect is"
        + " UNCERTAIN, not FAILED: " + r.reason());
    assertEquals(2, r.attempts().size(), "both attempts the transport was called for are in the history: "
        + r.attempts());
    assertTrue(r.attempts().get(0).mayHaveTakenEffect(), "the first attempt may have reached the server: "
        + r.attempts().get(0));
    outbox.close();
  }
}
