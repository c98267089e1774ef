package dev.idem.examples.demo;

import java.util.ArrayList;
import java.util.List;

/**
 * The demo: runs each scenario against the reference server on loopback with a durable SQLite
 * journal, prints a table of keys, attempts and server-side effects, and exits non-zero if any
 * invariant broke, so it doubles as a smoke test.
 */
public final class Demo {
  private Demo() {}

  public static void main(String[] args) throws Exception {
    List<Scenario> scenarios = List.of(new LostResponseScenario(), new CrashScenario(), new OfflineScenario(),
        new KeyReuseScenario(), new PermanentErrorScenario(), new BothHalvesScenario(), new WebhookScenario());
    List<ScenarioResult> results = new ArrayList<>();
    long broken;
    try (DemoEnvironment env = new DemoEnvironment()) {
      System.out.println("Idem demo: reference server at " + env.server.url("/") + ", journals under " + env.workDir);
      for (Scenario s : scenarios) {
        try {
          results.add(s.run(env));
        } catch (Exception e) {
          results.add(new ScenarioResult(s.name(), "-", 0, 0, "crashed: " + e, List.of("the scenario threw " + e)));
        }
      }
      broken = results.stream().filter(r -> !r.ok()).count();
      if (broken == 0) {
        env.deleteWorkDir();
      } else {
        System.out.println("Journals kept for inspection under " + env.workDir);
      }
    }
    System.out.println(table(results));
    results.stream().filter(r -> !r.ok()).forEach(r ->
        r.violations().forEach(v -> System.out.println("INVARIANT BROKEN in " + r.scenario() + ": " + v)));
    System.out.println(broken == 0 ? "All invariants hold." : broken + " scenario(s) broke an invariant.");
    System.exit(broken == 0 ? 0 : 1);
  }

  static String table(List<ScenarioResult> results) {
    String fmt = "%-16s %-38s %8s %8s  %-34s %s%n";
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(fmt, "scenario", "key", "attempts", "effects", "outcome", "invariants"));
    for (ScenarioResult r : results) {
      sb.append(String.format(fmt, r.scenario(), r.key(), r.attempts(), r.effects(), r.outcome(),
          r.ok() ? "hold" : "BROKEN"));
    }
    return sb.toString();
  }
}
