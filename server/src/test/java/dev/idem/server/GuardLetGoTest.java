package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.idem.core.testing.VirtualTime;
import dev.idem.server.spi.Admission;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link IdempotencyGuard#letGo}: a claim whose handler may still run (an async request the container
 * timed out) is neither released nor stored. Its key stays in flight, the lease renewed, for one lease
 * period, and then the lease runs out: no retry runs the handler beside the first run meanwhile, and
 * the key is never held for good.
 */
class GuardLetGoTest {
  private static final Duration LEASE = Duration.ofSeconds(30); // the default; renewed every 10 s
  private final VirtualTime time = new VirtualTime();
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private final IdempotencyGuard guard = IdempotencyGuard.builder(store).clock(time.clock())
      .scheduler(time.scheduler()).storeExecutor(Runnable::run).purgeInterval(null).build();

  @AfterEach
  void close() {
    guard.close();
  }

  private static GuardRequest charge() {
    return new GuardRequest("POST", "/charges", null, "application/json", List.of("k-slow"), "alice",
        GuardRequest.BodyReader.of("{\"amount\":100}".getBytes(StandardCharsets.UTF_8)));
  }

  private Admission.Reason refusedFor() throws Exception {
    Admission a = guard.admit(charge());
    return a instanceof Admission.Respond r ? r.reason() : null;
  }

  @Test
  void aClaimLetGoStaysInFlightWhileRenewedThenItsLeaseRunsOut() throws Exception {
    Admission.Proceed first = assertInstanceOf(Admission.Proceed.class, guard.admit(charge()));

    guard.letGo(first.claim());
    guard.abandon(first.claim()); // a no-op now: letting go ends the claim as abandon would

    assertEquals(RecordState.IN_FLIGHT, store.find(first.claim().id()).orElseThrow().state());
    assertEquals(Admission.Reason.IN_FLIGHT, refusedFor(), "a retry right after must not run the handler");
    time.advance(LEASE.plusSeconds(15)); // past the lease written before letGo: only the renewals hold it
    assertEquals(Admission.Reason.IN_FLIGHT, refusedFor(),
        "the lease is still renewed one lease after letGo: the handler may still run");
    time.advance(LEASE); // two leases after letGo: the renewals stopped one lease ago
    assertInstanceOf(Admission.Proceed.class, guard.admit(charge()),
        "the key is not held forever: once the lease ran out, a retry runs the handler again");
  }
}
