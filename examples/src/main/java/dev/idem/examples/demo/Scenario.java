package dev.idem.examples.demo;

/** One demo scenario: it sets up its faults, runs, and checks its invariants. */
interface Scenario {
  /** The short name in the table. */
  String name();

  /**
   * Runs the scenario against the shared demo environment.
   *
   * @throws Exception only for an unexpected failure of the demo itself, which fails the run
   */
  ScenarioResult run(DemoEnvironment env) throws Exception;
}
