package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.Outcome;
import dev.idem.core.spi.Scheduler;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Found by a review on 2026-12-04.
 *
 * <p>{@link OutboxDispatcher#shutdown(Duration)} documents no limit on its timeout and only a
 * NullPointerException, so "drain, however long it takes" is naturally written
 * {@code shutdown(ChronoUnit.FOREVER.getDuration())} or {@code Duration.ofSeconds(Long.MAX_VALUE)}.
 * With the dispatcher's own scheduler (the default) the drain timer's {@code delay.toNanos()}
 * overflows: shutdown throws {@code ArithmeticException: long overflow} after it has already
 * switched the dispatcher to DRAINING, but before it starts (or wakes) the poll loop. The
 * dispatcher then refuses every submit, never polls if it was not started, and the drain future
 * that later calls return never completes. The dispatcher's own threads are real here (the default
 * scheduler is the subject), so the test waits on the handle, never sleeps.
 */
class OutboxShutdownForeverTest {
  @Test
  void shutdownWithAnUnboundedTimeoutDrainsInsteadOfThrowingLongOverflow() throws Exception {
    try (IdempotentExecutor idem = IdempotentExecutor.builder().journal(new InMemoryJournal()).build()) {
      OutboxDispatcher outbox = OutboxDispatcher.builder(idem)
          .register("create-order", (request, key) -> FakeHost.response(201, Map.of())).build();
      try {
        // Expected: a drain handle (the queue is empty, so it drains at the first poll).
        // Before the fix: ArithmeticException("long overflow") from Duration.toNanos in Scheduler.of, and
        // the dispatcher is left DRAINING with no poll loop running.
        CompletableFuture<Boolean> drained =
            assertDoesNotThrow(() -> outbox.shutdown(ChronoUnit.FOREVER.getDuration()));
        assertTrue(drained.get(30, TimeUnit.SECONDS), "an empty queue drains at the first poll");
      } finally {
        outbox.close();
      }
    }
  }

  /**
   * The same ordering, with the other way scheduling the drain timer can fail: a scheduler that
   * refuses it. The dispatcher used to be switched to DRAINING before the timer was asked for, so
   * the refusal left it refusing submissions with nothing to end the drain. Now it is left as it was.
   */
  @Test
  void aRefusedDrainTimerLeavesTheDispatcherRunning() throws Exception {
    VirtualTime time = new VirtualTime();
    Duration refusedDelay = Duration.ofMinutes(7);
    Scheduler refusesTheDrainTimer = (task, delay) -> {
      if (delay.equals(refusedDelay)) {
        throw new RejectedExecutionException("shut down");
      }
      return time.scheduler().schedule(task, delay);
    };
    InMemoryJournal journal = new InMemoryJournal();
    FakeHost host = new FakeHost(time, FakeHost.always(201));
    try (IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).sleeper(time.sleeper()).asyncExecutor(Runnable::run).random(() -> 0.5).build();
        OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(refusesTheDrainTimer)
            .registerAsync("create-order", host).build().start()) {
      assertThrows(RejectedExecutionException.class, () -> outbox.shutdown(refusedDelay));

      Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
      CompletableFuture<Outcome> handle = outbox.submit(op);
      time.advance(Duration.ZERO);
      assertTrue(handle.isDone(), "delivered at the poll the submit asked for");
      assertFalse(handle.isCompletedExceptionally(), "still takes submissions");
      assertEquals(1, host.attempts(op.key()));
      assertEquals(1, host.effects());
    }
  }
}
