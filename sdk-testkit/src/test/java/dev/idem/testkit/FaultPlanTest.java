package dev.idem.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;

import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Scheduling order and precedence, without a server. */
class FaultPlanTest {
  private final Fault drop = Fault.dropRequest();
  private final Fault unavailable = Fault.status(503);

  @Test
  void faultsAreTakenOncePerRequestInScheduledOrder() {
    FaultPlan plan = new FaultPlan().forNext(2, unavailable).next(drop);

    assertEquals(3, plan.pending());
    assertEquals(Optional.of(unavailable), plan.take("a"));
    assertEquals(Optional.of(unavailable), plan.take(null));
    assertEquals(Optional.of(drop), plan.take("b"));
    assertEquals(Optional.empty(), plan.take("c"));
  }

  @Test
  void perKeyFaultsComeFirstAndLeaveOtherKeysAlone() {
    FaultPlan plan = new FaultPlan().next(unavailable).forKey("k", 2, drop);

    assertEquals(Optional.of(drop), plan.take("k"));
    assertEquals(Optional.of(drop), plan.take("k"));
    assertEquals(Optional.of(unavailable), plan.take("k"), "the key's queue is empty, the shared one is next");
    assertEquals(Optional.empty(), plan.take("other"));
  }

  @Test
  void aQuotedKeyIsPlannedForTheBareKeyTheServerReadsFromEitherSpelling() {
    FaultPlan plan = new FaultPlan().forKey("\"k-1\"", drop);

    assertEquals(Optional.empty(), plan.take("\"k-1\""), "the dispatcher never looks up a quoted key");
    assertEquals(Optional.of(drop), plan.take("k-1"));
  }

  @Test
  void aKeyTheServerWouldRefuseIsRefusedAndSaysWhy() {
    FaultPlan plan = new FaultPlan();
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> plan.forKey("a,b", drop));
    assertTrue(e.getMessage().contains("comma"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> plan.forKey("x".repeat(IdempotencyKey.MAX_LENGTH + 1), drop));
    assertEquals(0, plan.pending());
  }

  @Test
  void clearDropsEverything() {
    FaultPlan plan = new FaultPlan().next(unavailable).forKey("k", drop);
    plan.clear();
    assertEquals(0, plan.pending());
    assertEquals(Optional.empty(), plan.take("k"));
  }

  @Test
  void refusesNonsense() {
    FaultPlan plan = new FaultPlan();
    assertThrows(IllegalArgumentException.class, () -> plan.forNext(0, drop));
    assertThrows(IllegalArgumentException.class, () -> Fault.status(200));
    assertThrows(IllegalArgumentException.class, () -> Fault.commitThenStatus(600));
    assertThrows(IllegalArgumentException.class, () -> Fault.slowProcessing(java.time.Duration.ZERO));
    assertThrows(IllegalArgumentException.class, () -> Fault.tooManyRequests(java.time.Duration.ofSeconds(-1)));
  }
}
