package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.CompletionResult;
import dev.idem.server.spi.StoredResponse;
import dev.idem.server.support.ForwardingStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A completion whose store call fails is tried again in the background while the claim's lease
 * stays renewed: a retry of the key meanwhile gets 409, never a takeover, and the handler runs once.
 * The retries are bounded: a completion the store keeps refusing is given up after one lease, and
 * then (as docs/server.md says) the lease runs out and a retry runs the handler again.
 */
class CompletionRetryTest {
  private final VirtualTime time = new VirtualTime();
  private final Instant start = time.clock().instant();

  private static GuardRequest post() {
    return new GuardRequest("POST", "/v1/charges", null, "application/json", List.of("k-1"), "acct_1",
        GuardRequest.BodyReader.of("{\"amount\":100}".getBytes(StandardCharsets.UTF_8)));
  }

  /** A store whose completions fail until {@code failUntil} (virtual time), counting them. */
  private static final class FlakyCompletions extends ForwardingStore {
    final Instant failUntil;
    final AtomicInteger completes = new AtomicInteger();

    FlakyCompletions(Instant failUntil) {
      this.failUntil = failUntil;
    }

    @Override
    public boolean complete(RecordId id, long generation, String owner, Instant now, StoredResponse response,
        Instant expiresAt) {
      completes.incrementAndGet();
      if (now.isBefore(failUntil)) {
        throw new IdempotencyStoreException("pool timeout", null);
      }
      return super.complete(id, generation, owner, now, response, expiresAt);
    }
  }

  private IdempotencyGuard guard(ForwardingStore store, List<GuardEvent> events) {
    return IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler())
        .storeExecutor(Runnable::run).purgeInterval(null).listener(events::add).build();
  }

  @Test
  void anOutageLongerThanTheLeaseIsRiddenOutWithTheLeaseRenewedAndRetriesGet409() throws Exception {
    // Failing for 29 s: past the 30 s lease the claim was first given, were it not renewed.
    FlakyCompletions store = new FlakyCompletions(start.plusSeconds(29));
    List<GuardEvent> events = new ArrayList<>();
    IdempotencyGuard guard = guard(store, events);
    AtomicInteger charges = new AtomicInteger();
    try {
      Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post()));
      charges.incrementAndGet();
      assertThrows(IdempotencyStoreException.class,
          () -> guard.complete(first.claim(), CapturedResponse.json(201, "{\"id\":\"ch_1\"}")));

      List<Admission.Reason> answers = new ArrayList<>();
      for (int i = 0; i < 45; i++) {
        time.advance(Duration.ofSeconds(1));
        Admission a = guard.admit(post());
        if (a instanceof Admission.Proceed again) {
          charges.incrementAndGet();
          guard.complete(again.claim(), CapturedResponse.json(201, "{\"id\":\"ch_2\"}"));
          break;
        }
        answers.add(((Admission.Respond) a).reason());
      }
      assertEquals(1, charges.get(), "the handler ran once");
      assertEquals(Admission.Reason.IN_FLIGHT, answers.get(0), "a retry while the completion is tried again: 409");
      assertEquals(Admission.Reason.IN_FLIGHT, answers.get(28));
      assertEquals(Admission.Reason.REPLAY, answers.get(answers.size() - 1), "once it landed, the replay");
      assertEquals(List.of(CompletionResult.STORED), events.stream().filter(GuardEvent.Completed.class::isInstance)
          .map(e -> ((GuardEvent.Completed) e).result()).toList(), "the completion is told once it landed");
    } finally {
      guard.close();
    }
  }

  @Test
  void aCompletionTheStoreKeepsRefusingIsGivenUpAfterOneLease() throws Exception {
    FlakyCompletions store = new FlakyCompletions(Instant.MAX);
    IdempotencyGuard guard = guard(store, new ArrayList<>());
    try {
      Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post()));
      assertThrows(IdempotencyStoreException.class,
          () -> guard.complete(first.claim(), CapturedResponse.json(201, "{}")));
      time.advance(Duration.ofSeconds(45));
      int tries = store.completes.get();
      time.advance(Duration.ofMinutes(10));
      assertEquals(tries, store.completes.get(), "no more tries after the give-up");
      // What docs/server.md states: once given up, the lease runs out and a retry runs the handler again.
      assertInstanceOf(Admission.Proceed.class, guard.admit(post()));
    } finally {
      guard.close();
    }
  }

  /** A store whose completions each take {@code took} (the clock jumps, no task runs meanwhile), then fail. */
  private final class SlowFailingCompletions extends ForwardingStore {
    final Duration took;
    final List<Instant> tried = new ArrayList<>();

    SlowFailingCompletions(Duration took) {
      this.took = took;
    }

    @Override
    public boolean complete(RecordId id, long generation, String owner, Instant now, StoredResponse response,
        Instant expiresAt) {
      tried.add(time.now());
      time.jump(took);
      throw new IdempotencyStoreException("statement timeout", null);
    }
  }

  @Test
  void aSlowFailingStoreIsGivenUpWithinOneLeaseOfTheFirstFailureCountingTheCallsTime() throws Exception {
    SlowFailingCompletions store = new SlowFailingCompletions(Duration.ofSeconds(10));
    IdempotencyGuard guard = guard(store, new ArrayList<>());
    AtomicInteger charges = new AtomicInteger();
    try {
      Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post()));
      charges.incrementAndGet();
      assertThrows(IdempotencyStoreException.class,
          () -> guard.complete(first.claim(), CapturedResponse.json(201, "{}")));
      Instant firstFailure = time.now(); // the first call took 10 s
      time.advance(Duration.ofMinutes(10));
      Instant giveUpBy = firstFailure.plus(Duration.ofSeconds(30));
      assertTrue(store.tried.size() > 1, "tried again: " + store.tried);
      assertTrue(store.tried.stream().allMatch(t -> !t.isAfter(giveUpBy)),
          "no try starts more than one lease after the first failure, the store calls' time counted: " + store.tried);
      assertEquals(RecordState.IN_FLIGHT, store.find(first.claim().id()).orElseThrow().state());
      assertEquals(1, charges.get());
      assertInstanceOf(Admission.Proceed.class, guard.admit(post()), "given up, the lease ran out: the handler runs");
    } finally {
      guard.close();
    }
  }

  @Test
  void aSlowFailingStoreHoldsTheKeyNoLongerThanTheRetriesLeaseAndTheLeaseItLeaves() throws Exception {
    SlowFailingCompletions store = new SlowFailingCompletions(Duration.ofSeconds(10));
    IdempotencyGuard guard = guard(store, new ArrayList<>());
    try {
      Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post()));
      assertThrows(IdempotencyStoreException.class,
          () -> guard.complete(first.claim(), CapturedResponse.json(201, "{}")));
      // One lease of retries (whose last call may take its 10 s past it), then the lease they kept runs out.
      time.advance(Duration.ofSeconds(30 + 10 + 30));
      Admission a = guard.admit(post());
      assertInstanceOf(Admission.Proceed.class, a, "still held at " + time.now() + " after tries at " + store.tried);
    } finally {
      guard.close();
    }
  }

  @Test
  void closingTheGuardStopsTheTries() throws Exception {
    FlakyCompletions store = new FlakyCompletions(Instant.MAX);
    IdempotencyGuard guard = guard(store, new ArrayList<>());
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post()));
    assertThrows(IdempotencyStoreException.class,
        () -> guard.complete(first.claim(), CapturedResponse.json(201, "{}")));
    guard.close();
    int tries = store.completes.get();
    time.advance(Duration.ofMinutes(1));
    assertEquals(tries, store.completes.get());
  }
}
