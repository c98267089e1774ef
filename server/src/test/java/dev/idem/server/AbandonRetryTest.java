package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import dev.idem.server.support.ForwardingStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link IdempotencyGuard#abandon} (the handler threw) releases the claim through the same background
 * retries as a completion: one failed release is tried again with the lease kept renewed, so the key
 * is free again within a moment instead of answering 409 for a whole lease, and a retry of the key
 * never runs the handler while the first run's release is still pending.
 */
class AbandonRetryTest {
  private final VirtualTime time = new VirtualTime();
  private final Instant start = time.clock().instant();
  private final AtomicInteger runs = new AtomicInteger(); // handler runs for the one key

  private static GuardRequest post() {
    return new GuardRequest("POST", "/v1/charges", null, "application/json", List.of("k-1"), "acct_1",
        GuardRequest.BodyReader.of("{\"amount\":100}".getBytes(StandardCharsets.UTF_8)));
  }

  /** A store whose releases fail until {@code failUntil} (virtual time), counting them. */
  private final class FlakyReleases extends ForwardingStore {
    final Instant failUntil;
    final AtomicInteger releases = new AtomicInteger();

    FlakyReleases(Instant failUntil) {
      this.failUntil = failUntil;
    }

    @Override
    public boolean release(RecordId id, long generation, String owner) {
      releases.incrementAndGet();
      if (time.now().isBefore(failUntil)) {
        throw new IdempotencyStoreException("connection reset", null);
      }
      return super.release(id, generation, owner);
    }

    RecordState state(RecordId id) {
      return real.find(id).orElseThrow().state();
    }
  }

  private IdempotencyGuard guard(ForwardingStore store) {
    return IdempotencyGuard.builder(store).clock(time.clock()).scheduler(time.scheduler())
        .storeExecutor(Runnable::run).purgeInterval(null).build();
  }

  /** Admits the key and, if it may run, runs the handler: counted, and it throws, so the claim is abandoned. */
  private Admission runFailingHandler(IdempotencyGuard guard) throws Exception {
    Admission a = guard.admit(post());
    if (a instanceof Admission.Proceed p) {
      runs.incrementAndGet();
      guard.abandon(p.claim());
    }
    return a;
  }

  @Test
  void oneFailedReleaseIsTriedAgainSoTheKeyIsFreeLongBeforeTheLeaseEnds() throws Exception {
    FlakyReleases store = new FlakyReleases(start.plusMillis(1)); // only the first release fails
    IdempotencyGuard guard = guard(store);
    try {
      Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post()));
      runs.incrementAndGet();
      assertThrows(IdempotencyStoreException.class, () -> guard.abandon(first.claim()));
      RecordId id = first.claim().id();
      assertEquals(RecordState.IN_FLIGHT, store.state(id));

      // The release is pending: a retry of the key gets 409, it does not run the handler beside it.
      assertInstanceOf(Admission.Respond.class, guard.admit(post()));
      assertEquals(1, runs.get());

      time.advance(Duration.ofSeconds(1)); // far less than the 30 s lease
      assertEquals(2, store.releases.get(), "the failed release was tried again");
      assertEquals(RecordState.RELEASED, store.state(id), "and it landed");
      Admission again = assertInstanceOf(Admission.Proceed.class, guard.admit(post()),
          "a retry of the key runs the handler once the release landed, without waiting out the lease");
      runs.incrementAndGet();
      assertEquals(2, runs.get());
      assertEquals(2, ((Admission.Proceed) again).claim().generation());
      guard.abandon(((Admission.Proceed) again).claim());
      assertEquals(RecordState.RELEASED, store.state(id));
    } finally {
      guard.close();
    }
  }

  @Test
  void whileTheReleaseIsTriedAgainTheLeaseIsKeptAndNoRetryRunsTheHandler() throws Exception {
    // Failing for 29 s: without its renewals the 30 s lease would run out on the way.
    FlakyReleases store = new FlakyReleases(start.plusSeconds(29));
    IdempotencyGuard guard = guard(store);
    try {
      Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post()));
      runs.incrementAndGet();
      assertThrows(IdempotencyStoreException.class, () -> guard.abandon(first.claim()));
      RecordId id = first.claim().id();
      for (int i = 0; i < 29; i++) {
        time.advance(Duration.ofSeconds(1));
        if (store.state(id) != RecordState.IN_FLIGHT) {
          break;
        }
        assertEquals(1, runs.get(), "no second run while the first one's release is pending (at " + time.now() + ")");
        assertInstanceOf(Admission.Respond.class, runFailingHandler(guard));
      }
      time.advance(Duration.ofSeconds(2));
      assertEquals(RecordState.RELEASED, store.state(id), "the release landed once the store came back");
      assertEquals(1, runs.get());
      assertInstanceOf(Admission.Proceed.class, runFailingHandler(guard));
      assertEquals(2, runs.get());
    } finally {
      guard.close();
    }
  }

  @Test
  void aReleaseTheStoreKeepsFailingIsGivenUpWithinOneLeaseAndTheLeaseThenRunsOut() throws Exception {
    FlakyReleases store = new FlakyReleases(Instant.MAX);
    IdempotencyGuard guard = guard(store);
    try {
      Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post()));
      runs.incrementAndGet();
      assertThrows(IdempotencyStoreException.class, () -> guard.abandon(first.claim()));
      time.advance(Duration.ofSeconds(30)); // one lease after the failure: given up
      int tries = store.releases.get();
      time.advance(Duration.ofMinutes(10));
      assertEquals(tries, store.releases.get(), "no more tries after the give-up");
      assertEquals(RecordState.IN_FLIGHT, store.state(first.claim().id()), "never released: its lease ran out");
      assertEquals(1, runs.get());
      assertInstanceOf(Admission.Proceed.class, guard.admit(post()), "the lease ran out: a retry runs the handler");
    } finally {
      guard.close();
    }
  }
}
