package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.Scheduler;
import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.CompletionResult;
import dev.idem.server.support.ForwardingStore;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The guard's lease renewals and purge job on its store pool (8997cc9), when a renewal is slow, a
 * claim ends while its renewal waits in the pool's queue, a listener throws, or the guard is closed
 * from one of its own threads.
 * Time is virtual; store calls that wait do so on the guard's real store threads, and the test
 * waits for them on latches with a timeout, never a sleep.
 */
class GuardBackgroundJobsTest {
  private static final long WAIT_SECONDS = 30;
  private static final RecordId A = new RecordId("alice", "POST /provision", "k-a");

  private final VirtualTime time = new VirtualTime();
  private final SlowStore store = new SlowStore();
  // Counts the tasks the guard times, so that the test moves time on only after a renewal's next
  // turn was timed (on the store thread).
  private final Semaphore scheduled = new Semaphore(0);
  private final Scheduler scheduler = (task, delay) -> {
    Future<?> f = time.scheduler().schedule(task, delay);
    scheduled.release();
    return f;
  };
  private IdempotencyGuard guard;

  @AfterEach
  void tearDown() {
    store.proceed.countDown();
    if (guard != null) {
      guard.close();
    }
  }

  /**
   * A renewal that waited 25 s inside the store (for a connection of the app's pool: Hikari waits
   * up to 30 s by default; a row lock) but then succeeded wrote a lease from the instant it
   * started, 10 s + 30 s = 40 s, while the guard times the next renewal 10 s after the call
   * returned (45 s). From 40 s to 45 s the lease of a handler that still runs is expired and the
   * claim reports nothing lost: a client's retry takes it over and runs the handler a second time.
   */
  @Test
  void aRenewalThatWaitedInTheStoreLeavesNoGapInTheLease() throws Exception {
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(scheduler).purgeInterval(null)
        .build();
    Admission.Proceed a = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k-a")));
    store.slowRenewal = true;
    scheduled.drainPermits();

    time.advance(Duration.ofSeconds(10)); // the first renewal is handed to the store pool
    assertTrue(store.entered.await(WAIT_SECONDS, TimeUnit.SECONDS), "the renewal reached the store");
    time.jump(Duration.ofSeconds(25)); // it waits 25 s for a connection or a lock, then succeeds
    store.proceed.countDown();
    assertTrue(scheduled.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS), "the next renewal is timed");
    assertFalse(a.claim().leaseLost(), "the renewal succeeded: the guard believes the lease is safe");

