package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.JournalException;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * The executor promises that background work that failed where no future could report it (the
 * journal write that records an attempt of a call the app cancelled, say) is thrown by the app's
 * next call, once, as the cause of an {@link IllegalStateException}. A running
 * {@link OutboxDispatcher} took that report instead: its deliveries go through
 * {@code resumeAsync}, whose check consumed it, so the delivery was refused (logged at DEBUG) and
 * the app's next call went through as if nothing had failed.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class OutboxLeavesBackgroundFailureTest {
  private final VirtualTime time = new VirtualTime();
  private final AtomicBoolean failAttemptRecords = new AtomicBoolean();
  private final JournalException diskFull = new JournalException("injected: disk full", null);
  private final InMemoryJournal journal = new InMemoryJournal();
  private final ForwardingJournal failing = new ForwardingJournal(journal) {
    @Override
    public void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt) throws IdempotencyException {
      if (failAttemptRecords.get()) {
        throw diskFull;
      }
      super.recordAttempt(id, lease, attempt);
    }
  };

  private static Operation op(String name, int n) {
    return Operation.builder(name, Requests.order("{\"n\":" + n + "}")).build();
  }

  @Test
  void theDispatchersDeliveriesLeaveTheBackgroundFailureForTheAppsNextCall() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(failing).clock(time.clock())
        .scheduler(time.scheduler()).sleeper(time.sleeper()).asyncExecutor(Runnable::run).random(() -> 0.5)
        .owner("test-owner").build();
    Operation queued = op("create-order", 1);
    idem.enqueue(queued);

    // The app's own asynchronous call, cancelled while its attempt is on the wire: the attempt is
    // recorded when it ends, after the call is over, and that write fails in the background.
    CompletableFuture<ResponseSnapshot> onTheWire = new CompletableFuture<>();
    CompletableFuture<Outcome> call = idem.executeAsync(op("notify-partner", 2), (request, key) -> onTheWire);
    call.cancel(false);
    failAttemptRecords.set(true);
    onTheWire.complete(FakeHost.response(201, java.util.Map.of()));
    failAttemptRecords.set(false);

    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", new FakeHost(time, FakeHost.always(201))).build().start();
    time.advance(Duration.ZERO);
    assertEquals(OperationState.SUCCEEDED, journal.find(queued.id()).orElseThrow().state(),
        "the dispatcher delivers; the failure is not its to report");
    outbox.close();

    Operation next = op("create-order", 3);
    IllegalStateException reported = assertThrows(IllegalStateException.class, () -> idem.enqueue(next),
        "the app's next call did not report the background failure: the dispatcher had taken it");
    assertSame(diskFull, reported.getCause());
    assertTrue(journal.find(next.id()).isEmpty(), "refused before the journal");
    // Reported once: the call after it goes through.
    assertEquals(OperationState.PENDING, idem.enqueue(next).state());
    idem.close();
  }
}
