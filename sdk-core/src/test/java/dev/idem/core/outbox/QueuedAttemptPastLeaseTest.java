package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
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
 * The dispatcher claims an operation (its lease starts) when it queues the attempt for a worker,
 * not when a worker sends it. With the workers busy for longer than the lease, another owner took
 * the operation over and delivered it, and the queued attempt was still sent afterwards: a second
 * effect unless the server remembered the key.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix (the key went out twice).
 */
class QueuedAttemptPastLeaseTest {
  private static final Duration LEASE = Duration.ofMinutes(2);
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  /** Attempts per key, as the server saw them. */
  private final Map<IdempotencyKey, Integer> effects = new ConcurrentHashMap<>();
  private final Transport server = (request, key) -> {
    effects.merge(key, 1, Integer::sum);
    return FakeHost.response(201, Map.of());
  };
  /** The dispatcher's worker pool, run by hand: every queued attempt waits until the test runs it. */
  private final List<Runnable> waitingForAWorker = new ArrayList<>();

  private IdempotentExecutor executor(String owner) {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).scheduler(time.scheduler())
        .asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).owner(owner).leaseFor(LEASE)
        .build();
  }

  private OutboxDispatcher dispatcher(IdempotentExecutor idem) {
    return OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .workers(waitingForAWorker::add).register("create-order", server).build().start();
  }

  @Test
  void anAttemptThatWaitedPastItsLeaseIsNotSentAfterAnotherOwnerDeliveredIt() throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    try (IdempotentExecutor first = executor("first"); OutboxDispatcher outbox = dispatcher(first);
        IdempotentExecutor second = executor("second")) {
      outbox.submit(op);
      time.advance(Duration.ZERO);
      assertEquals(1, waitingForAWorker.size(), "claimed and queued for a worker");
      assertEquals(OperationState.IN_FLIGHT, journal.find(op.id()).orElseThrow().state());

      time.advance(LEASE.plusSeconds(1));
      second.resume(op.id(), server);  // the lease ran out: the second owner takes it over
      assertEquals(1, effects.get(op.key()));
      waitingForAWorker.remove(0).run();  // a worker is free at last

      assertEquals(1, effects.get(op.key()), "the queued attempt went out after the takeover: " + effects);
      assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
    }
  }

  @Test
  void anAttemptThatWaitedHalfItsLeaseIsNotSentAndGoesOutAgainAfterAFreshClaim() throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
    try (IdempotentExecutor idem = executor("only"); OutboxDispatcher outbox = dispatcher(idem)) {
      outbox.submit(op);
      time.advance(Duration.ZERO);
      time.advance(LEASE.dividedBy(2));
      waitingForAWorker.remove(0).run();
      assertNull(effects.get(op.key()), "half the lease gone: too little left for the attempt itself");
      assertEquals(OperationState.PENDING, journal.find(op.id()).orElseThrow().state());

      for (int i = 0; i < 20 && journal.find(op.id()).orElseThrow().state() != OperationState.SUCCEEDED; i++) {
        time.advance(Duration.ofSeconds(30));  // the backoff, then the next poll claims it again
        while (!waitingForAWorker.isEmpty()) {
          waitingForAWorker.remove(0).run();
        }
      }

      assertEquals(1, effects.get(op.key()));
      assertEquals(OperationState.SUCCEEDED, journal.find(op.id()).orElseThrow().state());
    }
  }
}
