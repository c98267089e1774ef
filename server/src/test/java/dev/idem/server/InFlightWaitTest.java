package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.CompletionResult;
import dev.idem.server.spi.IdempotencyStore;
import dev.idem.server.spi.StoredRecord;
import dev.idem.server.spi.StoredResponse;
import dev.idem.core.testing.VirtualTime;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 27, seed 000's second option: a repeat that arrives while the first request runs may wait
 * for its result, up to {@code inFlightWait} and within the caller's stated timeout, instead of
 * answering 409 at once. Time is the injected clock; the waiter is woken by this process's
 * completion, or polls the store with backoff (never in a tight loop) when another process holds
 * the operation.
 */
class InFlightWaitTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private final VirtualTime time = new VirtualTime(T0);
  private final List<Instant> claimsAt = new CopyOnWriteArrayList<>();
  private final InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();
  private final List<String> heard = new CopyOnWriteArrayList<>();
  private final ExecutorService pool = Executors.newSingleThreadExecutor();

  /** The in-memory store, with the clock time of every claim recorded. */
  private final IdempotencyStore store = new IdempotencyStore() {
    @Override
    public ClaimAttempt claim(RecordId id, Fingerprint fp, String owner, Instant now, Instant lease, Instant exp) {
      claimsAt.add(now);
      return memory.claim(id, fp, owner, now, lease, exp);
    }

    @Override
    public boolean renew(RecordId id, long generation, String owner, Instant now, Instant leaseUntil) {
      return memory.renew(id, generation, owner, now, leaseUntil);
    }

    @Override
    public boolean complete(RecordId id, long g, String owner, Instant now, StoredResponse r, Instant exp) {
      return memory.complete(id, g, owner, now, r, exp);
    }

    @Override
    public boolean release(RecordId id, long generation, String owner) {
      return memory.release(id, generation, owner);
    }

    @Override
    public int purgeExpired(Instant now) {
      return memory.purgeExpired(now);
    }

    @Override
    public java.util.Optional<StoredRecord> find(RecordId id) {
      return memory.find(id);
    }

    @Override
    public void close() {}
  };

  private IdempotencyGuard guard(Consumer<IdempotencyGuard.Builder> settings) {
    IdempotencyGuard.Builder b = IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler()).storeExecutor(Runnable::run)
        .purgeInterval(null).listener(e -> {
          if (e instanceof GuardEvent.Waited w) {
            heard.add("waited " + w.waited().toMillis() + " ms, " + (w.served() ? "served" : "conflict"));
          } else if (e instanceof GuardEvent.Conflict) {
            heard.add("conflict");
          }
        });
    settings.accept(b);
    return b.build();
  }

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  static GuardRequest order(Duration callerTimeout) {
    return new GuardRequest("POST", "/orders", null, "application/json", List.of("k1"), "alice",
        GuardRequest.BodyReader.of("{}".getBytes(StandardCharsets.UTF_8)), callerTimeout);
  }

  private static CapturedResponse done() {
    return new CapturedResponse(201, Map.of(), "done".getBytes(StandardCharsets.UTF_8));
  }

  /** Waits (real time, bounded) until the other thread has done what the test waits for. */
  private static void until(IntSupplier value, int atLeast) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (value.getAsInt() < atLeast) {
      assertTrue(System.nanoTime() < deadline, "the waiting request never got there");
      Thread.sleep(1);
    }
  }

  /** Runs the clock to the waiter's next poll, and waits until it has polled. */
  private void nextPoll() throws InterruptedException {
    int polls = claimsAt.size();
    Instant due = time.nextDue().orElseThrow();
    time.advance(Duration.between(time.now(), due));
    until(claimsAt::size, polls + 1);
  }

  @Test
  void aRepeatWaitsAndIsWokenWithTheReplayWhenThisProcessCompletes() throws Exception {
    IdempotencyGuard guard = guard(b -> b.inFlightWait(Duration.ofSeconds(2)));
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(order(null)));
    Future<Admission> repeat = pool.submit(() -> guard.admit(order(null)));
    until(time::pendingTasks, 2); // the first's lease renewal, and the repeat's first poll

    guard.complete(first.claim(), done());

    Admission.Respond replay = assertInstanceOf(Admission.Respond.class, repeat.get(10, TimeUnit.SECONDS));
    assertEquals(Admission.Reason.REPLAY, replay.reason());
    assertEquals("done", replay.response().bodyUtf8());
    assertEquals(List.of(T0, T0, T0), claimsAt, "woken, not polled: the first claim, the repeat's, its re-read");
    assertEquals(List.of("waited 0 ms, served"), heard);
  }

  @Test
  void aRepeatPollsWithBackoffWhenAnotherProcessHoldsTheOperation() throws Exception {
    IdempotencyGuard other = guard(b -> {});
    IdempotencyGuard here = guard(b -> b.inFlightWait(Duration.ofSeconds(5)));
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, other.admit(order(null)));
    Future<Admission> repeat = pool.submit(() -> here.admit(order(null)));
    until(claimsAt::size, 2);
    for (int i = 0; i < 5; i++) {
      until(time::pendingTasks, 2);
      nextPoll();
    }
    other.complete(first.claim(), done()); // another process: no signal reaches "here"
    until(time::pendingTasks, 1);
    nextPoll();

    Admission.Respond replay = assertInstanceOf(Admission.Respond.class, repeat.get(10, TimeUnit.SECONDS));
    assertEquals(Admission.Reason.REPLAY, replay.reason());
    List<Long> at = claimsAt.stream().map(t -> Duration.between(T0, t).toMillis()).toList();
    assertEquals(List.of(0L, 0L, 25L, 75L, 175L, 375L, 775L, 1575L), at,
        "polls 25 ms apart, then doubling: 7 reads of the store in 1.6 s, not 64");
  }

  @Test
  void theWaitEndsWith409AtItsLimit() throws Exception {
    IdempotencyGuard guard = guard(b -> b.inFlightWait(Duration.ofMillis(300)));
    assertInstanceOf(Admission.Proceed.class, guard.admit(order(null)));
    Future<Admission> repeat = pool.submit(() -> guard.admit(order(null)));
    for (int i = 0; i < 4; i++) {
      until(time::pendingTasks, 2);
      nextPoll();
    }
    Admission.Respond busy = assertInstanceOf(Admission.Respond.class, repeat.get(10, TimeUnit.SECONDS));
    assertEquals(Admission.Reason.IN_FLIGHT, busy.reason());
    assertEquals(409, busy.response().status());
    assertEquals(Duration.ofMillis(300), Duration.between(T0, time.now()), "the last poll at the limit exactly");
    assertEquals(List.of("waited 300 ms, conflict", "conflict"), heard);
  }

  @Test
  void theCallersTimeoutCapsTheWait() throws Exception {
    IdempotencyGuard guard = guard(b -> b.inFlightWait(Duration.ofSeconds(5)));
    assertInstanceOf(Admission.Proceed.class, guard.admit(order(null)));
    Future<Admission> repeat = pool.submit(() -> guard.admit(order(Duration.ofMillis(60))));
    for (int i = 0; i < 2; i++) { // at 25 ms, then at 60 ms (not 75)
      until(time::pendingTasks, 2);
      nextPoll();
    }
    assertEquals(409, assertInstanceOf(Admission.Respond.class, repeat.get(10, TimeUnit.SECONDS)).response().status());
    assertEquals(Duration.ofMillis(60), Duration.between(T0, time.now()));
  }

  @Test
  void aWaiterRunsTheHandlerItselfWhenTheFirstRequestFailed() throws Exception {
    IdempotencyGuard guard = guard(b -> b.inFlightWait(Duration.ofSeconds(2)));
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(order(null)));
    Future<Admission> repeat = pool.submit(() -> guard.admit(order(null)));
    until(time::pendingTasks, 2);

    guard.abandon(first.claim()); // the first handler threw

    Admission.Proceed mine = assertInstanceOf(Admission.Proceed.class, repeat.get(10, TimeUnit.SECONDS));
    assertEquals(2, mine.claim().generation());
    assertEquals(CompletionResult.STORED, guard.complete(mine.claim(), done()));
  }

  @Test
  void withoutAWaitTheRepeatIs409AtOnce() throws Exception {
    IdempotencyGuard guard = guard(b -> {});
    assertInstanceOf(Admission.Proceed.class, guard.admit(order(null)));
    assertEquals(409, assertInstanceOf(Admission.Respond.class, guard.admit(order(Duration.ofSeconds(30))))
        .response().status());
    assertEquals(2, claimsAt.size());
  }

  @Test
  void closingTheGuardEndsTheWait() throws Exception {
    IdempotencyGuard guard = guard(b -> b.inFlightWait(Duration.ofSeconds(2)));
    assertInstanceOf(Admission.Proceed.class, guard.admit(order(null)));
    Future<Admission> repeat = pool.submit(() -> guard.admit(order(null)));
    until(time::pendingTasks, 2);
    guard.close();
    assertEquals(409, assertInstanceOf(Admission.Respond.class, repeat.get(10, TimeUnit.SECONDS)).response().status());
  }
}
