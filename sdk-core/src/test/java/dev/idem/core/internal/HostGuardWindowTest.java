package dev.idem.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.Classification;
import dev.idem.core.event.IdemEvent;
import dev.idem.core.host.CircuitBreakerSettings;
import dev.idem.core.host.RetryBudget;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The host breaker decides as a resilience4j breaker of the same settings fed every outcome: the
 * guard leaves out the successes that change nothing (a closed breaker whose window is full of
 * fast successes), and that must never show in what it admits or in the changes of state it
 * reports. Long seeded runs of healthy and failing phases, slow calls and lost responses. The
 * reference has the guard's slow-call setting (off), the one resilience4j setting that Idem's
 * {@link CircuitBreakerSettings} do not carry.
 */
class HostGuardWindowTest {
  private static final String HOST = "api.example.com:443";

  /** A clock moved by the test only. */
  private static final class TestClock extends Clock {
    Instant now = Instant.parse("2026-01-01T00:00:00Z");

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }

  private enum Step { FAST, SLOW, DOWN, LOST }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 42, 2026})
  void admitsAndChangesStateAsResilience4jFedEveryOutcome(long seed) {
    TestClock clock = new TestClock();
    CircuitBreakerSettings settings = CircuitBreakerSettings.builder().slidingWindowSize(10).minimumCalls(5)
        .failureRatePercent(50).openFor(Duration.ofSeconds(1)).halfOpenProbes(2).build();
    List<String> told = new ArrayList<>();
    HostGuard guard = new HostGuard(settings, RetryBudget.unlimited(), clock, e -> {
      if (e instanceof IdemEvent.BreakerStateChanged c) {
        told.add(c.from() + ">" + c.to());
      }
    });
    CircuitBreaker reference = CircuitBreaker.of("reference", CircuitBreakerConfig.custom()
        .failureRateThreshold(settings.failureRatePercent())
        .slidingWindowSize(settings.slidingWindowSize())
        .minimumNumberOfCalls(settings.minimumCalls())
        // The guard turns resilience4j's slow-call counting off (a 2xx is a success however long
        // it took): the reference does too, or it would judge SLOW steps by a rule the guard
        // does not have. SLOW steps stay, to show that a 61 s success is recorded as any other.
        .slowCallDurationThreshold(HostGuard.NEVER_SLOW)
        .slowCallRateThreshold(100)
        .waitDurationInOpenState(settings.openFor())
        .permittedNumberOfCallsInHalfOpenState(settings.halfOpenProbes())
        .clock(clock)
        .build());
    List<String> expected = new ArrayList<>();
    Random random = new Random(seed);
    boolean healthy = true;
    for (int i = 0; i < 20_000; i++) {
      if (random.nextInt(200) == 0) {
        healthy = !healthy;
      }
      clock.now = clock.now.plusMillis(random.nextInt(120));
      Step step = next(random, healthy);
      CircuitBreaker.State before = reference.getState();
      boolean permitted = reference.tryAcquirePermission();
      note(expected, before, reference.getState());
      assertEquals(permitted, guard.admit(HOST, false) == HostGuard.Refusal.NONE, "admission at step " + i);
      if (!permitted) {
        continue;
      }
      Duration took = step == Step.SLOW ? Duration.ofSeconds(61) : Duration.ofMillis(random.nextInt(50));
      before = reference.getState();
      switch (step) {
        case FAST, SLOW -> {
          reference.onSuccess(took.toNanos(), TimeUnit.NANOSECONDS);
          guard.record(HOST, Classification.SUCCESS, HostGuard.Health.UP, took, false);
        }
        case DOWN -> {
          reference.onError(took.toNanos(), TimeUnit.NANOSECONDS, new IOException("down"));
          guard.record(HOST, Classification.SAFE, HostGuard.Health.DOWN, took, false);
        }
        case LOST -> {
          reference.releasePermission();
          guard.record(HOST, Classification.AMBIGUOUS, HostGuard.Health.UNKNOWN, took, false);
        }
      }
      note(expected, before, reference.getState());
      assertEquals(expected, told, "changes of state after step " + i);
    }
  }

  private static Step next(Random random, boolean healthy) {
    int r = random.nextInt(1000);
    if (r < 3) {
      return Step.SLOW;
    }
    if (r < 20) {
      return Step.LOST;
    }
    return r < (healthy ? 25 : 700) ? Step.DOWN : Step.FAST;
  }

  private static void note(List<String> changes, CircuitBreaker.State was, CircuitBreaker.State now) {
    if (was != now) {
      changes.add(was + ">" + now);
    }
  }
}
