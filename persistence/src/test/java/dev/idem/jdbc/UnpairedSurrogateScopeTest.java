package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * OperationId accepts any non-blank scope, but sqlite-jdbc encodes a lone UTF-16 surrogate as '?':
 * scope "t\uD800" was stored as "t?", so it collided with tenant "t?" (and every other lone
 * surrogate): the second tenant's begin of the same key was answered with the first tenant's
 * operation, and its own request was never sent. The journal now refuses such a scope, operation
 * name or reference at begin, naming the field, as a malformed key is refused.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class UnpairedSurrogateScopeTest {
  private static final Duration LEASE = Duration.ofSeconds(30);

  @TempDir
  Path tmp;

  @Test
  void aBeginWithAnUnpairedSurrogateIsRefusedInsteadOfSharingAnotherTenantsOperation() throws Exception {
    OperationId tenantA = new OperationId("t?", "charge", IdempotencyKey.of("order-42"));
    OperationId tenantB = new OperationId("t\uD800", "charge", IdempotencyKey.of("order-42"));
    try (JdbcJournal j = JdbcJournal.embedded(tmp.resolve("j")).closeOnShutdown(false).open()) {
      assertTrue(j.begin(Ops.op(tenantA, "{\"amount\":5}")).created());
      IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
          () -> j.begin(Ops.op(tenantB, "{\"amount\":5}")), "tenant B's begin was answered with tenant A's operation");
      assertTrue(refused.getMessage().contains("scope"), refused.getMessage());
      assertFalse(refused.getMessage().contains("t\uD800"), "the value itself is not echoed");

      OperationId badName = new OperationId("tenant-c", "charge\uDC00", IdempotencyKey.of("order-42"));
      assertTrue(assertThrows(IllegalArgumentException.class, () -> j.begin(Ops.op(badName, "{}")))
          .getMessage().contains("operation name"));
      OperationId fine = new OperationId("tenant-c", "charge", IdempotencyKey.of("order-43"));
      assertTrue(assertThrows(IllegalArgumentException.class, () -> j.begin(Ops.op(fine, "inv-\uD83D", "{}")))
          .getMessage().contains("reference"));
      // A pair is a character like any other.
      OperationId emoji = new OperationId("t\uD83D\uDE00", "charge", IdempotencyKey.of("order-42"));
      assertTrue(j.begin(Ops.op(emoji, "{}")).created());
      assertEquals(emoji, j.find(emoji).orElseThrow().id());
      assertEquals(tenantA, j.find(tenantA).orElseThrow().id());
    }
  }

  /**
   * Begin refused the colliding scope, but every other call that takes an identity or a scope from
   * its caller bound it as given, so the database read "t\uD800" as "t?": a find by tenant B's
   * identity returned tenant A's operation, a claim took it, a transition under tenant A's lease
   * changed it, an abandon ended it. Failed before the fix (find returned tenant A's record).
   */
  @Test
  void lookupsAndWritesWithAnUnpairedSurrogateNeverReachAnotherTenantsOperation() throws Exception {
    try (JdbcJournal j = JdbcJournal.embedded(tmp.resolve("j")).closeOnShutdown(false).open()) {
      lookupsAndWritesNeverReachTheCollidedOperation(j);
    }
  }

  /**
   * The scenario on {@code j}, an empty journal: tenant A's operation under scope "t?", reference
   * "cart-?" and operation name "charge?", then every entry point called with text that differs
   * from it only by an unpaired surrogate, which the database stores and compares as '?'. Each
   * answers as for an operation the journal does not hold, and tenant A's operation is unchanged.
   */
  static void lookupsAndWritesNeverReachTheCollidedOperation(JdbcJournal j) throws Exception {
    OperationId tenantA = new OperationId("t?", "charge?", IdempotencyKey.of("order-42"));
    OperationId byScope = new OperationId("t\uD800", "charge?", IdempotencyKey.of("order-42"));
    OperationId byName = new OperationId("t?", "charge\uDFFF", IdempotencyKey.of("order-42"));
    assertTrue(j.begin(Ops.op(tenantA, "cart-?", "{\"amount\":5}")).created());

    for (OperationId other : List.of(byScope, byName)) {
      assertEquals(Optional.empty(), j.find(other), "a find with an unpaired surrogate returned tenant A's operation");
      assertNotHeld(() -> j.claim(other, "node-b", T0, LEASE));
      assertNotHeld(() -> j.abandon(other, Transition.finish(OperationState.FAILED, T0, null, "given up")));
      assertNotHeld(() -> j.redrive(other, T0));
      assertFalse(j.recordOutcomeDelivered(other, T0));
      assertEquals(0, j.recordOutcomesDelivered(List.of(other), T0));
      OperationRecord read = j.find(tenantA).orElseThrow();
      assertEquals(OperationState.PENDING, read.state(), "tenant A's operation was changed through " + other);
      assertEquals(0, read.generation());
    }
    assertEquals(List.of(), j.findByReference("t\uD800", "cart-?"));
    assertEquals(List.of(), j.findByReference("t?", "cart-\uDC00"));
    assertEquals(List.of(tenantA), j.findByReference("t?", "cart-?").stream().map(OperationRecord::id).toList());

    // Tenant A's lease does not open its operation to an identity that differs by a surrogate.
    Lease lease = j.claim(tenantA, "node-a", T0, LEASE).orElseThrow();
    assertNotHeld(() -> j.recordAttempt(byScope, lease, Ops.attempt(1, lease.generation(), T0)));
    assertNotHeld(() -> j.transition(byScope, lease, Transition.finish(OperationState.SUCCEEDED, T0, Ops.ok("{}"),
        null)));
    assertNotHeld(() -> j.recordAttemptAndTransition(byName, lease, Ops.attempt(1, lease.generation(), T0),
        Transition.finish(OperationState.FAILED, T0, Ops.ok("{}"), null)));
    OperationRecord held = j.find(tenantA).orElseThrow();
    assertEquals(OperationState.IN_FLIGHT, held.state());
    assertEquals(List.of(), held.attempts());
    assertEquals(lease.generation(), held.generation());
  }

  /** As for an identity the journal does not hold, with the reason, and without the text itself. */
  private static void assertNotHeld(Executable call) {
    IllegalStateException e = assertThrows(IllegalStateException.class, call,
        "a write with an unpaired surrogate reached tenant A's operation");
    assertTrue(e.getMessage().contains("no such operation") && e.getMessage().contains("unpaired"), e.getMessage());
    assertFalse(e.getMessage().contains("\uD800") || e.getMessage().contains("\uDFFF"), "the value is not echoed");
  }
}
