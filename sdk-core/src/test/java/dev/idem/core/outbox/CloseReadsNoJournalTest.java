package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.Outcome;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link OutboxDispatcher#close()}: "Returns at once: it neither waits for the journal nor closes
 * the executor". It read the journal once per open handle of an operation not in delivery (to
 * hand a settled one its outcome), on the closing thread: with a journal that answers slowly or not
 * at all (a database that went away, each read waiting out a connection timeout), a shutdown
 * waited that long times the number of handles, however many the app holds.
 *
 * <p>From review routbox (unproven there); failed before the fix: close() read the journal
 * three times.
 */
class CloseReadsNoJournalTest {
  private final VirtualTime time = new VirtualTime();
  private final AtomicInteger readsWhileClosing = new AtomicInteger();
  private volatile boolean closing;
  private final ForwardingJournal journal = new ForwardingJournal(new InMemoryJournal()) {
    @Override
    public Optional<OperationRecord> find(OperationId id) throws IdempotencyException {
      if (closing) {
        readsWhileClosing.incrementAndGet();
      }
      return super.find(id);
    }
  };

  @Test
  void closeReadsNothingForTheHandlesItFails() throws Exception {
    try (IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
        .owner("only").build()) {
      OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
          .register("create-order", (request, key) -> FakeHost.response(201, Map.of())).build().start();
      // Operations another instance of the fleet delivers: this one only waits for their outcomes.
      List<CompletableFuture<Outcome>> handles = new ArrayList<>();
      for (int n = 0; n < 3; n++) {
        Operation refund = Operation.builder("refund", Requests.order("{\"n\":" + n + "}")).build();
        idem.enqueue(refund);
        handles.add(outbox.await(refund.id()));
      }
      time.advance(Duration.ZERO);

      closing = true;
      outbox.close();
      closing = false;

      assertEquals(0, readsWhileClosing.get(), "close() read the journal once per open handle");
      for (CompletableFuture<Outcome> h : handles) {
        assertTrue(h.isCompletedExceptionally(), "a handle left open by close()");
        ExecutionException e = assertThrows(ExecutionException.class, h::get);
        assertInstanceOf(OperationPendingException.class, e.getCause());
      }
    }
  }
}
