package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.hold;
import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * After a cancel, the cancelled execution keeps the operation's single flight until the attempt it
 * had on the wire ends (AsyncDriver.quietAfterStop), and since 7bcd7887 the calls that had joined
 * the flight before the cancel wait for that too (they were told PENDING at once before). The
 * attempt timeout is what bounds that attempt when the HTTP client does not (a java.net.http
 * client without a request timeout, a server that never answers). But the attempt timeout's
 * timer, finding the app's pool full for a moment, gives up for good once the call is over
 * (AsyncDriver.Timer.handOver: {@code result.isDone()}): it never tries again, the attempt is
 * never timed out, the flight is never released, and every call for the operation (the one that
 * joined before the cancel, and a Reactor retry made after it) waits forever, although the pool
 * took work again a millisecond later and the attempt timeout passed long ago. Without the
 * cancel, the same refusal is retried HANDOFF_RETRY later.
 *
 * <p>Found by a review on 2026-12-05 (async4).
 */
class AttemptTimeoutAfterCancelPoolFullReviewTest {
  private static final Duration ATTEMPT_TIMEOUT = Duration.ofSeconds(5);

  private final VirtualTime time = new VirtualTime();
  private final AtomicBoolean full = new AtomicBoolean();
  private final AtomicInteger refused = new AtomicInteger();
  /** The app's pool: runs work on the handing thread, and refuses it while full. */
  private final Executor pool = task -> {
    if (full.get()) {
      refused.incrementAndGet();
      throw new RejectedExecutionException("full");
    }
    task.run();
  };

  private final CompletableFuture<ResponseSnapshot> wire = new CompletableFuture<>(); // never answered
  private final ScriptedTransport transport = new ScriptedTransport(time).then(hold(wire)).otherwise(status(201));
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(new InMemoryJournal())
      .clock(time.clock()).scheduler(time.scheduler()).asyncExecutor(pool)
      .retryPolicy(RetryPolicy.builder().attemptTimeout(ATTEMPT_TIMEOUT).build()).build();

  @AfterEach
  void stop() {
    idem.close();
  }

  @Test
  void theAttemptTimeoutOfACancelledExecutionStillReleasesItsFlightAfterTheAppsPoolWasFullForAMoment()
      throws Exception {
    CompletableFuture<Outcome> first = idem.executeAsync(op, transport);
    CompletableFuture<Outcome> joined = idem.executeAsync(op, transport); // another caller, same operation
    assertEquals(1, transport.count(), "the second call joined the flight");
    assertTrue(first.cancel(true)); // its attempt is on the wire: the flight is held until it ends
    CompletableFuture<Outcome> retry = idem.executeAsync(op, transport); // a Reactor retry() after a timeout()

    full.set(true); // the app's pool is full exactly when the attempt timeout fires
    time.advance(ATTEMPT_TIMEOUT);
    assertTrue(refused.get() > 0, "the attempt timeout's hand-over was refused");
    full.set(false); // and takes work again a moment later
    time.advance(Duration.ofMinutes(10));

    assertFalse(wire.isDone() && !wire.isCancelled(), "the server never answered");
    assertTrue(wire.isCancelled() || joined.isDone(), "the attempt timeout (" + ATTEMPT_TIMEOUT + ") of the"
        + " cancelled execution never ran: 10 minutes after it, its attempt is still on the wire and holds the"
        + " flight of " + op.id() + " (state " + idem.journal().find(op.id()).orElseThrow().state() + "), so the"
        + " call that joined before the cancel and the retry made after it wait forever");
    assertEquals(201, joined.get().response().status(), "the call that joined before the cancel starts over");
    assertEquals(201, retry.get().response().status(), "the retry after the cancel starts over");
    assertEquals(2, transport.count(), "one attempt timed out, one answered");
  }
}
