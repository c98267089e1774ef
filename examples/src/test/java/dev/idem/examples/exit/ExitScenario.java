package dev.idem.examples.exit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.examples.childjvm.ChildJvm;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import java.net.BindException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * One exit scenario, run by the parent test with real child JVMs: an app (one of the README's
 * quickstarts in a {@code main} that closes nothing) sends its orders to a target that is down or
 * up, and ends as its {@link MainEnding} says. Then the app restarts on the same journal directory
 * and resumes against the live target, twice in a row (each resume ends the same way). What the
 * reference server received and what the app confirmed tell whether the caller was told the truth.
 */
final class ExitScenario {
  /** The target during the first run. */
  enum Target {
    /** Nothing listens on the target's port: every inline caller is told FAILED. */
    DOWN(5),
    /** The reference server answers: every caller is told SUCCEEDED. */
    UP(20);

    final int orders;

    Target(int orders) {
      this.orders = orders;
    }
  }

  /** The runs after the first: restarts that resume, each on the journal the previous one left. */
  static final int RESUMES = 2;
  /** Scenarios run side by side. */
  static final int CONCURRENT = 3;
  private static final Pattern TOLD = Pattern.compile("^TOLD (\\S+) (\\S+)$", Pattern.MULTILINE);

  private ExitScenario() {
  }

  /**
   * What happened, counted from the first run's printed outcomes, the journal it left, the
   * server's request log and the confirmations file.
   *
   * @param name the scenario, for messages
   * @param told each order's key and what its caller was told (SUCCEEDED, FAILED, UNCERTAIN,
   *     PENDING, or WAITING: no outcome yet)
   * @param leftInJournal each order's state in the journal as the first run left it (read without
   *     recovery), null if the journal did not have it
   * @param effects each order's effects at the server after the resumes
   * @param requestsAfterFirstRun each order's requests at the server after the first run
   * @param requestsAfterResumes each order's requests at the server after the resumes
   * @param confirmations how often each key was confirmed, over all runs
   * @param logs every run's output
   */
  record Report(String name, Map<String, String> told, Map<String, OperationState> leftInJournal,
      Map<String, Long> effects, Map<String, Long> requestsAfterFirstRun, Map<String, Long> requestsAfterResumes,
      Map<String, Long> confirmations, List<String> logs) {

    List<String> toldAs(String state) {
      return told.entrySet().stream().filter(e -> e.getValue().equals(state)).map(Map.Entry::getKey).toList();
    }

    /** Orders whose caller was told FAILED and that took effect at the server after all. */
    List<String> toldFailedWithEffect() {
      return toldAs("FAILED").stream().filter(k -> effects.get(k) > 0).toList();
    }

    /** Requests that reached the server, after the first run, for orders whose caller was told SUCCEEDED. */
    long succeededResent() {
      return toldAs("SUCCEEDED").stream().mapToLong(k -> requestsAfterResumes.get(k) - requestsAfterFirstRun.get(k))
          .sum();
    }

    /** Confirmations beyond the first of each order. */
    long confirmationsRepeated() {
      return confirmations.values().stream().mapToLong(n -> n - 1).sum();
    }

    /** Orders with exactly one effect at the server. */
    long deliveredOnce() {
      return effects.values().stream().filter(n -> n == 1).count();
    }

    Map<String, Long> journalStates() {
      return leftInJournal.values().stream().collect(Collectors.groupingBy(
          s -> s == null ? "MISSING" : s.name(), TreeMap::new, Collectors.counting()));
    }

    long leftPending() {
      return leftInJournal.values().stream().filter(s -> s == OperationState.PENDING).count();
    }

    String summary() {
      return String.format("ExitScenario %s: told FAILED %d, of them reached the server %d; told SUCCEEDED %d,"
              + " re-sent %d; confirmations repeated %d%s; delivered once %d of %d; journal after the first run %s;"
              + " told %s", name, toldAs("FAILED").size(), toldFailedWithEffect().size(), toldAs("SUCCEEDED").size(),
          succeededResent(), confirmationsRepeated(),
          confirmationsRepeated() == 0 ? "" : " " + confirmations.entrySet().stream().filter(e -> e.getValue() > 1)
              .map(e -> e.getKey() + " x" + e.getValue()).toList(),
          deliveredOnce(), told.size(), journalStates(),
          told.values().stream().collect(Collectors.groupingBy(s -> s, TreeMap::new, Collectors.counting())));
    }

    String details() {
      return summary() + "\n" + String.join("\n", logs);
    }

    // ---- the assertions, each with the counts and every run's output in its message -----------

    /** A precondition: the scenario tested nothing unless every caller was told {@code state}. */
    void assertEveryCallerTold(String state) {
      assertEquals(told.size(), toldAs(state).size(), () -> name + ": not every caller was told " + state
          + ", so the scenario does not test what it says\n" + details());
    }

    /** Guarantee 4: an operation reported FAILED never takes effect later. */
    void assertNoneToldFailedTookEffect() {
      assertEquals(List.of(), toldFailedWithEffect(), () -> name + ": orders told FAILED that reached the server and"
          + " took effect after a restart\n" + details());
    }

    /** What the caller was told SUCCEEDED is kept: a restart sends nothing more for it. */
    void assertNoneToldSucceededResent() {
      assertEquals(0, succeededResent(), () -> name + ": requests re-sent after a restart for orders told SUCCEEDED\n"
          + details());
    }

    /** Outcomes are handed to the app once: no order is confirmed twice, over all runs. */
    void assertNoConfirmationRepeated() {
      assertEquals(0, confirmationsRepeated(), () -> name + ": confirmations repeated\n" + details());
    }

    /** Offline is a state: the first run left every order PENDING in the journal. */
    void assertEveryOrderLeftPending() {
      assertEquals(told.size(), leftPending(), () -> name + ": orders not PENDING in the journal after the first run"
          + " (target down)\n" + details());
    }

    /** Every order took effect exactly once at the server, by the end. */
    void assertEveryOrderDeliveredOnce() {
      assertEquals(told.size(), deliveredOnce(), () -> name + ": orders not delivered exactly once\n" + details());
    }
  }

