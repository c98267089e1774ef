package dev.idem.examples.demo;

import java.util.List;

/**
 * One row of the demo's table: what a scenario did and whether each invariant held.
 *
 * @param scenario the scenario's name
 * @param key the idempotency key of its main operation
 * @param attempts requests the server received with that key
 * @param effects times the server's business action ran for that key
 * @param outcome how the operation ended, as the app saw it
 * @param violations the invariants that broke; empty when all held
 */
record ScenarioResult(String scenario, String key, long attempts, long effects, String outcome,
    List<String> violations) {
  boolean ok() {
    return violations.isEmpty();
  }
}
