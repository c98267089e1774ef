package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * An attempt still queued on an app-given worker pool ({@code Builder.workers}) when the dispatcher
 * closes. close() says "deliveries in progress are cancelled" and only an attempt on the wire is
 * recorded when it ends; the dispatcher's own pool drops its queued attempts unsent. An app-given
 * pool is not the dispatcher's to shut down, and its queue kept the attempt: a worker that took it
 * after close() sent it (up to half a lease later), after the app had stopped delivering, beside
 * the next dispatcher of the same owner, which takes the operation back at its first poll.
 *
 * <p>From review routbox (unproven there); failed before the fix: the queued attempt was sent
 * after close.
 */
class CloseDropsAttemptQueuedOnAppPoolTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();

  @Test
  void anAttemptQueuedOnAnAppGivenPoolIsNotSentAfterClose() throws Exception {
    List<Runnable> queue = new ArrayList<>();
    Executor appPool = queue::add;  // a pool whose workers are all busy: the attempt waits in its queue
    AtomicInteger sent = new AtomicInteger();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    try (IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
        .owner("only").build()) {
      OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
          .workers(appPool)
          .register("create-order", (request, key) -> {
            sent.incrementAndGet();
            return FakeHost.response(201, Map.of());
          }).build().start();
      outbox.submit(op);
      time.advance(Duration.ZERO);
      assertEquals(1, queue.size(), "the attempt waits for a worker of the app's pool");

      outbox.close();
      // The app's pool goes on: a worker frees up and takes what its queue holds.
      queue.forEach(Runnable::run);

      assertEquals(0, sent.get(), "the attempt queued when the dispatcher closed was sent after close");
      OperationRecord r = journal.find(op.id()).orElseThrow();
      assertEquals(OperationState.PENDING, r.state(), "never sent: " + r.attempts());
      assertTrue(r.attempts().isEmpty(), "no attempt recorded for one never sent: " + r.attempts());
    }
  }
}
