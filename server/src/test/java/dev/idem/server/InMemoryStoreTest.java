package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.IdempotencyStore;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class InMemoryStoreTest extends StoreContract {
  @Override
  IdempotencyStore open() {
    return new InMemoryIdempotencyStore();
  }

  @Test
  void aFullStorePurgesThenRefusesRatherThanForgetALiveRecord() throws Exception {
    InMemoryIdempotencyStore small = new InMemoryIdempotencyStore(2);
    small.claim(new RecordId("c", "r", "1"), A, "o", T0, T0.plus(LEASE), T0.plusSeconds(60));
    small.claim(new RecordId("c", "r", "2"), A, "o", T0, T0.plus(LEASE), T0.plus(RETENTION));
    assertThrows(IdempotencyStoreException.class,
        () -> small.claim(new RecordId("c", "r", "3"), A, "o", T0, T0.plus(LEASE), T0.plus(RETENTION)));
    // once the first is past retention and its lease, a claim makes room by purging it
    small.claim(new RecordId("c", "r", "3"), A, "o", T0.plusSeconds(61), T0.plusSeconds(91), T0.plus(RETENTION));
    assertEquals(2, small.size());
  }

  @Test
  void aFullStoreDropsReleasedRecordsAndTheReleasedClaimCannotActOnTheKeysNextRecord() throws Exception {
    InMemoryIdempotencyStore small = new InMemoryIdempotencyStore(2);
    RecordId released = new RecordId("c", "r", "released");
    // Taken over once, so the released claim's generation (2) is not the next record's (1) ...
    small.claim(released, A, "old/1", T0, T0.plus(LEASE), T0.plus(RETENTION));
    small.expireClaims("old");
    ClaimAttempt.Claimed second = assertInstanceOf(ClaimAttempt.Claimed.class,
        small.claim(released, A, "old-2", T0.plusSeconds(1), T0.plusSeconds(1).plus(LEASE), T0.plus(RETENTION)));
    assertEquals(2, second.generation());
    assertTrue(small.release(released, 2, "old-2"));
    RecordId live = new RecordId("c", "r", "live");
    small.claim(live, A, "live-owner", T0, T0.plus(LEASE), T0.plus(RETENTION));

    // Full: a new key drops the released record (within its retention) instead of a 503.
    Instant now = T0.plusSeconds(2);
    assertInstanceOf(ClaimAttempt.Claimed.class,
        small.claim(new RecordId("c", "r", "new"), A, "new-owner", now, now.plus(LEASE), now.plus(RETENTION)));
    assertTrue(small.find(released).isEmpty());
    assertTrue(small.find(live).isPresent(), "a claim in flight is never dropped");

    // The released key comes back (another payload: a released key is anyone's); the store, full again,
    // drops the other released record.
    small.release(new RecordId("c", "r", "new"), 1, "new-owner");
    ClaimAttempt.Claimed again = assertInstanceOf(ClaimAttempt.Claimed.class,
        small.claim(released, B, "next-owner", now, now.plus(LEASE), now.plus(RETENTION)));
    assertEquals(1, again.generation(), "a new record, as after a purge");
    // ... and the released claim, even under the new record's generation, changes nothing of it.
    for (long generation : new long[] {1, 2}) {
      assertFalse(small.renew(released, generation, "old-2", now, now.plusSeconds(300)));
      assertFalse(small.complete(released, generation, "old-2", now, CREATED, now.plus(RETENTION)));
      assertFalse(small.release(released, generation, "old-2"));
    }
    assertEquals(RecordState.IN_FLIGHT, small.find(released).orElseThrow().state());
    assertEquals(now.plus(LEASE), small.find(released).orElseThrow().leaseUntil());
    assertTrue(small.complete(released, 1, "next-owner", now, CREATED, now.plus(RETENTION)));
  }

  @Test
  void aFullStoreOfLiveRecordsSaysWhatItHolds() throws Exception {
    InMemoryIdempotencyStore small = new InMemoryIdempotencyStore(1);
    small.claim(new RecordId("c", "r", "1"), A, "o", T0, T0.plus(LEASE), T0.plus(RETENTION));
    IdempotencyStoreException e = assertThrows(IdempotencyStoreException.class,
        () -> small.claim(new RecordId("c", "r", "2"), A, "o2", T0, T0.plus(LEASE), T0.plus(RETENTION)));
    assertTrue(e.getMessage().contains("is full (1 of 1 records, 0 of"), e.getMessage());
    assertTrue(e.getMessage().contains("its limits), each in flight or completed"), e.getMessage());
  }
}
