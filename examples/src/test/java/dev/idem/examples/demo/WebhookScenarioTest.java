package dev.idem.examples.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The webhook demo row holds its invariants (the demo itself also fails the CI run if it does not). */
class WebhookScenarioTest {
  @Test
  void oneEventThreeDeliveriesAndATamperedCopyAreProcessedOnce() throws Exception {
    try (DemoEnvironment env = new DemoEnvironment()) {
      ScenarioResult r = new WebhookScenario().run(env);
      assertTrue(r.ok(), r.violations().toString());
      assertEquals(1, r.effects());
      assertEquals(4, r.attempts());
      env.deleteWorkDir();
    }
  }
}
