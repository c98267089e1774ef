package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.Outcome;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.FakeHost.Reply;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: an attempt after one NotSentLocally is not charged as a retry.
 *
 * <p>Review (core2) of 4ffc716d: attempts the outbox did not send for its own reason (its worker
 * queue, NotSentLocally) no longer count against the host's breaker, "which says nothing of the
 * host", but each next attempt of such an operation is still charged to the host's retry budget as
 * a retry (AttemptLoop.claim: chargedAsRetry = history non-empty, and a NotSentLocally attempt is in
 * the history), and such a retry that is again not sent locally is never refunded (only a
 * successful retry is). A busy worker pool thus drains the budget of a host that was never sent a
 * byte, and the app's own inline calls to that healthy host then cannot retry a 503 ("budget
 * empty"): the same harm, held-back inline calls, that the commit removed for the breaker.
 * RetryBudget: "so that retries cannot multiply load during an outage. A first attempt never needs
 * the budget": here the charged attempts are the first to reach the host.
 *
 * <p>The budget is small (two retries) so that a dozen deliveries drain it; the default (500 tokens,
 * 5 per retry) is drained the same way by a hundred. The breaker is disabled to isolate the budget.
 */
class WorkerQueueWaitRetryBudgetTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, (key, n, now) -> n == 1 ? Reply.status(503) : Reply.status(201));

  @Test
  void attemptsThatWaitedTooLongForAnOutboxWorkerDoNotSpendTheHostsRetryBudget() throws Exception {
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
        .circuitBreaker(CircuitBreakerSettings.disabled())
        .retryBudget(RetryBudget.tokenBucket(10, 5, 1, 0.0, time.clock()))
        .leaseFor(Duration.ofSeconds(20))  // attempts are not sent after 10 s in the workers' queue
        .build();
    // The app's worker pool, busy: its queue runs only when the test says so.
    ArrayDeque<Runnable> queue = new ArrayDeque<>();
    Executor busyWorkers = queue::add;
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .workers(busyWorkers).maxInFlight(12).register("create-order", host).build().start();
    List<CompletableFuture<Outcome>> handles = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      handles.add(outbox.submit(Operation.builder("create-order", Requests.order("{\"n\":" + i + "}")).build()));
    }
    time.advance(Duration.ZERO);
    assertEquals(12, queue.size(), "every delivery's attempt is queued for a worker");
    time.advance(Duration.ofSeconds(11));  // the workers are busy with slow, healthy answers meanwhile
    while (!queue.isEmpty()) {
      queue.poll().run();  // each finds it waited past half the lease: not sent
    }
    time.advance(Duration.ofSeconds(1));  // the deliveries' next attempts (backoff), queued again
    assertEquals(0, host.totalAttempts(), "nothing reached the host");

    // The app's own inline call to that healthy host: a 503, then a retry.
    CompletableFuture<Outcome> inline = idem.executeAsync(
        Operation.builder("create-order", Requests.order("{\"inline\":1}")).build(), host);
    time.advance(Duration.ofSeconds(5));

    assertEquals(2, host.totalAttempts(), "the inline call's retry of a 503 was held back: the host's retry budget"
        + " was spent on outbox attempts that never left the process (inline: " + inline + ")");
    assertTrue(inline.isDone() && !inline.isCompletedExceptionally(), "inline: " + inline);
    outbox.close();
  }
}
