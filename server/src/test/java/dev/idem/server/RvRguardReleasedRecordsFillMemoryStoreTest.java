package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.fail;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import dev.idem.server.spi.CompletionResult;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Review (rguard): {@link InMemoryIdempotencyStore} is bounded, and its contract (class Javadoc,
 * docs/server.md "Stores") is that when full it purges, then refuses "rather than forget a live
 * record". But the purge only deletes records past retention, and a RELEASED record keeps the
 * retention of its claim (24 h by default): a released claim is no live record (any request with
 * its key, whatever its payload, takes it over: {@code Takeover.allowed}), yet it holds its slot
 * for a day.
 *
 * <p>So a downstream outage, where the handler answers 503 (a status the default storage policy
 * releases) or throws, fills the store with released records, one per key tried, and once the
 * outage is over every new key is refused 503 ("idempotency store unavailable") for up to the
 * retention, though forgetting a released record loses nothing: the service stays down a day
 * after its dependency came back.
 *
 * <p>Code: {@code InMemoryIdempotencyStore.claim} (capacity check, then {@code purgeExpired}, which
 * keeps every record whose {@code expiresAt} has not passed: {@code Takeover.purgeable}), and
 * {@code release} (keeps the claim's {@code expiresAt}).
 */
class RvRguardReleasedRecordsFillMemoryStoreTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(3);
  private final IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock())
      .scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null).build();

  @AfterEach
  void close() {
    guard.close();
  }

  private static GuardRequest order(String key) {
    return new GuardRequest("POST", "/orders", null, "application/json", List.of(key), "alice",
        GuardRequest.BodyReader.of("{\"item\":\"book\"}".getBytes(StandardCharsets.UTF_8)));
  }

  @Test
  void releasedClaimsDoNotLockNewKeysOutOnceTheOutageIsOver() throws Exception {
    // The payment provider is down: the handler answers 503 (released), or throws (released too).
    for (String key : List.of("k-outage-1", "k-outage-2")) {
      Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(order(key)));
      assertEquals(CompletionResult.RELEASED, guard.complete(p.claim(), new CapturedResponse(503,
          Map.of("Retry-After", List.of("5")), new byte[0])));
    }
    Admission.Proceed threw = assertInstanceOf(Admission.Proceed.class, guard.admit(order("k-outage-3")));
    guard.abandon(threw.claim());

    // The provider is back an hour later; a customer places a new order.
    time.advance(Duration.ofHours(1));
    Admission next;
    try {
      next = guard.admit(order("k-after-outage"));
    } catch (IdempotencyStoreException e) {
      fail("a new key is refused 503 an hour after the outage, because the store is full of released claims ("
          + store.size() + " records, none of them live): " + e.getMessage());
      return;
    }
    assertInstanceOf(Admission.Proceed.class, next, "a new key runs its handler");
  }
}
