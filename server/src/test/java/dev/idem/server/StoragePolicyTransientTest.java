package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The default policy releases the statuses that say "not processed" (408, 425, 429, 503: the
 * client's transient ones) and stores every other; a stored answer keeps its Retry-After; the old
 * default keeps its old meaning for code that names it.
 */
class StoragePolicyTransientTest {
  private final VirtualTime time = new VirtualTime();

  @Test
  @SuppressWarnings("deprecation")
  void whatEachPolicyStores() {
    for (int status : new int[] {408, 425, 429, 503}) {
      assertFalse(StoragePolicy.STORE_ALL_BUT_TRANSIENT.stores(status), "released: " + status);
    }
    for (int status : new int[] {200, 201, 400, 404, 409, 422, 500, 502, 504}) {
      assertTrue(StoragePolicy.STORE_ALL_BUT_TRANSIENT.stores(status), "stored: " + status);
    }
    assertTrue(StoragePolicy.STORE_ALL_BUT_503.stores(429), "the old default keeps its meaning");
    assertFalse(StoragePolicy.STORE_ALL_BUT_503.stores(503));
  }

  @Test
  void aStoredAnswerIsReplayedWithItsRetryAfter() throws Exception {
    try (IdempotencyGuard guard = IdempotencyGuard.builder(new InMemoryIdempotencyStore()).clock(time.clock())
        .scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null)
        .storagePolicy(StoragePolicy.STORE_ALL).build()) {
      GuardRequest post = new GuardRequest("POST", "/v1/charges", null, "application/json", List.of("k-1"),
          "acct_1", GuardRequest.BodyReader.of("{}".getBytes(StandardCharsets.UTF_8)));
      Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(post));
      guard.complete(first.claim(), new CapturedResponse(429,
          Map.of("Content-Type", List.of("application/json"), "Retry-After", List.of("7")), new byte[0]));
      Admission.Respond replay = assertInstanceOf(Admission.Respond.class, guard.admit(post));
      assertEquals(429, replay.response().status());
      assertEquals(List.of("7"), replay.response().headers().get("Retry-After"));
    }
  }
}
