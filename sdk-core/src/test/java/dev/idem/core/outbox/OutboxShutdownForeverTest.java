package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.support.FakeHost;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
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
        // Actual: ArithmeticException("long overflow") from Duration.toNanos in Scheduler.of, and
        // the dispatcher is left DRAINING with no poll loop running.
        CompletableFuture<Boolean> drained =
            assertDoesNotThrow(() -> outbox.shutdown(ChronoUnit.FOREVER.getDuration()));
        assertTrue(drained.get(30, TimeUnit.SECONDS), "an empty queue drains at the first poll");
      } finally {
        outbox.close();
      }
    }
  }
}
