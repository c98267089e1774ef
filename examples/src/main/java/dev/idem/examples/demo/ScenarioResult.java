package dev.idem.examples.demo;

import java.util.List;

/**
 * One scenario's rows in the demo's table: the same situation without Idem and with it, and the
 * invariants checked on the run with Idem.
 *
 * @param scenario the scenario's name
 * @param key the idempotency key of its main operation
 * @param attempts requests the server received with that key
 * @param effects times the server's business action ran for that key
 * @param outcome how the operation ended, as the app saw it
 * @param violations the invariants that broke; empty when all held
 * @param checked every invariant checked, one line each (see {@link Checks#checked()})
 * @param withoutIdem the same situation handled by a naive retry, or null if the scenario has none
 */
record ScenarioResult(String scenario, String key, long attempts, long effects, String outcome,
    List<String> violations, List<String> checked, Baseline withoutIdem) {

  ScenarioResult(String scenario, String key, long attempts, long effects, String outcome, Checks checks) {
    this(scenario, key, attempts, effects, outcome, checks.violations(), checks.checked(), null);
  }

  /** A scenario that threw: one broken invariant, nothing else known. */
  static ScenarioResult crashed(String scenario, Exception e) {
    return new ScenarioResult(scenario, "-", 0, 0, "crashed: " + e, List.of("the scenario threw " + e),
        List.of("BROKEN  the scenario threw " + e), null);
  }

  ScenarioResult withoutIdem(Baseline baseline) {
    return new ScenarioResult(scenario, key, attempts, effects, outcome, violations, checked, baseline);
  }

  boolean ok() {
    return violations.isEmpty();
  }

  /**
   * What a naive retry did in the same situation.
   *
   * @param attempts requests it sent
   * @param effects times the server's business action ran for them
   * @param outcome what the app ended with
   */
  record Baseline(long attempts, long effects, String outcome) {}
}
