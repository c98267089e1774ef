package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationFailedException;
import dev.idem.core.OperationPendingException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.Outcome;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.spi.Transport;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/**
 * Why: the dispatcher claims an operation, checking its age limit, when it queues the attempt for
 * a worker, and a worker may take it up to half the lease later. An attempt claimed just before
 * the limit went out past it, with a key the server may have forgotten (a resend after the key's
 * retention can take effect twice). Now the worker checks the limit when it takes the attempt:
 * past it, nothing is sent, no attempt is recorded, and the operation ends as the age limit ends
 * it: FAILED if no attempt can have reached the server, else UNCERTAIN.
 */
class QueuedAttemptPastAgeLimitTest {
  private static final Duration LEASE = Duration.ofMinutes(2);
  private static final Duration AGE_LIMIT = Duration.ofHours(1);
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  /** Attempts per key, as the server saw them. */
  private final Map<IdempotencyKey, Integer> received = new ConcurrentHashMap<>();
  private final Transport server = (request, key) -> {
    received.merge(key, 1, Integer::sum);
    return FakeHost.response(201, Map.of());
  };
  /** The dispatcher's worker pool, run by hand: every queued attempt waits until the test runs it. */
  private final List<Runnable> waitingForAWorker = new ArrayList<>();

  private IdempotentExecutor executor() {
    return IdempotentExecutor.builder().journal(journal).clock(time.clock()).scheduler(time.scheduler())
        .asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5).owner("only").leaseFor(LEASE)
        .maxPendingAge(AGE_LIMIT).circuitBreaker(CircuitBreakerSettings.disabled()).build();
  }

  private OutboxDispatcher dispatcher(IdempotentExecutor idem) {
    return OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .workers(waitingForAWorker::add).register("create-order", server).build().start();
  }

  @Test
  void aNeverSentOperationWhoseQueuedAttemptAWorkerTakesPastTheLimitEndsFailedUnsent() throws Exception {
    queuedPastTheLimit(false);
  }

  @Test
  void anOperationThatMayHaveReachedTheServerEndsUncertainUnsent() throws Exception {
    queuedPastTheLimit(true);
  }

  private void queuedPastTheLimit(boolean answerLostBefore) throws Exception {
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    try (IdempotentExecutor idem = executor()) {
      idem.enqueue(op);
      Instant limit = time.now().plus(AGE_LIMIT);
      List<AttemptRecord> before = List.of();
      if (answerLostBefore) {
        // The first attempt went out and its answer was lost; then the target refused it: PENDING.
        FakeHost earlier = new FakeHost(time, (k, n, t) -> n == 1
            ? FakeHost.Reply.fail(new SocketTimeoutException("Read timed out"))
            : FakeHost.Reply.fail(new ConnectException("Connection refused")));
        assertThrows(OperationPendingException.class, () -> idem.resume(op.id(), (Transport) earlier));
        before = journal.find(op.id()).orElseThrow().attempts();
        assertTrue(before.stream().anyMatch(AttemptRecord::mayHaveReachedServer), before.toString());
      }
      time.advance(Duration.between(time.now(), limit).minusSeconds(10));

      try (OutboxDispatcher outbox = dispatcher(idem)) {
        CompletableFuture<Outcome> handle = outbox.submit(op);
        time.advance(Duration.ZERO);
        assertEquals(1, waitingForAWorker.size(), "claimed before its age limit and queued for a worker");
        assertEquals(OperationState.IN_FLIGHT, journal.find(op.id()).orElseThrow().state());

        time.advance(Duration.ofSeconds(20));  // the workers are busy: past the limit, within maxWait
        waitingForAWorker.remove(0).run();

        assertEquals(null, received.get(op.key()), "sent past its age limit: " + received);
        OperationRecord r = journal.find(op.id()).orElseThrow();
        OperationState expected = answerLostBefore ? OperationState.UNCERTAIN : OperationState.FAILED;
        assertEquals(expected, r.state(), r.reason());
        assertTrue(r.reason().contains("age limit"), r.reason());
        assertEquals(before, r.attempts(), "no attempt recorded for the one the worker did not send");
        assertEquals(0, journal.count(OperationState.IN_FLIGHT), "the claim was consumed by the end");
        assertTrue(handle.isDone());
        Throwable told = assertThrows(ExecutionException.class, handle::get).getCause();
        if (answerLostBefore) {
          assertInstanceOf(OperationUncertainException.class, told);
        } else {
          assertInstanceOf(OperationFailedException.class, told);
        }

        time.advance(Duration.ofMinutes(10));
        while (!waitingForAWorker.isEmpty()) {
          waitingForAWorker.remove(0).run();
        }
        assertEquals(null, received.get(op.key()), "nor later");
      }
    }
  }
}
