package dev.idem.examples.demo;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A scenario's invariants: each one checked is recorded with what it found, so that the demo can
 * say in one line per invariant what was checked, and which broke (with the expected value).
 */
final class Checks {
  private final List<String> checked = new ArrayList<>();
  private final List<String> violations = new ArrayList<>();

  Checks expect(String what, Object expected, Object actual) {
    if (Objects.equals(expected, actual)) {
      checked.add("ok      " + what + ": " + actual);
    } else {
      String v = what + ": expected " + expected + ", got " + actual;
      checked.add("BROKEN  " + v);
      violations.add(v);
    }
    return this;
  }

  Checks require(String what, boolean holds) {
    checked.add((holds ? "ok      " : "BROKEN  ") + what);
    if (!holds) {
      violations.add(what);
    }
    return this;
  }

  /** Every invariant checked, one line each, starting with "ok" or "BROKEN". */
  List<String> checked() {
    return List.copyOf(checked);
  }

  List<String> violations() {
    return List.copyOf(violations);
  }
}