  /**
   * Starts every scenario of {@code app} (each {@link MainEnding}, the target down and up), at most
   * {@link #CONCURRENT} at a time: the children mostly wait (on the server, on backoff, on their
   * JVM's start), so running them side by side keeps the set under two minutes on two cores.
   *
   * @return the runs; {@link Runs#report} waits for one
   */
  static Runs startAll(Path dir, Class<?> app) {
    ExecutorService pool = Executors.newFixedThreadPool(CONCURRENT, r -> {
      Thread t = new Thread(r, "exit-scenario");
      t.setDaemon(true);
      return t;
    });
    Map<String, Future<Report>> runs = new LinkedHashMap<>();
    for (Target target : Target.values()) {
      for (MainEnding ending : MainEnding.values()) {
        Path scenarioDir = dir.resolve(target.name().toLowerCase() + "-" + ending.name().toLowerCase());
        runs.put(Runs.name(ending, target), pool.submit(() -> run(scenarioDir, app, ending, target)));
      }
    }
    pool.shutdown();
    return new Runs(pool, runs);
  }

  /** The scenarios of one app, running or done. */
  static final class Runs implements AutoCloseable {
    private final ExecutorService pool;
    private final Map<String, Future<Report>> runs;

    private Runs(ExecutorService pool, Map<String, Future<Report>> runs) {
      this.pool = pool;
      this.runs = runs;
    }

    private static String name(MainEnding ending, Target target) {
      return ending + "/" + target;
    }

    /** Waits for one scenario; rethrows what ended it early (a failed precondition, a child that hung). */
    Report report(MainEnding ending, Target target) throws Exception {
      try {
        return runs.get(name(ending, target)).get(5, TimeUnit.MINUTES);
      } catch (ExecutionException e) {
        if (e.getCause() instanceof Exception x) {
          throw x;
        }
        throw (Error) e.getCause();
      }
    }

    /** Stops what still runs (a child being awaited is killed by its scenario's timeout). */
    @Override
    public void close() {
      pool.shutdownNow();
    }
  }

  /**
   * Runs the scenario in {@code dir}: the first run of {@code app} against {@code target}, then
   * {@link #RESUMES} resumes against the live reference server (on the same port).
   */
  static Report run(Path dir, Class<?> app, MainEnding ending, Target target) throws Exception {
    for (int tries = 1; ; tries++) {
      try {
        return runOnce(Files.createDirectories(dir.resolve("try-" + tries)), app, ending, target);
      } catch (BindException e) {
        if (tries == 3) {
          throw e;
        }
        // another process took the down target's port before it came up: again, with a new port
      }
    }
  }

