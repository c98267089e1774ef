package dev.idem.core.outbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.Outcome;
import dev.idem.core.event.IdemEvent;
import dev.idem.core.support.FakeHost;
import dev.idem.core.support.Requests;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: an attempt not sent for the client's own reason (NotSentLocally) says nothing about its host.
 *
 * <p>The outbox's worker pool for synchronous transports is busy (slow but healthy answers, fewer
 * workers than maxInFlight): attempts queued for a worker for half the lease or longer are not sent
 * (WorkerPoolTransport), with RequestNotSentException. The attempt loop classifies that SAFE ("not
 * sent"), and HostGuard.healthOf(SAFE) reports the host DOWN to its circuit breaker, as if the host
 * had refused the connection. CircuitBreakerSettings: "the breaker judges whether the host is
 * reachable and serving"; its failures are "a request that never reached the host (connection
 * refused, DNS, TLS handshake, connect timeout)". Here the host was never tried: the client's own
 * queue was full. Ten such attempts open the host's breaker, which then refuses every call to that
 * host, the app's inline calls included, though the host answered every request it was sent.
 */
class WorkerQueueWaitBreakerTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryJournal journal = new InMemoryJournal();
  private final FakeHost host = new FakeHost(time, FakeHost.always(201));

  @Test
  void attemptsThatWaitedTooLongForAnOutboxWorkerDoNotOpenTheHostsCircuitBreaker() throws Exception {
    List<IdemEvent.BreakerStateChanged> breaker = new CopyOnWriteArrayList<>();
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
        .leaseFor(Duration.ofSeconds(20))  // attempts are not sent after 10 s in the workers' queue
        .listener(e -> {
          if (e instanceof IdemEvent.BreakerStateChanged b) {
            breaker.add(b);
          }
        }).build();
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

    assertEquals(0, host.totalAttempts(), "nothing reached the host");
    // The app's own inline call to that healthy host, right after:
    CompletableFuture<Outcome> inline = idem.executeAsync(
        Operation.builder("create-order", Requests.order("{\"inline\":1}")).build(), host);
    time.advance(Duration.ZERO);
    assertEquals(1, host.totalAttempts(), "an inline call to a host that answered everything it was sent is held"
        + " back by its breaker (" + breaker + "; inline call done: " + inline.isDone() + ")");
    assertEquals(List.of(), breaker, "the host's breaker changed state although the host was never tried:"
        + " only the outbox's own worker queue was full");
    outbox.close();
  }

  /**
   * Regression test: the same attempts were journaled and reported "not sent; the target is
   * unreachable", which sends an operator to look at a host that answered everything it was sent.
   * The reason names the client's own workers instead.
   */
  @Test
  void anAttemptThatWaitedTooLongForAWorkerIsNotReportedAsAnUnreachableTarget() throws Exception {
    List<IdemEvent.RetryScheduled> retries = new CopyOnWriteArrayList<>();
    IdempotentExecutor idem = IdempotentExecutor.builder().journal(journal).clock(time.clock())
        .scheduler(time.scheduler()).asyncExecutor(Runnable::run).sleeper(time.sleeper()).random(() -> 0.5)
        .leaseFor(Duration.ofSeconds(20)).listener(e -> {
          if (e instanceof IdemEvent.RetryScheduled r) {
            retries.add(r);
          }
        }).build();
    // Every attempt waits 11 s for a worker (past half the lease), until the round ends.
    ArrayDeque<Map.Entry<Instant, Runnable>> queue = new ArrayDeque<>();
    OutboxDispatcher outbox = OutboxDispatcher.builder(idem).clock(time.clock()).scheduler(time.scheduler())
        .workers(r -> queue.add(Map.entry(time.now(), r))).register("create-order", host).build().start();
    Operation op = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    outbox.submit(op);
    time.advance(Duration.ZERO);
    for (int second = 0; second < 600 && !roundEnded(op); second++) {
      time.advance(Duration.ofSeconds(1));
      while (!queue.isEmpty() && !queue.peek().getKey().plusSeconds(11).isAfter(time.now())) {
        queue.poll().getValue().run();
      }
    }

    assertEquals(0, host.totalAttempts());
    String reason = journal.find(op.id()).orElseThrow().reason();
    assertTrue(reason != null && reason.contains("this client's own") && !reason.contains("unreachable"),
        "journaled reason: " + reason);
    assertTrue(!retries.isEmpty() && retries.stream().noneMatch(r -> r.reason().contains("unreachable")),
        "events: " + retries);
    outbox.close();
  }

  /** The round's last attempt was not sent: its reason says why the operation waits. */
  private boolean roundEnded(Operation op) throws Exception {
    String reason = journal.find(op.id()).orElseThrow().reason();
    return reason != null && reason.contains(";");
  }
}
