package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code executeAsync(...).orTimeout(...)} (or {@code completeOnTimeout}, or any
 * {@code completeExceptionally} by the app) while the first attempt is on the wire. orTimeout
 * completes the executor's own future with a TimeoutException: for the driver this is "the call is
 * over", exactly as a cancel, and it records the attempt on the wire when it ends. But unlike a
 * cancel, the operation's single flight is released at once, while the attempt is still on the
 * wire. The app's natural next step (execute the operation again, a Reactor retry after a
 * timeout) then sends the same key a second time beside the first: two concurrent requests with
 * one key from one process, which the executor's single flight promises never happens
 * ("the key is never sent twice at once from this process").
 *
 * <p>Deterministic: a hand-driven AsyncTransport (its futures complete only when the test says so)
 * and virtual time; the timeout is the app's completeExceptionally, which is what orTimeout does.
 */
class AsyncReviewOrTimeoutReleasesFlightTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
      .sleeper(time.sleeper()).scheduler(time.scheduler()).random(() -> 0.5).asyncExecutor(Runnable::run).build();

  private volatile boolean answerAtOnce;
  /** Every attempt started, in order; none completes until the test completes it. */
  private final List<CompletableFuture<ResponseSnapshot>> onTheWire = new CopyOnWriteArrayList<>();
  private final AsyncTransport transport = (request, key) -> {
    CompletableFuture<ResponseSnapshot> f = new CompletableFuture<>();
    onTheWire.add(f);
    if (answerAtOnce) {
      f.complete(new ResponseSnapshot(201, Map.of(), new byte[0]));
    }
    return f;
  };
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();

  @AfterEach
  void stop() {
    onTheWire.forEach(f -> f.complete(new ResponseSnapshot(201, Map.of(), new byte[0])));
    idem.close();
  }

  @Test
  void aTimedOutFutureKeepsTheFlightUntilItsAttemptOnTheWireEnds() throws Exception {
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    assertEquals(1, onTheWire.size(), "the first attempt is on the wire");

    // What first.orTimeout(5, SECONDS) does when the 5 s pass: the app stops waiting.
    assertTrue(first.completeExceptionally(new TimeoutException()));

    // The app executes the same operation again while the first request has not answered.
    CompletableFuture<Outcome> again = idem.executeAsync(op, transport);

    assertEquals(1, onTheWire.size(), "the same key was sent again while its first request was still on the"
        + " wire; journal: " + journal.find(op.id()).orElseThrow() + "; again: " + again);
  }

  /**
   * Single flight, seen from a second caller: B joins A's execution with no timeout of its own; A's
   * caller gives up (orTimeout). B must get the operation's outcome (as after A's cancel: B waits for
   * the attempt on the wire, then starts over from the journal with the same key), not A's private
   * TimeoutException.
   */
  @Test
  void aFollowerGetsTheOutcomeNotTheLeadersOwnTimeout() throws Exception {
    CompletableFuture<Outcome> a = idem.executeAsync(op, transport);
    CompletableFuture<Outcome> b = idem.executeAsync(op, transport);
    assertEquals(1, onTheWire.size(), "one send for both callers");

    a.completeExceptionally(new TimeoutException()); // A's orTimeout
    answerAtOnce = true; // any later attempt (B's start-over with the same key) is answered at once
    onTheWire.get(0).complete(new ResponseSnapshot(201, Map.of(), new byte[0]));

    java.util.concurrent.ExecutionException bFailed = null;
    Outcome bOutcome = null;
    try {
      bOutcome = b.get(10, java.util.concurrent.TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      bFailed = e;
    }
    assertEquals(null, bFailed == null ? null : bFailed.getCause().toString(),
        "B (no timeout of its own) failed with A's private timeout; the operation itself went on");
    assertEquals(201, bOutcome.response().status());
  }
}