  private static Report runOnce(Path dir, Class<?> app, MainEnding ending, Target target) throws Exception {
    String name = app.getSimpleName() + ", target " + target.name().toLowerCase() + ", main ends by " + ending;
    Path journal = dir.resolve("journal");
    Path confirmations = dir.resolve("confirmations.txt");
    List<String> logs = new ArrayList<>();
    try (IdempotentServer server = IdempotentServer.start(); LateTarget late = LateTarget.down()) {
      URI url = target == Target.DOWN ? late.url("/orders") : server.url("/orders");
      // The outbox app waits for outcomes: long enough for 20 deliveries on a busy machine, or for
      // the dispatcher's first poll and every attempt of the 5 orders against a port that refuses.
      Duration awaitOutcomes = target == Target.DOWN ? Duration.ofSeconds(3) : Duration.ofSeconds(30);
      String first = runApp(dir, "first-run", app,
          new AppArgs(false, ending, journal, url.toString(), target.orders, confirmations, awaitOutcomes));
      logs.add("first run:\n" + first);
      Map<String, String> told = new LinkedHashMap<>();
      Matcher m = TOLD.matcher(first);
      while (m.find()) {
        told.put(m.group(1), m.group(2));
      }
      assertEquals(target.orders, told.size(), () -> name + ": the first run did not tell every caller:\n" + first);
      Map<String, Long> requestsAfterFirstRun = requestsPerKey(server, told.keySet());
      Map<String, OperationState> leftInJournal = new LinkedHashMap<>();
      try (JdbcJournal readOnly = JdbcJournal.openReadOnly(journal)) {
        for (String key : told.keySet()) {
          leftInJournal.put(key, readOnly.find(new OperationId(OperationId.DEFAULT_SCOPE, AppArgs.OPERATION,
              IdempotencyKey.of(key))).map(OperationRecord::state).orElse(null));
        }
      }

      if (target == Target.DOWN) {
        late.comeUp(server.url("/"));
      }
      for (int r = 1; r <= RESUMES; r++) {
        logs.add("resume " + r + ":\n" + runApp(dir, "resume-" + r, app,
            new AppArgs(true, ending, journal, url.toString(), target.orders, confirmations, awaitOutcomes)));
      }

      Map<String, Long> effects = new LinkedHashMap<>();
      told.keySet().forEach(k -> effects.put(k, server.effectCount(k)));
      Map<String, Long> confirmed = new TreeMap<>();
      if (Files.exists(confirmations)) {
        Files.readAllLines(confirmations, StandardCharsets.US_ASCII).stream().filter(l -> !l.isBlank())
            .forEach(l -> confirmed.merge(l.strip(), 1L, Long::sum));
      }
      Report report = new Report(name, told, leftInJournal, effects, requestsAfterFirstRun,
          requestsPerKey(server, told.keySet()), confirmed, logs);
      System.out.println(report.summary());
      return report;
    }
  }

  /** Runs one incarnation of the app to its end; returns its output. */
  private static String runApp(Path dir, String run, Class<?> app, AppArgs args) throws Exception {
    Path log = dir.resolve(run + ".log");
    Process child = ChildJvm.builder(app, args.toList()).redirectOutput(log.toFile()).start();
    int status;
    try {
      status = args.ending().await(child, log);
    } finally {
      child.destroyForcibly(); // no-op once it ended; a child left behind by an interrupted wait dies
    }
    String out = Files.readString(log);
    assertEquals(args.ending().expectedStatus(), status, () -> run + " of " + app.getSimpleName() + " exited with "
        + status + ":\n" + out);
    return out;
  }

  private static Map<String, Long> requestsPerKey(IdempotentServer server, Iterable<String> keys) {
    Map<String, Long> counts = new LinkedHashMap<>();
    keys.forEach(k -> counts.put(k, 0L));
    for (ReceivedRequest r : server.recordedRequests()) {
      r.keyHeader().ifPresent(k -> counts.computeIfPresent(k, (x, n) -> n + 1));
    }
    return counts;
  }
}