    time.advance(Duration.ofSeconds(6)); // 41 s: the handler still runs
    Instant leaseUntil = store.find(A).orElseThrow().leaseUntil();
    assertTrue(leaseUntil.isAfter(time.now()),
        "the lease of a claim whose handler still runs, and whose every renewal succeeded, ran out at "
            + leaseUntil + " (now " + time.now() + "): the renewal wrote now+30 s from the instant it started,"
            + " and the next one is timed 10 s after it returned");
    Admission retry = guard.admit(post("k-a"));
    assertInstanceOf(Admission.Respond.class, retry,
        "the client's retry took over the claim of a handler that still runs (every renewal succeeded),"
            + " and runs the handler a second time: " + retry);
  }

  /** A renewal that took 4 s is followed by the next 10 s after it started, 6 s after it ended. */
  @Test
  void theNextRenewalIsTimedFromTheStartOfTheLastOne() throws Exception {
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler())
        .storeExecutor(Runnable::run).purgeInterval(null).build();
    assertInstanceOf(Admission.Proceed.class, guard.admit(post("k-a")));
    store.duringRenewal = () -> time.jump(Duration.ofSeconds(4));

    time.advance(Duration.ofSeconds(10)); // starts at 10 s, writes 40 s, returns at 14 s
    assertEquals(VirtualTime.DEFAULT_START.plusSeconds(40), store.find(A).orElseThrow().leaseUntil());
    List<Duration> delays = time.scheduledDelays();
    assertEquals(Duration.ofSeconds(6), delays.get(delays.size() - 1), "the next turn, 20 s, is 6 s away");
  }

  /**
   * A {@link GuardListener} that closes the guard when the purge fails (a health check that stops
   * the app, a test harness) runs on the guard's own store thread. close() then waits 5 s for the
   * store pool to end, which cannot happen while its caller is one of the pool's threads, logs that
   * a store call "still ran" and interrupts its own caller: the listener's next blocking step (the
   * store's close, which the docs say to call next) finds its thread interrupted.
   */
  @Test
  void closingTheGuardFromAListenerOnItsStoreThreadNeitherWaitsForItselfNorInterruptsIt() throws Exception {
    store.failPurge = true;
    AtomicBoolean interruptedAfterClose = new AtomicBoolean();
    CountDownLatch listenerDone = new CountDownLatch(1);
    GuardListener closeOnPurgeFailure = event -> {
      if (event instanceof GuardEvent.PurgeFailed) {
        guard.close();
        interruptedAfterClose.set(Thread.currentThread().isInterrupted());
        listenerDone.countDown();
      }
    };
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(scheduler)
        .purgeInterval(Duration.ofMinutes(10)).listener(closeOnPurgeFailure).build();

    time.advance(Duration.ofMinutes(10)); // the purge runs on the guard's store pool, and fails
    assertTrue(listenerDone.await(WAIT_SECONDS, TimeUnit.SECONDS), "the listener heard the failed purge");
    assertFalse(interruptedAfterClose.get(),
        "close() called on the guard's own store thread (from a listener) waited for its own pool to"
            + " end, then interrupted the thread it was called on, as if it were a hung store call");
  }

  /**
   * A store executor of the app's that refuses the purge (a bounded pool that is full) refuses it on
   * the guard's own scheduler thread, which hands the purge over; so a listener that closes the
   * guard on {@link GuardEvent.PurgeFailed} calls close() on that thread. close() stopped the
   * scheduler with shutdownNow(), which interrupts the scheduler's thread: its own caller's. The
   * listener's next blocking step (closing the store, as the docs say to do next) finds its thread
   * interrupted.
   */
  @Test
  void closingTheGuardFromAListenerOnItsSchedulerThreadNeitherWaitsForItselfNorInterruptsIt() throws Exception {
    CompletableFuture<IdempotencyGuard> built = new CompletableFuture<>();
    AtomicReference<String> heardOn = new AtomicReference<>();
    AtomicBoolean interruptedAfterClose = new AtomicBoolean(true);
    AtomicLong closeNanos = new AtomicLong(-1);
    CountDownLatch listenerDone = new CountDownLatch(1);
    GuardListener closeOnPurgeFailure = event -> {
      if (event instanceof GuardEvent.PurgeFailed) {
        heardOn.set(Thread.currentThread().getName());
        long start = System.nanoTime();
        built.join().close();
        closeNanos.set(System.nanoTime() - start);
        interruptedAfterClose.set(Thread.currentThread().isInterrupted());
        listenerDone.countDown();
      }
    };
    Executor full = call -> {
      throw new RejectedExecutionException("the app's store pool is full");
    };
    // No scheduler given: the guard's own thread is the one under test. The first purge is due at
    // once, and the test waits for it on a latch.
    guard = IdempotencyGuard.builder(store).storeExecutor(full).purgeInterval(Duration.ofNanos(1))
        .listener(closeOnPurgeFailure).build();
    built.complete(guard);

    assertTrue(listenerDone.await(WAIT_SECONDS, TimeUnit.SECONDS), "the listener heard the refused purge");
    assertEquals("idem-guard-leases", heardOn.get(), "heard on the guard's own scheduler thread");
    assertFalse(interruptedAfterClose.get(),
        "close() called on the guard's own scheduler thread (from a listener) interrupted the thread it was"
            + " called on: stopping the scheduler with shutdownNow() interrupts its own caller");
    assertTrue(closeNanos.get() < TimeUnit.SECONDS.toNanos(5),
        "close() on the scheduler's thread waited " + Duration.ofNanos(closeNanos.get()) + " for itself");
  }

  /**
   * An executor the app gave is the app's: the guard's close() neither shuts it down nor interrupts
   * a call it runs, so that one executor can serve several guards, each closed on its own.
   */
  @Test
  void closingTheGuardLeavesAStoreExecutorItWasGivenRunning() throws Exception {
    ThreadPoolExecutor apps = new ThreadPoolExecutor(1, 1, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>());
    try {
      store.hangKeysStartingWith = "hung-";
      guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(scheduler).storeExecutor(apps)
          .purgeInterval(null).build();
      assertInstanceOf(Admission.Proceed.class, guard.admit(post("hung-1")));
      time.advance(Duration.ofSeconds(10)); // its renewal hangs on the app's thread
      assertTrue(store.hungCalls.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS), "the renewal hangs");

      guard.close();
      assertFalse(apps.isShutdown(), "the guard shut down an executor the app gave it");
      assertFalse(store.hungCallInterrupted.get(), "the guard interrupted a call on the app's executor");
      store.proceed.countDown();
      assertEquals("still runs", apps.submit(() -> "still runs").get(WAIT_SECONDS, TimeUnit.SECONDS));
      assertEquals(1, store.hungCallsEnded.get(), "the app's executor ran the hung call to its end");
    } finally {
      apps.shutdownNow();
    }
  }

  /** Closed from its own store thread, the guard still waits for its other store calls to end. */
  @Test
  void closingFromAStoreThreadWaitsForTheOtherStoreCalls() throws Exception {
    store.failPurge = true;
    store.hangKeysStartingWith = "hung-";
    CountDownLatch closing = new CountDownLatch(1);
    CountDownLatch listenerDone = new CountDownLatch(1);
    AtomicInteger endedBeforeCloseReturned = new AtomicInteger(-1);
    GuardListener closeOnPurgeFailure = event -> {
      if (event instanceof GuardEvent.PurgeFailed) {
        closing.countDown();
        guard.close();
        endedBeforeCloseReturned.set(store.hungCallsEnded.get());
        listenerDone.countDown();
      }
    };
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(scheduler)
        .purgeInterval(Duration.ofMinutes(10)).listener(closeOnPurgeFailure).build();
    assertInstanceOf(Admission.Proceed.class, guard.admit(post("hung-1")));
    time.advance(Duration.ofSeconds(10)); // its renewal hangs on one store thread
    assertTrue(store.hungCalls.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS), "the renewal hangs");

    time.advance(Duration.ofMinutes(10)); // the purge fails on another, and its listener closes the guard
    assertTrue(closing.await(WAIT_SECONDS, TimeUnit.SECONDS), "the listener closes the guard");
    store.proceed.countDown(); // the hung renewal ends, on its own
    assertTrue(listenerDone.await(WAIT_SECONDS, TimeUnit.SECONDS), "close() returned");
    assertEquals(1, endedBeforeCloseReturned.get(), "close() waited for the other store call to end");
    assertFalse(store.hungCallInterrupted.get(), "and did not interrupt it, as it ended in time");
  }

  /**
   * The guard's store pool has an unbounded queue, which its comment bounds by "at most one entry
   * per live claim". When its 4 threads are held by hung calls (stalled PostgreSQL connections: the
   * driver's socket timeout is 0 by default, and the store sets no query timeout), every claim that
   * lives past one renewal period leaves its renewal in the queue, and completing the claim does
   * not take it out: finish() cancels only the scheduler's timer, which already fired. Each entry
   * holds the claim and its request body (up to 1 MiB) until a thread frees up, which for a hung
   * call is never, so the queue grows with traffic after the claims have ended.
   */
  @Test
  void aCompletedClaimLeavesNoRenewalQueuedOnTheStorePool() throws Exception {
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(scheduler).purgeInterval(null)
        .build();
    completeThreeBehindFourHungRenewals();

    // The guard's own pool, now held by its internal.StoreCalls.
    Field calls = IdempotencyGuard.class.getDeclaredField("storeCalls");
    calls.setAccessible(true);
    Object storeCalls = calls.get(guard);
    Field f = storeCalls.getClass().getDeclaredField("owned");
    f.setAccessible(true);
    ThreadPoolExecutor pool = (ThreadPoolExecutor) f.get(storeCalls);
    assertEquals(0, pool.getQueue().size(),
        "the store pool's queue still holds the renewals of claims that completed (each with its claim and"
            + " request body); behind hung calls they stay there for good, one more per claim that lived"
            + " past a renewal period");
  }

  /**
   * The same with a store pool the app gives (the Spring starter gives its guards one they share):
   * a claim that completes takes its queued renewal off that pool's queue too, or behind hung calls
   * the queue grows by one entry for every claim that lived past a renewal period.
   */
  @Test
  void aCompletedClaimLeavesNoRenewalQueuedOnAStorePoolTheAppGave() throws Exception {
    ThreadPoolExecutor given = new ThreadPoolExecutor(4, 4, 1, TimeUnit.MINUTES, new LinkedBlockingQueue<>());
    try {
      guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(scheduler).purgeInterval(null)
          .storeExecutor(given).build();
      completeThreeBehindFourHungRenewals();

      assertEquals(0, given.getQueue().size(),
          "the app's store pool still holds the renewals of claims that completed; behind hung calls they"
              + " stay there for good, one more per claim that lived past a renewal period");
    } finally {
      given.shutdownNow();
    }
  }

  /**
   * Four claims whose renewals hang on a pool's four threads, and three whose renewals queue
   * behind them and which then complete.
   */
  private void completeThreeBehindFourHungRenewals() throws Exception {
    store.hangKeysStartingWith = "hung-";
    for (int i = 1; i <= 4; i++) {
      assertInstanceOf(Admission.Proceed.class, guard.admit(post("hung-" + i)));
    }
    List<Admission.Proceed> ended = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      ended.add(assertInstanceOf(Admission.Proceed.class, guard.admit(post("done-" + i))));
    }
    time.advance(Duration.ofSeconds(10)); // 7 renewals handed over: 4 hang on the pool's 4 threads
    assertTrue(store.hungCalls.tryAcquire(4, WAIT_SECONDS, TimeUnit.SECONDS), "4 renewals hang");
    for (Admission.Proceed p : ended) {
      guard.complete(p.claim(), new CapturedResponse(201, Map.of(), "done".getBytes(StandardCharsets.UTF_8)));
    }
  }

  /**
   * The background purge keeps its schedule after an Error from the store (the code says why:
   * "Rethrown, the purge job would stop for good, unseen"), but not after an Error from the
   * listener that hears its events: hear() catches only RuntimeExceptions, so a listener that
   * throws a LinkageError on the purge events (a metrics binder built against another Micrometer,
   * say) ends backgroundPurge before schedulePurge, and no purge runs again; the store grows for
   * good, while lastPurgeFailure() reads like one failure that the next purge will clear.
   */
  @Test
  void aListenerThatThrowsAnErrorDoesNotStopThePurgeForGood() {
    AtomicInteger purges = new AtomicInteger();
    store.countPurges = purges;
    GuardListener brokenBinder = event -> {
      if (event instanceof GuardEvent.Purged || event instanceof GuardEvent.PurgeFailed) {
        throw new NoSuchMethodError("io.micrometer.core.instrument.Counter.increment(double)");
      }
    };
    // The app's executor logs and swallows what escapes a task, as an app's pool does.
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(scheduler)
        .purgeInterval(Duration.ofMinutes(10)).listener(brokenBinder)
        .storeExecutor(r -> {
          try {
            r.run();
          } catch (Error escaped) {
            // what a pool thread's uncaught-exception handler would print
          }
        })
        .build();

    time.advance(Duration.ofMinutes(10));
    assertEquals(1, purges.get(), "the first purge ran");
    time.advance(Duration.ofMinutes(10));
    time.advance(Duration.ofMinutes(10));
    assertEquals(3, purges.get(),
        "after a listener's Error on the first purge's event, the guard never purged again: records past"
            + " retention pile up for good (lastPurgeFailure(): " + guard.lastPurgeFailure() + ")");
  }

  /** A purge that deleted its records succeeded, whatever the listener that hears it throws. */
  @Test
  void aListenerThatThrowsOnPurgedIsNoFailedPurge() {
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler())
        .storeExecutor(Runnable::run).purgeInterval(Duration.ofMinutes(10)).listener(event -> {
          if (event instanceof GuardEvent.Purged) {
            throw new NoSuchMethodError("io.micrometer.core.instrument.Counter.increment(double)");
          }
        }).build();

    time.advance(Duration.ofMinutes(10));
    assertTrue(guard.lastPurgeFailure().isEmpty(), "the purge succeeded: " + guard.lastPurgeFailure());
  }

  /**
   * A handler that completes its claim at the moment a renewal of that claim is timing the next
   * one (after the guard checked that the claim had not finished, before it kept the new timer for
   * completion to cancel) leaves that timer live: completion cancels only the timer before it. The
   * live timer keeps the claim and its request body (up to 1 MiB) on the scheduler for one more
   * renewal period, and then hands a renewal to the store pool for a claim that has ended.
   */
  @Test
  void aClaimThatCompletesWhileItsNextRenewalIsTimedLeavesNoLiveTimer() throws Exception {
    AtomicReference<Runnable> whileTiming = new AtomicReference<>();
    Scheduler completingMeanwhile = (task, delay) -> {
      Runnable meanwhile = whileTiming.getAndSet(null);
      if (meanwhile != null) {
        meanwhile.run(); // the handler's thread, at this very moment
      }
      return time.scheduler().schedule(task, delay);
    };
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(completingMeanwhile)
        .storeExecutor(Runnable::run).purgeInterval(null).build();
    Admission.Proceed a = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k-a")));
    whileTiming.set(() -> assertEquals(CompletionResult.STORED,
        guard.complete(a.claim(), new CapturedResponse(201, Map.of(), "done".getBytes(StandardCharsets.UTF_8)))));

    time.advance(Duration.ofSeconds(10)); // the first renewal runs, and times the next as the claim completes
    assertEquals(null, whileTiming.get(), "the claim completed while its next renewal was timed");
    assertEquals(0, time.pendingTasks(),
        "a renewal timer of a claim that completed is still live, holding the claim and its body");
  }

  /**
   * After one renewal failed (a store blip) and the next one succeeded, the lease is held again and
   * complete() stores the result, yet leaseLost() still says the lease is lost, and its Javadoc
   * says that completion "will then be refused": a handler that checks it before committing its
   * effect gives up a claim it holds, and an operator's metrics count a lost lease that was not.
   */
  @Test
  void aRenewalThatSucceedsAfterAFailedOneClearsLeaseLost() throws Exception {
    guard = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler())
        .storeExecutor(Runnable::run).purgeInterval(null).build();
    Admission.Proceed a = assertInstanceOf(Admission.Proceed.class, guard.admit(post("k-a")));
    store.failNextRenewal = true;

    time.advance(Duration.ofSeconds(10)); // the renewal fails: the lease may run out
    assertTrue(a.claim().leaseLost(), "the failed renewal is known to the claim");
    time.advance(Duration.ofSeconds(10)); // the next one succeeds: the lease is held again
    assertEquals(time.now().plusSeconds(30), store.find(A).orElseThrow().leaseUntil());
    assertFalse(a.claim().leaseLost(),
        "the lease was renewed after the failure, yet the claim still reports it lost");
    assertEquals(CompletionResult.STORED,
        guard.complete(a.claim(), new CapturedResponse(201, Map.of(), "done".getBytes(StandardCharsets.UTF_8))));
  }

  private static GuardRequest post(String key) {
    return new GuardRequest("POST", "/provision", null, "application/json", List.of(key), "alice",
        GuardRequest.BodyReader.of("{}".getBytes(StandardCharsets.UTF_8)));
  }

  /** The in-memory store; a renewal can be made to wait inside the store, and the purge to fail. */
  private static final class SlowStore extends ForwardingStore {
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch proceed = new CountDownLatch(1);
    volatile boolean slowRenewal;
    volatile boolean failPurge;
    volatile boolean failNextRenewal;
    volatile Runnable duringRenewal;
    volatile AtomicInteger countPurges;
    volatile String hangKeysStartingWith;
    final Semaphore hungCalls = new Semaphore(0);
    final AtomicInteger hungCallsEnded = new AtomicInteger();
    final AtomicBoolean hungCallInterrupted = new AtomicBoolean();

    @Override
    public boolean renew(RecordId id, long generation, String owner, Instant now, Instant leaseUntil) {
      if (hangKeysStartingWith != null && id.key().startsWith(hangKeysStartingWith)) {
        hungCalls.release();
        try {
          proceed.await(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          hungCallInterrupted.set(true);
          Thread.currentThread().interrupt();
          throw new IdempotencyStoreException("interrupted", e);
        } finally {
          hungCallsEnded.incrementAndGet();
        }
        return false;
      }
      Runnable during = duringRenewal;
      if (during != null) {
        during.run();
      }
      if (failNextRenewal) {
        failNextRenewal = false;
        throw new IdempotencyStoreException("the renewal's UPDATE failed", null);
      }
      if (slowRenewal) {
        slowRenewal = false;
        entered.countDown();
        try {
          if (!proceed.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
            throw new IdempotencyStoreException("the test never let the renewal proceed", null);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IdempotencyStoreException("interrupted", e);
        }
      }
      return real.renew(id, generation, owner, now, leaseUntil);
    }

    @Override
    public int purgeExpired(Instant now) {
      if (countPurges != null) {
        countPurges.incrementAndGet();
      }
      if (failPurge) {
        throw new IdempotencyStoreException("the purge's DELETE failed", null);
      }
      return real.purgeExpired(now);
    }
  }
}
