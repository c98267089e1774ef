package dev.idem.examples.demo;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The demo: runs each scenario against the reference server on loopback, first with a naive retry
 * (no Idem) and then with Idem and a durable SQLite journal, prints both rows side by side and one
 * line per invariant checked, and exits non-zero if any invariant broke, so it doubles as a smoke
 * test.
 *
 * <p>{@code --keep DIR} (or {@code -Didem.demo.keep=DIR}) leaves the journals in DIR, for the
 * {@code idem} CLI to inspect; otherwise they are deleted when every invariant held.
 */
public final class Demo {
  /** The CLI's executable jar, as the demo's Maven command builds it (the cli module, classifier all). */
  static final String CLI = "java -jar cli/target/idem-cli-*-all.jar";

  private Demo() {}

  /**
   * Runs the demo; exits 0 if every invariant held, 1 if one broke, 2 on bad arguments.
   *
   * @param args optionally {@code --keep DIR}
   * @throws Exception if the demo's environment cannot start
   */
  public static void main(String[] args) throws Exception {
    Path keep;
    try {
      keep = keepDir(args, System.getProperty("idem.demo.keep", ""));
    } catch (IllegalArgumentException e) {
      System.err.println("demo: " + e.getMessage());
      System.exit(2);
      return;
    }
    List<Scenario> scenarios = List.of(new LostResponseScenario(), new CrashScenario(), new OfflineScenario(),
        new KeyReuseScenario(), new PermanentErrorScenario(), new BothHalvesScenario(), new WebhookScenario());
    List<ScenarioResult> results = new ArrayList<>();
    long broken;
    PrintStream out = System.out;
    try (DemoEnvironment env = new DemoEnvironment(keep)) {
      out.println("Idem demo: each scenario runs twice against the same test server, first with a naive retry"
          + " (a new key per attempt, no journal), then with Idem.");
      out.println();
      for (Scenario s : scenarios) {
        try {
          results.add(s.run(env));
        } catch (Exception e) {
          results.add(ScenarioResult.crashed(s.name(), e));
        }
      }
      broken = results.stream().filter(r -> !r.ok()).count();
      out.print(table(results));
      out.println();
      out.print(invariants(results));
      out.println();
      if (env.keep || broken > 0) {
        out.println("Journals kept under " + env.workDir + ". Inspect them with the idem CLI, for example:");
        out.println("  " + CLI + " journal list --dir " + env.workDir.resolve("lost-response"));
        out.println("  " + CLI + " journal stats --dir " + env.workDir.resolve("offline"));
        out.println("  " + CLI + " webhooks stats --inbox " + env.workDir.resolve("webhook-inbox"));
      } else {
        env.deleteWorkDir();
      }
    }
    out.println(broken == 0 ? "All invariants hold." : broken + " scenario(s) broke an invariant.");
    System.exit(broken == 0 ? 0 : 1);
  }

  /** {@code --keep DIR} from the arguments, else the system property, else null. */
  static Path keepDir(String[] args, String property) {
    Path keep = property.isBlank() ? null : Path.of(property);
    for (int i = 0; i < args.length; i++) {
      if (args[i].isBlank()) {
        continue; // an unset Maven property arrives as an empty argument
      }
      if (args[i].equals("--keep") && i + 1 < args.length && !args[i + 1].isBlank()) {
        keep = Path.of(args[++i]);
      } else {
        throw new IllegalArgumentException("unknown argument " + args[i] + "; usage: Demo [--keep DIR]");
      }
    }
    return keep;
  }

  static String table(List<ScenarioResult> results) {
    String fmt = "%-16s %-13s %8s %8s  %s%n";
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(fmt, "scenario", "run", "attempts", "effects", "outcome"));
    for (ScenarioResult r : results) {
      ScenarioResult.Baseline b = r.withoutIdem();
      if (b != null) {
        sb.append(String.format(fmt, r.scenario(), "without Idem", b.attempts(), b.effects(), b.outcome()));
      }
      sb.append(String.format(fmt, b != null ? "" : r.scenario(), "with Idem", r.attempts(), r.effects(),
          r.outcome() + (r.ok() ? "" : "  [INVARIANT BROKEN]")));
    }
    return sb.toString();
  }

  static String invariants(List<ScenarioResult> results) {
    StringBuilder sb = new StringBuilder("Invariants checked:\n");
    for (ScenarioResult r : results) {
      sb.append(r.scenario()).append(" (key ").append(r.key()).append(")\n");
      r.checked().forEach(line -> sb.append("  ").append(line).append('\n'));
    }
    return sb.toString();
  }
}
