package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link IdempotencyGuard#complete} with a response the store cannot keep releases the claim
 * instead of leaving it in flight, unrenewed, until its lease runs out.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class GuardUnstorableCompletionTest {
  private final VirtualTime time = new VirtualTime();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private final IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock())
      .scheduler(time.scheduler()).purgeInterval(null).build();

  @AfterEach
  void close() {
    guard.close();
  }

  private static GuardRequest json(String key, String json) {
    return new GuardRequest("POST", "/transfers", null, "application/json", List.of(key), "alice",
        GuardRequest.BodyReader.of(json.getBytes(StandardCharsets.UTF_8)));
  }

  /**
   * A handler status outside 100..599 (the JDK HttpServer and Jetty both send one) made
   * complete() throw after it had already marked the claim finished: renewals stopped, abandon()
   * was a no-op, and the record stayed IN_FLIGHT until its lease ran out: every retry meanwhile
   * got 409, and the retry after it ran the handler again.
   */
  @Test
  void aCompletionThatCannotBeStoredDoesNotLeaveTheClaimInFlight() throws Exception {
    Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(json("k-600", "{\"amount\":1}")));

    assertThrows(IllegalArgumentException.class,
        () -> guard.complete(p.claim(), new CapturedResponse(600, Map.of(), new byte[0])));
    guard.abandon(p.claim()); // what both adapters do when the chain fails: a no-op here

    assertEquals(RecordState.RELEASED, store.find(p.claim().id()).orElseThrow().state());
    assertInstanceOf(Admission.Proceed.class, guard.admit(json("k-600", "{\"amount\":1}")),
        "a retry runs the handler now, not after the lease");
  }

  /** The same for a kept header with a null value, which the store's copy refuses. */
  @Test
  void aNullHeaderValueReleasesTheClaim() throws Exception {
    Admission.Proceed p = assertInstanceOf(Admission.Proceed.class, guard.admit(json("k-null", "{\"amount\":1}")));
    List<String> values = new ArrayList<>(Arrays.asList("application/json", null));

    assertThrows(NullPointerException.class, () -> guard.complete(p.claim(),
        new CapturedResponse(201, Map.of("Content-Type", values), new byte[0])));

    assertEquals(RecordState.RELEASED, store.find(p.claim().id()).orElseThrow().state());
  }
}
