package dev.idem.testkit.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class EffectCountersTest {
  private final EffectCounters counters = new EffectCounters();

  @Test
  void countsEffectsPerKeyAndInTotal() {
    assertEquals(1, counters.countEffect("k"));
    assertEquals(2, counters.countEffect("k"));
    assertEquals(3, counters.countEffect(null));
    assertEquals(2, counters.effectCount("k"));
    assertEquals(0, counters.effectCount("other"));
    assertEquals(3, counters.totalEffects());
  }

  @Test
  void settledEffectsAreCountedApartFromStartedOnes() throws Exception {
    counters.countEffect("k");
    assertFalse(counters.awaitSettled("k", 1, Duration.ZERO));
    counters.settle("k");
    assertTrue(counters.awaitSettled("k", 1, Duration.ZERO));
  }
}
