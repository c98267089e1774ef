package dev.idem.core.spi.poll;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.Scheduler;
import dev.idem.core.testing.VirtualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The poll loop the outbox and the webhook processor share, on its own: fake time throughout (the
 * one test of the loop's own thread waits on latches and a join, never a sleep). Each poll runs
 * {@link #body}, which the test sets; the poll times are read off the fake clock.
 */
class PollLoopTest {
  private static final Duration BASE = Duration.ofSeconds(1);
  private static final Duration MAX = Duration.ofSeconds(10);

  private final VirtualTime time = new VirtualTime();
  private final List<Duration> polls = new ArrayList<>();  // when each poll ran, since the start
  private final List<String> brokenWhere = new ArrayList<>();
  private Runnable body = () -> { };
  private PollLoop loop;

  private PollLoop loop() {
    loop = PollLoop.builder(PollLoopTest.class, "idem-test", () -> {
      polls.add(Duration.between(VirtualTime.DEFAULT_START, time.now()));
      body.run();
    }).clock(time.clock()).scheduler(time.scheduler()).interval(BASE).maxInterval(MAX)
        .onBroken((error, where) -> brokenWhere.add(where)).build();
    return loop;
  }

  private static List<Duration> seconds(long... s) {
    List<Duration> out = new ArrayList<>();
    for (long x : s) {
      out.add(Duration.ofSeconds(x));
    }
    return out;
  }

  @Test
  void pollsAtOnceOnStartThenEveryInterval() {
    loop().start();
    time.advance(Duration.ofMillis(3500));
    assertEquals(seconds(0, 1, 2, 3), polls);
    assertEquals(1, time.pendingTasks(), "exactly one next poll is scheduled");
  }

  @Test
  void aWakeBetweenPollsPollsNowNotAtTheInterval() {
    loop().start();
    time.advance(Duration.ZERO);
    time.advance(Duration.ofMillis(300));
    loop.wake();
    loop.wake();  // several wakes make one poll
    time.advance(Duration.ZERO);
    assertEquals(List.of(Duration.ZERO, Duration.ofMillis(300)), polls);
    assertEquals(1, time.pendingTasks(), "the poll due at 1 s was replaced, not doubled");
    time.advance(Duration.ofSeconds(1));
    assertEquals(List.of(Duration.ZERO, Duration.ofMillis(300), Duration.ofMillis(1300)), polls,
        "the next regular poll counts from the woken one");
  }

  @Test
  void aWakeDuringAPollRunsOneMorePollRightAfterIt() {
    loop();
    body = () -> {
      if (polls.size() == 1) {
        loop.wake();  // new work arrives while the first poll runs
        loop.wake();
      }
    };
    loop.start();
    time.advance(Duration.ZERO);
    assertEquals(seconds(0, 0), polls, "one more poll at once, not one per wake");
    time.advance(BASE);
    assertEquals(seconds(0, 0, 1), polls);
  }

  @Test
  void aWakeBeforeStartIsIgnoredAndStartTwiceIsRefused() {
    loop().wake();
    time.runUntilIdle();
    assertTrue(polls.isEmpty(), "not started: new work waits for start");
    loop.start();
    assertThrows(IllegalStateException.class, loop::start);
  }

  @Test
  void failingPollsBackOffDoublingUpToTheCapAndOneSuccessResetsTheInterval() {
    IllegalStateException down = new IllegalStateException("store down");
    body = () -> {
      if (polls.size() <= 6) {
        throw down;
      }
      loop.progressed();
    };
    loop().start();
    time.advance(Duration.ofSeconds(40));
    // Fails at 0, 2, 6, 14, 24, 34 (waits 2, 4, 8, 10, 10, 10); works at 44, then every second.
    assertEquals(seconds(0, 2, 6, 14, 24, 34), polls);
    assertTrue(loop.isOffline());
    assertEquals(MAX, loop.interval());
    assertEquals(Optional.of(down), loop.lastFailure(), "the failure is kept while it lasts");

    time.advance(Duration.ofSeconds(6));
    assertEquals(seconds(0, 2, 6, 14, 24, 34, 44, 45, 46), polls);
    assertFalse(loop.isOffline());
    assertEquals(BASE, loop.interval());
    assertEquals(Optional.empty(), loop.lastFailure(), "progress clears it");
  }

  @Test
  void progressAndNoProgressReportedFromOtherThreadsDriveTheIntervalToo() {
    loop().start();
    time.advance(Duration.ZERO);
    loop.noProgress("target down", null);  // a delivery ended without progress, after its poll
    time.advance(Duration.ofSeconds(1));
    assertEquals(seconds(0, 1), polls, "the poll already due keeps its time");
    time.advance(Duration.ofSeconds(2));
    assertEquals(seconds(0, 1, 3), polls, "then the doubled interval");
    loop.progressed();
    time.advance(Duration.ofSeconds(3));
    assertEquals(seconds(0, 1, 3, 5, 6), polls, "the poll due at 5 keeps its time; then the base interval");
  }

  @Test
  void aWakeDuringAFailingPollWaitsForTheBackoffInsteadOfHammeringTheStore() {
    loop();
    body = () -> {
      if (polls.size() == 1) {
        loop.wake();  // an event accepted while the store fails
      }
      throw new IllegalStateException("store down");
    };
    loop.start();
    time.advance(Duration.ofSeconds(3));
    assertEquals(seconds(0, 2), polls, "no poll at once after the failed one");
  }

  @Test
  void anErrorInAPollStopsTheLoopAndSurfacesOnTheNextCall() {
    Error error = new OutOfMemoryError("injected");
    loop();
    body = () -> {
      throw error;
    };
    loop.start();
    time.advance(Duration.ZERO);

    assertEquals(Optional.of(error), loop.brokenBy(), "kept for the owner to name in its next answer");
    assertEquals(Optional.of(error), loop.lastFailure());
    assertEquals(List.of("its poller"), brokenWhere, "the owner was told once");
    assertEquals(0, time.pendingTasks(), "no poll is scheduled any more");
    loop.wake();
    time.runUntilIdle();
    assertEquals(1, polls.size(), "a broken loop never polls again");
  }

  @Test
  void anErrorOnAnOwnersThreadStopsThePollsAndALaterSuccessDoesNotHideIt() {
    Error error = new StackOverflowError("injected");
    loop().start();
    time.advance(Duration.ZERO);
    loop.noProgress("store down", new IllegalStateException("down"));

    loop.broken(error, "a worker");
    loop.progressed();  // a poll that was already running ends well

    assertEquals(Optional.of(error), loop.lastFailure(), "the Error stays, whatever a running poll does next");
    assertTrue(loop.isOffline(), "and no recovery is announced");
    assertEquals(List.of("a worker"), brokenWhere);
    assertEquals(0, time.pendingTasks(), "the poll that was due is cancelled");
    loop.broken(new InternalError("second"), "another worker");
    assertSame(error, loop.brokenBy().orElseThrow(), "the first Error is the one reported");
    assertEquals(List.of("a worker", "another worker"), brokenWhere, "every Error is said");
  }

  @Test
  void closeCancelsTheNextPollAndAPollThatClosesTheLoopIsNotFollowedByAnother() {
    loop().start();
    time.advance(Duration.ZERO);
    loop.close();
    loop.close();  // idempotent
    assertEquals(0, time.pendingTasks());
    loop.wake();
    time.runUntilIdle();
    assertEquals(seconds(0), polls);

    PollLoop other = loop();
    polls.clear();
    body = other::close;  // the owner stops from inside its own poll
    other.start();
    time.runUntilIdle();
    assertEquals(1, polls.size());
    assertEquals(0, time.pendingTasks());
    assertThrows(IllegalStateException.class, other::start, "a closed loop does not start again");
  }

  @Test
  void closeStopsTheThreadTheLoopOwns() throws Exception {
    AtomicReference<Thread> poller = new AtomicReference<>();
    CountDownLatch polled = new CountDownLatch(1);
    PollLoop owning = PollLoop.builder(PollLoopTest.class, "idem-test", () -> {
      poller.set(Thread.currentThread());
      polled.countDown();
    }).build();
    owning.start();
    assertTrue(polled.await(10, TimeUnit.SECONDS), "the first poll runs at once on the loop's thread");
    Thread t = poller.get();
    assertEquals("idem-test-poller-1", t.getName());
    assertTrue(t.isDaemon(), "an app that forgets to close still exits");

    owning.close();

    t.join(10_000);
    assertFalse(t.isAlive(), "no thread of the loop outlives close");
  }

  /**
   * Regression test (2026-12-08): an Error from the scheduler as a wake took its poll (a
   * {@code ScheduledThreadPoolExecutor} that cannot start its next thread) went out of
   * {@code wake()} to the waking thread, and the loop kept the poll it had cancelled for the new
   * one as its next: it never polled again, and nothing said so. Now the loop is broken, visibly.
   */
  @Test
  void aSchedulerErrorOnAWakeBreaksTheLoopVisiblyAndIsNotThrownToTheWaker() {
    OutOfMemoryError noThread = new OutOfMemoryError("unable to create native thread");
    Scheduler virtual = time.scheduler();
    java.util.concurrent.atomic.AtomicBoolean fail = new java.util.concurrent.atomic.AtomicBoolean();
    loop = PollLoop.builder(PollLoopTest.class, "idem-test", () -> polls.add(Duration.between(
        VirtualTime.DEFAULT_START, time.now()))).clock(time.clock()).interval(BASE).maxInterval(MAX)
        .scheduler((task, delay) -> {
          if (fail.get()) {
            throw noThread;
          }
          return virtual.schedule(task, delay);
        }).onBroken((error, where) -> brokenWhere.add(where)).build();
    loop.start();
    time.advance(Duration.ZERO);
    fail.set(true);

    loop.wake();  // not thrown here

    assertSame(noThread, loop.brokenBy().orElse(null));
    assertEquals(List.of("its scheduler"), brokenWhere);
    time.advance(Duration.ofSeconds(30));
    assertEquals(List.of(Duration.ZERO), polls, "a broken loop polls no more");
  }

  @Test
  void aSchedulerErrorAtTheStartIsThrownAndBreaksTheLoop() {
    OutOfMemoryError noThread = new OutOfMemoryError("unable to create native thread");
    PollLoop l = PollLoop.builder(PollLoopTest.class, "idem-test", () -> { }).clock(time.clock())
        .scheduler((task, delay) -> {
          throw noThread;
        }).onBroken((error, where) -> brokenWhere.add(where)).build();
    assertSame(noThread, assertThrows(OutOfMemoryError.class, l::start));
    assertSame(noThread, l.brokenBy().orElse(null));
    assertEquals(List.of("its scheduler"), brokenWhere);
  }

  @Test
  void aSchedulerThatRefusesStopsThePollsWithoutThrowingIntoTheOwner() {
    List<Runnable> tasks = new ArrayList<>();
    java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();
    Scheduler refusing = (task, delay) -> {
      asked.incrementAndGet();
      if (!tasks.isEmpty()) {
        throw new RejectedExecutionException("shut down");
      }
      tasks.add(task);
      return new java.util.concurrent.CompletableFuture<Void>();
    };
    PollLoop l = PollLoop.builder(PollLoopTest.class, "idem-test", () -> { }).scheduler(refusing).build();
    l.start();
    tasks.get(0).run();  // its reschedule is refused: logged once, not thrown into the scheduler
    l.wake();  // not tried again, so not logged again
    assertEquals(1, tasks.size());
    assertEquals(2, asked.get(), "the start's poll and its refused successor, nothing after");
  }

  @Test
  void theBuilderRefusesAnIntervalThatIsNotPositiveOrAMaximumBelowIt() {
    assertThrows(IllegalArgumentException.class,
        () -> PollLoop.builder(PollLoopTest.class, "t", () -> { }).interval(Duration.ZERO).build());
    assertThrows(IllegalArgumentException.class, () -> PollLoop.builder(PollLoopTest.class, "t", () -> { })
        .interval(Duration.ofSeconds(2)).maxInterval(Duration.ofSeconds(1)).build());
  }
}
