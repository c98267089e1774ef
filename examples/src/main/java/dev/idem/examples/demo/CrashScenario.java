package dev.idem.examples.demo;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.testkit.Fault;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM sends an order; the server commits it and holds the response; the child is killed
 * (SIGKILL) mid-operation. A restarted child resumes from the journal with the same key, the server
 * replays, and there is one order.
 */
final class CrashScenario implements Scenario {
  @Override
  public String name() {
    return "crash + restart";
  }

  @Override
  public ScenarioResult run(DemoEnvironment env) throws Exception {
    // Without Idem (simulated in-process): the response is lost where the process died, and the
    // restarted app, which kept no record of the key, submits the order again under a new one.
    env.server.plan().next(Fault.commitThenDropResponse());
    okhttp3.OkHttpClient naiveHttp = NaiveClient.http(Duration.ofSeconds(5));
    String order = "{\"cart\":\"cart-2001\",\"amount\":1999}";
    NaiveClient.Run beforeCrash = NaiveClient.post(naiveHttp, env.naiveUrl("/orders"), order, 1, false);
    NaiveClient.Run afterRestart = NaiveClient.post(naiveHttp, env.naiveUrl("/orders"), order, 1, false);
    long naiveEffects = env.effectsFor(beforeCrash.keys()) + env.effectsFor(afterRestart.keys());

    Path dir = env.workDir.resolve("crash");
    String base = env.server.url("/").toString();
    IdempotencyKey key = IdempotencyKey.generate();
    OperationId id = new OperationId(OperationId.DEFAULT_SCOPE, "create-order", key);
    env.server.plan().next(Fault.commitThenDelayResponse(Duration.ofSeconds(60)));

    Process sender = child("send", dir.toString(), base, key.value()).start();
    boolean committed = env.server.awaitEffects(key.value(), 1, Duration.ofSeconds(30));
    sender.destroyForcibly(); // SIGKILL: no shutdown hooks, no finally blocks
    sender.waitFor(30, TimeUnit.SECONDS);

    Optional<OperationRecord> afterCrash;
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      afterCrash = journal.find(id);
    }

    Process resumer = child("resume", dir.toString(), base).start();
    List<String> out = lines(resumer);
    boolean exited = resumer.waitFor(60, TimeUnit.SECONDS);
    int exit = exited ? resumer.exitValue() : -1;

    OperationState finalState;
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      finalState = journal.find(id).map(OperationRecord::state).orElse(null);
    }
    Checks c = new Checks()
        .expect("without Idem: orders made after the restart re-sent under a new key", 2L, naiveEffects)
        .require("the server committed the order before the kill", committed)
        .require("the killed process had journaled the operation with its key", afterCrash.isPresent())
        .require("the restarted process resumed and got the replay",
            exit == 0 && out.stream().anyMatch(l -> l.startsWith("RESUMED " + key.value() + " 201 replayed=true")))
        .expect("server-side effects for the key", 1L, env.server.effectCount(key.value()))
        .expect("requests carrying the key", 2L, env.requestsWithKey(key.value()))
        .expect("journal state after resume", OperationState.SUCCEEDED, finalState);
    return new ScenarioResult(name(), key.value(), env.requestsWithKey(key.value()),
        env.server.effectCount(key.value()), afterCrash.map(r -> r.state() + " at kill").orElse("lost") + ", then "
        + finalState, c)
        .withoutIdem(new ScenarioResult.Baseline(beforeCrash.attempts() + afterRestart.attempts(), naiveEffects,
            "restart re-sent under a new key: " + naiveEffects + " orders"));
  }

  private static ProcessBuilder child(String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
    cmd.add(CrashChild.class.getName());
    cmd.addAll(List.of(args));
    return new ProcessBuilder(cmd).redirectErrorStream(true);
  }

  private static List<String> lines(Process p) throws Exception {
    List<String> lines = new ArrayList<>();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        lines.add(line);
      }
    }
    return lines;
  }
}
