package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.Outcome;
import dev.idem.core.outbox.Deliverer.Ending;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * Regression test (found by a review this session).
 *
 * <p>Review of dc691a72 ("an attempt the client's own workers did not send is not reported as an
 * unreachable target"): the attempt's journaled reason, its RetryScheduled event and the
 * delivery's OperationPendingException now name the client's own workers, but the dispatcher's
 * WARN for the round still blames the target.
 *
 * <p>A delivery whose every attempt waited half the lease or longer for a busy outbox worker
 * (WorkerPoolTransport, {@code NotSentLocally}) ends its round PENDING. The round made no progress,
 * so the dispatcher goes offline and logs one WARN built by {@code DeliveryTracker.Round#describe}:
 * "no delivery made progress; of 1 operation, 1 stay PENDING with their keys, to be sent again when
 * due (not sent: target unreachable, circuit breaker open or retry budget empty; or left for
 * another owner)". None of those is what happened: the host was never tried (it answered every
 * request it was sent), its breaker is closed and its budget untouched; the outbox's own worker pool
 * was saturated. The test takes the real ending of such a delivery and asks the round for the text
 * of that WARN.
 *
 * <p>User-visible consequence: the one WARN an operator gets when the outbox backs off (docs/offline.md,
 * docs/fleet.md "one WARN when it goes offline (target or database unreachable)") sends them to
 * look at a healthy host, its network and its breaker, instead of at {@code syncWorkers} /
 * {@code maxInFlight}, the very misdirection dc691a72 set out to remove; and the outbox's health
 * shows it offline for it.
 */
class WorkerWaitRoundWarnNamesWorkersTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));

  @Test
  void theRoundWarnOfDeliveriesThatWaitedTooLongForAWorkerDoesNotBlameTheTarget() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
        .leaseFor(Duration.ofSeconds(20)).build();
    // The outbox's synchronous-transport workers, busy: attempts wait in their queue.
    ArrayDeque<Runnable> workers = new ArrayDeque<>();
    WorkerPoolTransport viaWorkers = new WorkerPoolTransport(host, workers::add, time.clock(), Duration.ofSeconds(10));
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    OperationId id = idem.enqueue(op).id();

    CompletableFuture<Outcome> delivery = idem.resumeAsync(id, viaWorkers);
    for (int second = 0; second < 600 && !delivery.isDone(); second++) {
      time.advance(Duration.ofSeconds(1));
      // Each attempt is taken by a worker only after 11 s in the queue: never sent.
      if (!workers.isEmpty() && second % 11 == 10) {
        while (!workers.isEmpty()) {
          workers.poll().run();
        }
      }
    }
    assertTrue(delivery.isDone(), "the round ended");
    assertEquals(0, host.totalAttempts(), "nothing reached the host");
    Throwable failure = delivery.handle((o, e) -> e).join();
    OperationPendingException pending = assertInstanceOf(OperationPendingException.class,
        failure instanceof CompletionException ? failure.getCause() : failure);
    assertTrue(pending.getMessage().contains("this client's own workers"), "dc691a72's own text: " + pending);

    // What the dispatcher does with that ending: the round without progress, and its one WARN.
    Ending ending = Ending.of(null, failure, x -> false, id);
    DeliveryTracker.Round round = new DeliveryTracker.Round(1);
    round.count(ending);
    String warn = round.describe();
    assertFalse(warn.contains("unreachable"), "the dispatcher's WARN for a round whose only delivery was never sent"
        + " because the outbox's own workers were busy (the host answered everything; breaker closed) still blames"
        + " the target: \"" + warn + "\"");
    idem.close();
  }
}
