package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.server.spi.IdempotencyStore;
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
}
