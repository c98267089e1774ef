package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.spi.Scheduler;
import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.support.ForwardingStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: the wait also counts its own pauses ({@code IdempotencyGuard.admit}).
 *
 * <p>A repeat that finds its key in flight waits at most {@code inFlightWait} (documented: "keep the
 * wait to a few seconds", since the waiting repeat holds its request thread). The wait's end is
 * measured only on the wall clock ({@code deadline = started + wait}, compared with
 * {@code clock.instant()}), while its pauses are timed on the scheduler. When the wall clock steps
 * back (an NTP step, a restored VM) during the wait, the deadline moves away by the size of the
 * step, and the repeat keeps polling until {@code MAX_ROUNDS} (400 polls, about 1 s apart): some
 * 395 s of request-thread time instead of 2 s. {@link CompletionRetries} and the metrics binder
 * already guard against exactly this (they count the scheduler's pauses too); the admit loop does not.
 *
 * <p>Deterministic: the scheduler runs each poll tick at once and records its delay; the clock is
 * set back by one hour inside the repeat's first store call. Another guard on the same store (an
 * "other instance") holds the key in flight under a live lease.
 */
class InFlightWaitClockStepBackTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private final AtomicReference<Instant> wall = new AtomicReference<>(T0);
  private final Clock clock = new Clock() {
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
      return wall.get();
    }
  };
  private final AtomicBoolean stepBackOnNextClaim = new AtomicBoolean();
  private final AtomicInteger claims = new AtomicInteger();
  private final ForwardingStore store = new ForwardingStore() {
    @Override
    public ClaimAttempt claim(RecordId id, Fingerprint fingerprint, String owner, Instant now, Instant leaseUntil,
        Instant expiresAt) {
      claims.incrementAndGet();
      ClaimAttempt a = real.claim(id, fingerprint, owner, now, leaseUntil, expiresAt);
      if (stepBackOnNextClaim.compareAndSet(true, false)) {
        wall.set(wall.get().minus(Duration.ofHours(1))); // NTP steps the clock back during the wait
      }
      return a;
    }
  };
  /** The waiting guard's polls: each runs at once; its delay is what the request thread would wait. */
  private final List<Duration> pollDelays = new CopyOnWriteArrayList<>();
  private final Scheduler immediate = (task, delay) -> {
    pollDelays.add(delay);
    task.run();
    return CompletableFuture.completedFuture(null);
  };
  private final VirtualTime otherTime = new VirtualTime(T0); // never advanced: the holder's renewals stay timed
  private final IdempotencyGuard holder = IdempotencyGuard.builder(store).clock(clock)
      .scheduler(otherTime.scheduler()).storeExecutor(Runnable::run).purgeInterval(null).build();
  private final IdempotencyGuard waiter = IdempotencyGuard.builder(store).clock(clock).scheduler(immediate)
      .storeExecutor(Runnable::run).purgeInterval(null).inFlightWait(Duration.ofSeconds(2)).build();

  @AfterEach
  void close() {
    holder.close();
    waiter.close();
  }

  private static GuardRequest order() {
    return new GuardRequest("POST", "/orders", null, "application/json", List.of("k1"), "alice",
        GuardRequest.BodyReader.of("{\"sku\":\"A1\"}".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void aRepeatWaitsNoLongerThanInFlightWaitWhenTheClockStepsBack() throws Exception {
    assertInstanceOf(Admission.Proceed.class, holder.admit(order())); // the first request runs elsewhere
    claims.set(0);
    stepBackOnNextClaim.set(true);

    Admission.Respond busy = assertInstanceOf(Admission.Respond.class, waiter.admit(order()));

    assertEquals(Admission.Reason.IN_FLIGHT, busy.reason());
    Duration held = pollDelays.stream().reduce(Duration.ZERO, Duration::plus);
    assertTrue(held.compareTo(Duration.ofSeconds(2)) <= 0,
        "inFlightWait is 2 s, but after the clock stepped back the repeat held its request thread for " + held
            + " of polls (" + claims.get() + " reads of the store)");
  }
}
