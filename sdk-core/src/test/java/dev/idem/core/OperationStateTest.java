package dev.idem.core;

import static dev.idem.core.OperationState.FAILED;
import static dev.idem.core.OperationState.IN_FLIGHT;
import static dev.idem.core.OperationState.PENDING;
import static dev.idem.core.OperationState.SUCCEEDED;
import static dev.idem.core.OperationState.UNCERTAIN;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The whole transition table, checked cell by cell. */
class OperationStateTest {
  private static final Map<OperationState, Set<OperationState>> ALLOWED = Map.of(
      PENDING, EnumSet.of(IN_FLIGHT, FAILED, UNCERTAIN),
      IN_FLIGHT, EnumSet.of(PENDING, IN_FLIGHT, SUCCEEDED, FAILED, UNCERTAIN),
      SUCCEEDED, EnumSet.noneOf(OperationState.class),
      FAILED, EnumSet.noneOf(OperationState.class),
      UNCERTAIN, EnumSet.noneOf(OperationState.class));

  @Test
  void everyCellOfTheTable() {
    for (OperationState from : OperationState.values()) {
      for (OperationState to : OperationState.values()) {
        boolean allowed = ALLOWED.get(from).contains(to);
        assertEquals(allowed, from.canTransitionTo(to), from + " -> " + to);
        if (allowed) {
          assertDoesNotThrow(() -> OperationState.checkTransition(from, to));
        } else {
          IllegalStateException e = assertThrows(IllegalStateException.class,
              () -> OperationState.checkTransition(from, to));
          assertTrue(e.getMessage().contains(from.name()) && e.getMessage().contains(to.name()), e.getMessage());
        }
      }
    }
  }

  @Test
  void terminalStatesAreAbsorbing() {
    assertEquals(EnumSet.of(SUCCEEDED, FAILED, UNCERTAIN),
        EnumSet.copyOf(java.util.Arrays.stream(OperationState.values()).filter(OperationState::isTerminal).toList()));
    for (OperationState t : EnumSet.of(SUCCEEDED, FAILED, UNCERTAIN)) {
      for (OperationState to : OperationState.values()) {
        assertThrows(IllegalStateException.class, () -> OperationState.checkTransition(t, to), t + " -> " + to);
      }
    }
    // success is never reached without a claim
    assertThrows(IllegalStateException.class, () -> OperationState.checkTransition(PENDING, SUCCEEDED));
  }

  @Test
  void redriveOnlyFromFailedOrUncertain() {
    assertDoesNotThrow(() -> OperationState.checkRedrive(FAILED));
    assertDoesNotThrow(() -> OperationState.checkRedrive(UNCERTAIN));
    for (OperationState s : EnumSet.of(PENDING, IN_FLIGHT, SUCCEEDED)) {
      assertThrows(IllegalStateException.class, () -> OperationState.checkRedrive(s), s.name());
    }
  }
}
