package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * executeAsync's Javadoc (since "the app completing its future (orTimeout...) stops the execution
 * as a cancel does"): completing the returned future in any way (orTimeout, completeExceptionally)
 * is the same as cancelling it, and the execution stops. That holds for the future a leader's
 * caller gets (AsyncDriver#caller), but not for the future a caller gets that joined another
 * execution of the operation and then started over from the journal as the new leader
 * (IdempotentExecutor#follow): only mine.isCancelled() is passed on to the new execution. The
 * app's orTimeout on it leaves the execution running for a caller who is gone: it waits out the
 * backoff and sends the key again.
 */
class Round2FollowerOrTimeoutKeepsRunningTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
      .sleeper(time.sleeper()).scheduler(time.scheduler()).random(() -> 0.5).asyncExecutor(Runnable::run).build();

  private final List<CompletableFuture<ResponseSnapshot>> onTheWire = new CopyOnWriteArrayList<>();
  private final AsyncTransport transport = (request, key) -> {
    CompletableFuture<ResponseSnapshot> f = new CompletableFuture<>();
    onTheWire.add(f);
    return f;
  };
  private final Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();

  @AfterEach
  void stop() {
    onTheWire.forEach(f -> f.complete(new ResponseSnapshot(201, Map.of(), new byte[0])));
    idem.close();
  }

  /** Control: the leader's own future, timed out, stops the execution (passes). */
  @Test
  void aLeadersTimedOutFutureStopsTheExecution() {
    CompletableFuture<Outcome> a = idem.executeAsync(op, transport);
    assertEquals(1, onTheWire.size());
    assertTrue(a.completeExceptionally(new TimeoutException())); // a.orTimeout(...) elapsing
    onTheWire.get(0).complete(new ResponseSnapshot(503, Map.of(), new byte[0]));
    time.advance(Duration.ofMinutes(10));
    assertEquals(1, onTheWire.size(), "the stopped execution sent the key again");
  }

  @Test
  void aFollowersTimedOutFutureStopsTheExecutionItStartedOver() throws Exception {
    CompletableFuture<Outcome> a = idem.executeAsync(op, transport);
    CompletableFuture<Outcome> b = idem.executeAsync(op, transport); // joins A's flight
    assertEquals(1, onTheWire.size());

    a.cancel(false); // A goes away; B waits for A's attempt, then starts over from the journal
    onTheWire.get(0).complete(new ResponseSnapshot(503, Map.of(), new byte[0]));
    assertEquals(2, onTheWire.size(), "B started over as the new leader and sent the key");

    // B's app gives up: b.orTimeout(...) elapsing.
    assertTrue(b.completeExceptionally(new TimeoutException()));
    onTheWire.get(1).complete(new ResponseSnapshot(503, Map.of(), new byte[0]));
    time.advance(Duration.ofMinutes(10));

    assertEquals(2, onTheWire.size(), "the execution whose caller completed its future kept running: it waited"
        + " out the backoff and sent the key again for nobody; journal: " + journal.find(op.id()).orElseThrow());
  }
}
