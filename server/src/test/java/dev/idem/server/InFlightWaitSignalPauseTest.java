package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.spi.Scheduler;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.StoredResponse;
import dev.idem.server.support.ForwardingStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: a pause the key's signal
 * woke counts only the time the clock saw.
 *
 * <p>Review of 4248e6d3: the in-flight wait now ends when the pauses it <em>asked for</em> add up to
 * {@code inFlightWait}, whatever the clock says, and every pause is counted in full before it is
 * taken. But a pause ends early when this process signals the key (that is its point), and the guard
 * signals the key also when a completion's first store call fails: the claim stays in flight, its
 * result is written by {@code CompletionRetries} moments later, and the woken waiter goes back to
 * waiting. The pause it was woken from still counts in full, so the wait ends well before
 * {@code inFlightWait}: here a repeat with {@code inFlightWait} 2 s is answered 409 after 1.2 s, while
 * the first request's result lands at 1.475 s; with the wait it was configured to have, it would
 * have been replayed. The client instead backs off, and (409 being retried as "in flight") turns a
 * prompt replay into a delayed one or, once out of attempts, an UNCERTAIN operation.
 *
 * <p>Deterministic: one thread. The scheduler is virtual: a poll's pause runs the timed tasks
 * (renewals, completion retries) due before its end, advancing the clock to each, and ends early
 * when one of them lands the completion (which signals the key); the completion of the first request
 * is called inside the repeat's sixth pause (at 775 ms), as another request thread would.
 */
class InFlightWaitSignalPauseTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private Instant now = T0;
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
      return now;
    }
  };

  private record Timed(Instant due, long seq, Runnable task, CompletableFuture<Void> future) { }

  private final PriorityQueue<Timed> queue =
      new PriorityQueue<>(Comparator.comparing(Timed::due).thenComparingLong(Timed::seq));
  private long seq;
  private boolean waiting;
  private boolean busy; // running a timed task or the first request's completion: what it schedules is queued
  private int polls;
  private boolean landed; // a completion reached the store: the guard signals the key
  private final List<Duration> pollDelays = new ArrayList<>();
  private Admission.Proceed first;
  private final AtomicInteger completeCalls = new AtomicInteger();

  /** The store fails the first three completions (a short blip), then stores. */
  private final ForwardingStore store = new ForwardingStore() {
    @Override
    public boolean complete(RecordId id, long generation, String owner, Instant at, StoredResponse response,
        Instant expiresAt) {
      if (completeCalls.incrementAndGet() <= 3) {
        throw new IdempotencyStoreException("connection reset", null);
      }
      boolean done = real.complete(id, generation, owner, at, response, expiresAt);
      landed = true;
      return done;
    }
  };

  private final Scheduler scheduler = new Scheduler() {
    @Override
    public Future<?> schedule(Runnable task, Duration delay) {
      CompletableFuture<Void> f = new CompletableFuture<>();
      Timed t = new Timed(now.plus(delay), seq++, task, f);
      if (!waiting || busy) {
        queue.add(t);
        return f;
      }
      // A poll of the waiting repeat.
      polls++;
      pollDelays.add(delay);
      if (polls == 6) {
        // Meanwhile, on the first request's thread: its handler answers, and the store blips.
        busy = true;
        try {
          assertThrows(IdempotencyStoreException.class, () -> guard.complete(first.claim(),
              new CapturedResponse(201, Map.of(), "{\"order\":1}".getBytes(StandardCharsets.UTF_8))));
        } finally {
          busy = false;
        }
        queue.add(t); // the guard signalled the key: the pause ends at once, its tick not reached
        return f;
      }
      while (!queue.isEmpty() && !queue.peek().due().isAfter(t.due())) {
        Timed next = queue.poll();
        if (next.future().isCancelled()) {
          continue;
        }
        now = next.due();
        busy = true;
        try {
          next.task().run();
        } finally {
          busy = false;
        }
        if (landed) {
          landed = false;
          queue.add(t); // signalled: the pause ends now
          return f;
        }
      }
      now = t.due();
      task.run();
      f.complete(null);
      return f;
    }
  };

  private final IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(clock).scheduler(scheduler)
      .storeExecutor(Runnable::run).purgeInterval(null).inFlightWait(Duration.ofSeconds(2)).build();

  @AfterEach
  void close() {
    guard.close();
  }

  private static GuardRequest order() {
    return new GuardRequest("POST", "/orders", null, "application/json", List.of("k1"), "alice",
        GuardRequest.BodyReader.of("{\"sku\":\"A1\"}".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void aSignalThatWakesAPauseEarlyDoesNotShortenTheWait() throws Exception {
    first = assertInstanceOf(Admission.Proceed.class, guard.admit(order()));

    waiting = true;
    Admission.Respond repeat = assertInstanceOf(Admission.Respond.class, guard.admit(order()));
    waiting = false;

    Duration held = Duration.between(T0, now);
    assertTrue(completeCalls.get() >= 1, "the first request's completion was never called");
    assertEquals(Admission.Reason.REPLAY, repeat.reason(),
        "inFlightWait is 2 s and the first request's result was stored at 1.475 s, but the repeat was answered "
            + repeat.reason() + " " + repeat.response().status() + " after " + held + " (pauses asked: " + pollDelays
            + ", store completions tried: " + completeCalls.get() + ")");
  }
}
