package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.hold;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/**
 * {@link IdempotentExecutor#close()}: "ends the asynchronous executions in progress with
 * OperationPendingException". Since 7ea016a, a call for an operation whose async execution was
 * cancelled while its attempt is on the wire waits on the flight's draining ticket, which only the
 * cancelled driver's attempt ending releases. Close ends a live leader's followers at once (it
 * abandons the leader), but nothing ends the draining ticket: close returns, the waiting call's
 * future stays incomplete, and it never completes if that attempt never ends (a server that never
 * answers: there is no attempt timeout by default, and close cancels one that was set).
 *
 * <p>Found by a review on 2026-12-05 (spring-client2).
 */
class CloseDuringDrainReviewTest {

  @Test
  void aCallWaitingOnACancelledExecutionsFlightIsEndedByClose() throws Exception {
    CompletableFuture<ResponseSnapshot> neverAnswered = new CompletableFuture<>();
    ScriptedTransport transport = new ScriptedTransport(new VirtualTime()).then(hold(neverAnswered));
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(new InMemoryJournal()).build();
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    assertEquals(1, transport.count(), "the first attempt is on the wire");
    assertTrue(first.cancel(true)); // a WebClient timeout(), say

    CompletableFuture<Outcome> again = idem.executeAsync(op, transport); // its retry(): waits for the drain
    assertEquals(1, transport.count(), "nothing sent beside the attempt on the wire");
    idem.close();

    try {
      again.get(10, TimeUnit.SECONDS);
      fail("the call completed after close without an exception");
    } catch (TimeoutException e) {
      fail("close returned, but the executeAsync call waiting on the cancelled execution's flight never completes"
          + " (it waits for an attempt that never ends): close ends every asynchronous execution in"
          + " progress with OperationPendingException, but not this one");
    } catch (ExecutionException e) {
      assertInstanceOf(OperationPendingException.class, e.getCause(), "told: " + e.getCause());
    }
  }
}
