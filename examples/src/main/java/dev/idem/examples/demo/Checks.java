package dev.idem.examples.demo;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/** Collects broken invariants for a scenario, with the expected and actual values. */
final class Checks {
  private final List<String> violations = new ArrayList<>();

  Checks expect(String what, Object expected, Object actual) {
    if (!Objects.equals(expected, actual)) {
      violations.add(what + ": expected " + expected + ", got " + actual);
    }
    return this;
  }

  Checks require(String what, boolean holds) {
    if (!holds) {
      violations.add(what);
    }
    return this;
  }

  List<String> violations() {
    return List.copyOf(violations);
  }
}
