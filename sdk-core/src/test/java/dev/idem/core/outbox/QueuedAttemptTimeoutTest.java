package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * An attempt whose timeout fires while it still waits for a worker was never sent, yet it was
 * recorded as timed out on the wire (ambiguous: "may have taken effect"), so an operation that
 * never left the process could end UNCERTAIN. The executor now cancels the attempt first, and a
 * queued one answers the cancel as not sent.
 *
 * <p>Found by a review on 2026-12-04 (the same gap in the OkHttp adapter's dispatcher queue);
 * failed before the fix.
 */
class QueuedAttemptTimeoutTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final Map<IdempotencyKey, Integer> sent = new ConcurrentHashMap<>();
  private final Transport server = (request, key) -> {
    sent.merge(key, 1, Integer::sum);
    return FakeHost.response(201, Map.of());
  };
  private final List<Runnable> waitingForAWorker = new ArrayList<>();

  @Test
  void anAttemptTimedOutBeforeAWorkerTookItIsRecordedAsNotSent() throws Exception {
    RetryPolicy policy = RetryPolicy.builder().attemptTimeout(Duration.ofSeconds(1)).build();
    Operation op = Operation.builder("create-order", Requests.order("{}")).build();
    try (IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
            .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
            .retryPolicy(policy).build();
        OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
            .workers(waitingForAWorker::add).register("create-order", server).build().start()) {
      outbox.submit(op);
      time.advance(Duration.ZERO);
      assertEquals(1, waitingForAWorker.size());

      time.advance(Duration.ofSeconds(1));  // the attempt timeout, while the attempt is still queued
      waitingForAWorker.remove(0).run();    // a worker comes free: the attempt is gone

      assertEquals(Map.of(), sent, "nothing was sent");
      List<AttemptRecord> attempts = journal.find(op.id()).orElseThrow().attempts();
      assertEquals(1, attempts.size(), attempts.toString());
      assertFalse(attempts.get(0).mayHaveTakenEffect(), "recorded as maybe sent: " + attempts);
    }
  }
}
