package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.net.ConnectException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: the dispatcher reads past the waits it skips until its batch is full.
 *
 * <p>Review of 3da3064a (Deliverer.findBatch): a wait kept on the scheduler ({@link DueDeadlines}) whose
 * operation runs in this executor is now skipped, but not dropped, before it is read; the skipped
 * entry still counts against the {@code max} that {@code deadlines.due(capacity.room())} returns. With
 * the room used up by such entries (here maxInFlight 1, and the one entry ahead is an app's inline
 * call on the wire), every other wait that has passed is passed over on every poll for as long as the
 * inline call runs: after an NTP step back, an operation whose backoff (10 s) ended and whose target
 * is back waits for someone else's call, up to the step's length (the hour the waits exist to save).
 * Before 3da3064a the entry was read, found changed by the inline call's claim, and dropped, so the
 * next poll took the next wait.
 */
class InlineCallDueWaitSlotTest extends WallClockStepFixture {
  InlineCallDueWaitSlotTest() {
    super((key, n, now) -> Reply.fail(new ConnectException("Connection refused")));
  }

  private static Operation order(int n) {
    return Operation.builder("create-order", Requests.order("{\"n\":" + n + "}")).build();
  }

  @Test
  void anInlineCallOnOneOperationDoesNotHoldUpAnotherWhoseKeptWaitHasPassed() throws Exception {
    IdempotentExecutor idem = executor("pod-0");
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(wall).scheduler(time.scheduler())
        .pollInterval(Duration.ofSeconds(1)).maxPollInterval(Duration.ofSeconds(1)).maxInFlight(1)
        .registerAsync("create-order", host).build().start();
    Operation x = order(1);
    Operation y = order(2);
    outbox.submit(x);
    time.advance(Duration.ofSeconds(1));
    CompletableFuture<Outcome> yHandle = outbox.submit(y);
    time.advance(Duration.ofSeconds(4));  // both rounds refused and over: each waits 10 s on the scheduler
    assertEquals(OperationState.PENDING, record(x).state());
    assertEquals(OperationState.PENDING, record(y).state(), "both refused once, both waiting on the scheduler");

    int yRefused = host.attempts(y.key());
    step = Duration.ofHours(-1);  // NTP steps the wall clock back an hour
    host.behave(FakeHost.always(201));
    // The app calls x itself; its attempt is on the wire for a while.
    CompletableFuture<ResponseSnapshot> slow = new CompletableFuture<>();
    CompletableFuture<Outcome> inline = idem.resumeAsync(x.id(), new ScriptedTransport(time).then(ScriptedTransport.hold(slow)));
    assertFalse(inline.isDone());

    time.advance(Duration.ofSeconds(30));  // y's 10 s backoff ended long ago, its target answers

    try {
      assertEquals(OperationState.SUCCEEDED, record(y).state(), "y's kept wait has passed and its target is back,"
          + " but the wait of x, which an inline call runs, fills the room of every poll");
      assertEquals(yRefused + 1, host.attempts(y.key()), "y sent once after the step");
    } finally {
      slow.complete(ScriptedTransport.response(201));
      time.advance(Duration.ofSeconds(2));
      outbox.close();
      idem.close();
    }
    assertFalse(yHandle.isCompletedExceptionally());
  }
}
