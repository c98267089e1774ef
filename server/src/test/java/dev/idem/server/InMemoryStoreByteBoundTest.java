package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.StoredResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a remark of review: the in-memory store bounded its records by number only,
 * while each holds an answer of up to the guard's capture cap (1 MiB by default): 100,000 records
 * of large answers (a report, an export) were about 100 GiB of heap, and the service ended in an
 * OutOfMemoryError instead of refusing new keys. It now also bounds the bytes of stored answers.
 */
class InMemoryStoreByteBoundTest {
  private static final Instant T0 = Instant.parse("2026-12-07T12:00:00Z");
  private static final Fingerprint FP = new Fingerprint("ab".repeat(32));

  private static RecordId id(int n) {
    return new RecordId("alice", "POST /reports", "k-" + n);
  }

  private static void completeWith(InMemoryIdempotencyStore store, int n, int bodyBytes, Instant expiresAt) {
    ClaimAttempt.Claimed c = assertInstanceOf(ClaimAttempt.Claimed.class,
        store.claim(id(n), FP, "svc/" + n, T0, T0.plusSeconds(30), expiresAt));
    assertTrue(store.complete(id(n), c.generation(), "svc/" + n, T0,
        new StoredResponse(200, Map.of("Content-Type", List.of("text/csv")), new byte[bodyBytes], false), expiresAt));
  }

  @Test
  void aNewKeyIsRefusedOnceTheStoredAnswersReachTheByteBound() {
    InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(100_000, 10_000);
    Instant day = T0.plus(Duration.ofDays(1));
    for (int n = 0; n < 3; n++) {
      completeWith(store, n, 4_000, day);
    }
    assertEquals(3 * (4_000 + "Content-Type".length() + "text/csv".length()), store.storedBytes());

    IdempotencyStoreException full = assertThrows(IdempotencyStoreException.class,
        () -> store.claim(id(9), FP, "svc/9", T0, T0.plusSeconds(30), day));
    assertTrue(full.getMessage().contains("bytes of stored answers"), full.getMessage());
    assertEquals(3, store.size(), "nothing forgotten: each answer is within its retention");
    // A key already held is still answered: its repeat is no new record.
    assertInstanceOf(ClaimAttempt.Existing.class, store.claim(id(0), FP, "svc/x", T0, T0.plusSeconds(30), day));
  }

  @Test
  void answersPastRetentionAreDroppedToMakeRoomAndUncounted() {
    InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(100_000, 10_000);
    completeWith(store, 0, 6_000, T0.plusSeconds(60));
    completeWith(store, 1, 6_000, T0.plus(Duration.ofDays(1)));
    long before = store.storedBytes();

    Instant later = T0.plusSeconds(120);
    assertInstanceOf(ClaimAttempt.Claimed.class,
        store.claim(id(2), FP, "svc/2", later, later.plusSeconds(30), later.plus(Duration.ofDays(1))));

    assertEquals(2, store.size(), "the expired record was dropped for the new key");
    assertEquals(before / 2, store.storedBytes());
    store.purgeExpired(T0.plus(Duration.ofDays(2)));
    assertEquals(0, store.size());
    assertEquals(0, store.storedBytes(), "a purged answer is no longer counted");
  }
}
