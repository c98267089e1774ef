package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.Outcome;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A burst of submissions (every submit leaves a waiting handle in the dispatcher, kept or not) against a
 * healthy target. Each delivery
 * that makes progress wakes a poll, and each poll's sweep looks up to pageSize waiting handles up in
 * the journal, one read each: the journal reads grow with backlog × deliveries.
 */
class OutboxBacklogReadsTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));
  private final AtomicLong finds = new AtomicLong();
  private final ForwardingJournal counting = new ForwardingJournal(journal) {
    @Override
    public Optional<OperationRecord> find(OperationId id) throws IdempotencyException {
      finds.incrementAndGet();
      return super.find(id);
    }
  };

  @Test
  void deliveringABurstDoesNotReadTheJournalAHundredTimesPerOperation() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(counting).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).build();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .registerAsync("create-order", (request, key) -> {
          // Answers arrive spread out, as real ones do: up to 20 ms after the request.
          CompletableFuture<dev.idem.core.spi.ResponseSnapshot> answer = new CompletableFuture<>();
          long micros = 1 + Math.floorMod(key.hashCode(), 20_000);
          time.scheduler().schedule(() -> host.sendAsync(request, key).whenComplete((r, e) -> {
            if (e != null) {
              answer.completeExceptionally(e);
            } else {
              answer.complete(r);
            }
          }), Duration.ofNanos(micros * 1000));
          return answer;
        }).build();  // not started yet: the burst is queued first
    int n = 2000;
    List<CompletableFuture<Outcome>> handles = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      handles.add(outbox.submit(Operation.builder("create-order", Requests.order("{\"n\":" + i + "}")).build()));
    }
    long before = finds.get();

    outbox.start();
    time.advance(Duration.ofMinutes(1));

    handles.forEach(h -> assertTrue(h.isDone() && !h.isCompletedExceptionally()));
    assertEquals(n, host.totalAttempts());
    long perOperation = (finds.get() - before) / n;
    assertTrue(perOperation <= 5, "delivering " + n + " queued operations read the journal " + (finds.get() - before)
        + " times by id (" + perOperation + " per operation): every delivery's wake-up poll sweeps 100 waiting"
        + " handles");
    outbox.close();
  }
}
