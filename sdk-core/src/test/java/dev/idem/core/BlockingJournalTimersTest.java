package dev.idem.core;

import static dev.idem.core.support.ScriptedTransport.hold;
import static dev.idem.core.support.ScriptedTransport.status;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.AttemptTimeoutException;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.testing.VirtualTime;
import dev.idem.core.support.Harness;
import dev.idem.core.support.Requests;
import dev.idem.core.support.ScriptedTransport;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 24, "threads that belong to someone": the claim after a backoff used to run on the
 * scheduler's thread, a single JVM-wide {@code idem-scheduler}, so one journal stuck in that claim
 * (an fsync, a 10 s SQLite busy wait) held every backoff and attempt timeout of every executor.
 * Now timers only hand work to the executor's own pool: another executor's timers fire on time.
 */
class BlockingJournalTimersTest {
  private static final Duration LONG = Duration.ofSeconds(10);

  private final CountDownLatch journalMayGoOn = new CountDownLatch(1);
  private final CountDownLatch blockedInClaim = new CountDownLatch(1);
  private final AtomicReference<String> blockedThread = new AtomicReference<>();
  private final ExecutorService firstPool = Executors.newSingleThreadExecutor(r -> new Thread(r, "first-pool"));

  /** A journal whose second claim (the retry after the backoff) blocks until the test lets it go. */
  private final ForwardingJournal blockingOnRetry = new ForwardingJournal(new InMemoryJournal()) {
    private final AtomicInteger claims = new AtomicInteger();

    @Override
    public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
        throws IdempotencyException {
      if (claims.incrementAndGet() == 2) {
        blockedThread.set(Thread.currentThread().getName());
        blockedInClaim.countDown();
        try {
          journalMayGoOn.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return super.claim(id, owner, now, leaseFor);
    }
  };

  @AfterEach
  void release() {
    journalMayGoOn.countDown();
    firstPool.shutdownNow();
  }

  @Test
  void aJournalStuckOnOneExecutorsRetryDelaysNoTimerOfAnotherOnTheSameScheduler() throws Exception {
    VirtualTime time = new VirtualTime();
    Instant t0 = time.now();
    // Two executors on one scheduler, as two executors sharing the app's ScheduledExecutorService
    // (or, before, the JVM-wide idem-scheduler) would be.
    IdempotentExecutor stuck = IdempotentExecutor.builder().journal(blockingOnRetry).retryPolicy(Harness.POLICY)
        .clock(time.clock()).scheduler(time.scheduler()).asyncExecutor(firstPool).random(() -> 0.5).build();
    InMemoryJournal otherJournal = new InMemoryJournal();
    IdempotentExecutor other = IdempotentExecutor.builder().journal(otherJournal)
        .retryPolicy(Harness.POLICY.toBuilder().attemptTimeout(Duration.ofSeconds(1)).build())
        .clock(time.clock()).scheduler(time.scheduler()).asyncExecutor(Runnable::run).random(() -> 0.5).build();

    ScriptedTransport first = new ScriptedTransport(time).then(status(503), status(201));
    Operation op1 = Operation.builder("create-order", Requests.order("{\"n\":1}")).build();
    CompletableFuture<Outcome> f1 = stuck.executeAsync(op1, first);  // 503, retry due at t0 + 100 ms

    // The other's first attempt never answers: its 1 s attempt timeout must fire, then a 100 ms
    // backoff, a 503, a 200 ms backoff, and a 201.
    ScriptedTransport second = new ScriptedTransport(time)
        .then(hold(new CompletableFuture<>()), status(503), status(201));
    Operation op2 = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
    CompletableFuture<Outcome> f2 = other.executeAsync(op2, second);

    // Before: the retry's claim ran right here, on the thread that runs the timers, and never returned.
    assertTimeoutPreemptively(LONG, () -> time.advance(Duration.ofSeconds(2)),
        "a journal stuck in one executor's claim held the timers of the other");

    assertEquals(201, f2.get(0, TimeUnit.SECONDS).response().status());
    List<ScriptedTransport.Sent> sent = second.sent();
    assertEquals(List.of(t0, t0.plusMillis(1100), t0.plusMillis(1300)), sent.stream().map(ScriptedTransport.Sent::at)
        .toList(), "the attempt timeout and both backoffs fired on time");
    assertEquals(1, sent.stream().map(ScriptedTransport.Sent::key).distinct().count(), "one key on every attempt");
    OperationRecord r2 = otherJournal.find(op2.id()).orElseThrow();
    assertEquals(OperationState.SUCCEEDED, r2.state());
    assertEquals(AttemptTimeoutException.class.getName(), r2.attempts().get(0).exceptionClass());
    assertEquals(Classification.AMBIGUOUS, r2.attempts().get(0).classification());

    // The stuck executor is still in its claim, on its own pool's thread, not the scheduler's.
    assertTrue(blockedInClaim.await(LONG.toSeconds(), TimeUnit.SECONDS));
    assertEquals("first-pool", blockedThread.get());
    assertFalse(f1.isDone());
    assertEquals(1, first.count());

    journalMayGoOn.countDown();
    assertEquals(201, f1.get(LONG.toSeconds(), TimeUnit.SECONDS).response().status());
    assertEquals(2, first.count());
    assertEquals(first.sent().get(0).key(), first.sent().get(1).key());
    assertEquals(OperationState.SUCCEEDED, blockingOnRetry.find(op1.id()).orElseThrow().state());
  }

  @Test
  void twoExecutorsOwnSchedulersAreIndependent() throws Exception {
    // Real threads and the real clock: each executor makes its own scheduler and pool. Latches and
    // futures, not sleeps, order the test; the delays are short so that it runs quickly.
    RetryPolicy quick = RetryPolicy.builder().maxAttempts(3).baseDelay(Duration.ofMillis(1))
        .maxDelay(Duration.ofMillis(1)).jitter(Jitter.NONE).build();
    VirtualTime labels = new VirtualTime();  // only stamps the scripted attempts
    try (IdempotentExecutor stuck = IdempotentExecutor.builder().journal(blockingOnRetry).retryPolicy(quick).build();
        IdempotentExecutor other = IdempotentExecutor.builder().retryPolicy(
            quick.toBuilder().attemptTimeout(Duration.ofMillis(50)).build()).build()) {
      ScriptedTransport first = new ScriptedTransport(labels).then(status(503), status(201));
      CompletableFuture<Outcome> f1 = stuck.executeAsync(
          Operation.builder("create-order", Requests.order("{\"n\":1}")).build(), first);
      assertTrue(blockedInClaim.await(LONG.toSeconds(), TimeUnit.SECONDS), "the retry reached the journal");

      // While that claim is stuck: the other's attempt timeout fires, then its backoff, then it succeeds.
      ScriptedTransport second = new ScriptedTransport(labels)
          .then(hold(new CompletableFuture<>()), status(503), status(201));
      Operation op2 = Operation.builder("create-order", Requests.order("{\"n\":2}")).build();
      CompletableFuture<Outcome> f2 = other.executeAsync(op2, second);
      assertEquals(201, f2.get(LONG.toSeconds(), TimeUnit.SECONDS).response().status(),
          "the other executor's timers fired while the first one's journal was stuck");
      assertEquals(3, second.count());
      assertEquals(1, second.sent().stream().map(ScriptedTransport.Sent::key).distinct().count());
      assertEquals(OperationState.SUCCEEDED, other.find(op2.id()).orElseThrow().state());

      assertFalse(f1.isDone());
      assertTrue(blockedThread.get().startsWith("idem-async-"), "claimed on " + blockedThread.get());
      journalMayGoOn.countDown();
      assertEquals(201, f1.get(LONG.toSeconds(), TimeUnit.SECONDS).response().status());
      assertEquals(first.sent().get(0).key(), first.sent().get(1).key());
    }
  }
}
