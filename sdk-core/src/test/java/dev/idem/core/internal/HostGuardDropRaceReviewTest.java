package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.event.IdemEvent;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The retired/last-used handshake only covers a caller that has not yet read the flag. A caller
 * that read it (flag clear, stamp written) and is inside resilience4j's onError -- the failure in
 * the window, the CLOSED-to-OPEN transition not yet swapped in -- is not covered: drop() re-checks
 * only the stamp and closed(), both unchanged, and removes the breaker. The opening failure then
 * lands in an orphan: the listener is told the host's breaker OPENED, yet the host is admitted by
 * a fresh breaker. Made deterministic with the injected clock: the caller is held in the clock
 * call of resilience4j's OpenState constructor, and the wall clock steps forward 11 minutes (an
 * NTP step or a VM resume), which is all the "idle" the cap sweep needs.
 */
class HostGuardDropRaceReviewTest {

  /** A clock that can be stepped, and that holds one chosen thread in the OpenState's clock call. */
  static final class HoldingClock extends Clock {
    volatile long millis = Instant.parse("2026-01-01T00:00:00Z").toEpochMilli();
    volatile Thread holdOn;
    final CountDownLatch held = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);

    @Override public ZoneId getZone() { return ZoneOffset.UTC; }
    @Override public Clock withZone(ZoneId zone) { return this; }
    @Override public long millis() { return instant().toEpochMilli(); }

    @Override public Instant instant() {
      if (Thread.currentThread() == holdOn && StackWalker.getInstance().walk(s -> s.anyMatch(
          f -> f.getClassName().endsWith("CircuitBreakerStateMachine$OpenState")))) {
        holdOn = null;
        held.countDown();
        try {
          release.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return Instant.ofEpochMilli(millis);
    }

    void advance(Duration d) { millis += d.toMillis(); }
  }

  @Test
  void anOpeningFailureRecordedWhileTheCapSweepDropsTheBreakerStillRefusesTheHost() throws Exception {
    HoldingClock clock = new HoldingClock();
    List<IdemEvent> events = new CopyOnWriteArrayList<>();
    CircuitBreakerSettings settings = CircuitBreakerSettings.builder().minimumCalls(2).slidingWindowSize(2)
        .openFor(Duration.ofHours(1)).build();
    HostGuard guard = new HostGuard(settings, RetryBudget.unlimited(), clock, events::add, 1);
    String flaky = "flaky.example.com:443";
    String busy = "busy.example.com:443";

    assertEquals(HostGuard.Refusal.NONE, guard.admit(flaky, false));
    guard.record(flaky, Classification.SAFE, HostGuard.Health.DOWN, Duration.ofMillis(5), false);   // 1 of 2
    assertEquals(HostGuard.Refusal.NONE, guard.admit(busy, false));
    clock.advance(Duration.ofSeconds(2));

    // The second failure: two of two, it opens flaky's breaker. Held inside the transition.
    assertEquals(HostGuard.Refusal.NONE, guard.admit(flaky, false));
    AtomicReference<Throwable> failed = new AtomicReference<>();
    Thread caller = new Thread(() -> {
      try {
        guard.record(flaky, Classification.SAFE, HostGuard.Health.DOWN, Duration.ofMillis(5), false);
      } catch (Throwable t) {
        failed.set(t);
      }
    });
    clock.holdOn = caller;
    caller.start();
    assertTrue(clock.held.await(10, TimeUnit.SECONDS), "caller never reached the OPEN transition");

    // The wall clock steps 11 minutes; busy stays in use; a new host brings the (cap) sweep.
    clock.advance(Duration.ofMinutes(11));
    guard.admit(busy, false);
    guard.admit("new.example.com:443", false);

    clock.release.countDown();
    caller.join(10_000);
    assertEquals(null, failed.get());

    assertTrue(events.stream().anyMatch(e -> e.toString().contains("OPEN")), "listener told: " + events);
    assertEquals(HostGuard.Refusal.BREAKER_OPEN, guard.admit(flaky, false),
        "the listener was told flaky's breaker opened, but its opening failure went into a dropped breaker"
            + " and the host is admitted by a fresh one; events " + events);
  }
}
