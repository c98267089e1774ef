package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.Transport;
import dev.idem.jdbc.support.ChildJvm;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The promise at ordinary moments (issue 24), in real child JVMs ({@link ExitChild}) whose journal
 * defers its commits for an hour, so that only what the journal makes durable on purpose survives:
 * <ul>
 *   <li>a normal exit (main returns without closing anything, {@code System.exit(0)}, SIGTERM)
 *       loses nothing the callers were told, and the next open finds a clean close;</li>
 *   <li>FAILED and UNCERTAIN are durable before the caller is told, even if the process is killed
 *       the moment after;</li>
 *   <li>an operation only enqueued, never sent, is not counted as ambiguous after a crash;</li>
 *   <li>an outcome whose callback a crash prevented is handed over once after the restart, and
 *       nothing is sent again.</li>
 * </ul>
 */
class JournalExitTest {
  private static final int COUNT = 20;
  private static final String OPEN_MARKER = "idem-journal.open";

  @TempDir
  Path tmp;

  private Path dir() {
    return tmp.resolve("journal");
  }

  private Path serverLog() {
    return tmp.resolve("server.log");
  }

  private String[] args(String mode, int count) {
    return new String[] {dir().toString(), serverLog().toString(), mode, Integer.toString(count)};
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"return", "exit"})
  void aNormalExitLosesNothingTheCallersWereToldAndTheNextOpenFindsACleanClose(String mode) throws Exception {
    ChildJvm.Result child = ChildJvm.run(tmp, ExitChild.class, args(mode, COUNT));
    assertEquals(0, child.exitCode(), child.output());
    assertNothingToldWasLost(child.output());
  }

  @Test
  void sigtermLosesNothingTheCallersWereToldAndTheNextOpenFindsACleanClose() throws Exception {
    ChildJvm.Result child;
    try (ChildJvm.Running running = ChildJvm.start("READY", ExitChild.class, args("sigterm", COUNT))) {
      running.awaitReady(Duration.ofSeconds(60));
      child = running.terminate(Duration.ofSeconds(30));
    }
    assertEquals(143, child.exitCode(), "SIGTERM ends the JVM with 128 + 15 after its hooks:\n" + child.output());
    assertNothingToldWasLost(child.output());
  }

  private void assertNothingToldWasLost(String output) throws Exception {
    Map<IdempotencyKey, String> told = told(output);
    List<IdempotencyKey> keys = KillChild.keys(COUNT + 2);
    Map<IdempotencyKey, String> expected = new LinkedHashMap<>();
    for (int i = 0; i < COUNT + 2; i++) {
      expected.put(keys.get(i), i < COUNT ? "SUCCEEDED" : "FAILED");
    }
    assertEquals(expected, told, output);
    assertFalse(Files.exists(dir().resolve(OPEN_MARKER)), "the journal was closed at exit: no crash to recover");
    Map<String, Integer> effects = effects();
    assertEquals(COUNT, effects.size(), "every success reached the server, no failure did");
    assertTrue(effects.values().stream().allMatch(n -> n == 1), effects.toString());

    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir())) {
      for (Map.Entry<IdempotencyKey, String> e : told.entrySet()) {
        OperationRecord r = journal.find(id(e.getKey())).orElseThrow();
        assertEquals(e.getValue(), r.state().name(), "what the caller was told is what the journal keeps: " + r);
        assertFalse(r.hasAmbiguousAttempt(), "no crash recovery: " + r.attempts());
        assertEquals(e.getValue().equals("SUCCEEDED") ? 1 : 2, r.attempts().size(), r.attempts().toString());
      }
      Resumed resumed = resume(journal);
      assertEquals(0, resumed.summary.examined(), "nothing to resend or hand over: " + resumed.summary);
    }
    assertEquals(effects, effects(), "0 operations told FAILED or SUCCEEDED reached the server again");
  }

  /**
   * Guarantee 4 at the worst moment: the process is killed right after the caller was told. Before,
   * the FAILED was deferred and lost, the operation came back IN_FLIGHT, and the next resume sent
   * it: a call told FAILED took effect.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"FAILED", "UNCERTAIN"})
  void failedAndUncertainAreDurableBeforeTheCallerIsToldEvenIfTheProcessDiesTheMomentAfter(String state)
      throws Exception {
    ChildJvm.Result child = ChildJvm.run(tmp, ExitChild.class, args(state.toLowerCase(java.util.Locale.ROOT) + "-then-halt", 0));
    assertEquals(HaltingJournal.HALT_CODE, child.exitCode(), child.output());
    IdempotencyKey key = KillChild.keys(1).get(0);
    assertEquals(Map.of(key, state), told(child.output()), child.output());
    assertTrue(Files.exists(dir().resolve(OPEN_MARKER)), "a kill, not a close");

    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir())) {
      assertEquals(state, journal.find(id(key)).orElseThrow().state().name());
      Resumed resumed = resume(journal);
      assertEquals(0, resumed.summary.examined(), resumed.summary.toString());
      assertEquals(List.of(), resumed.sent, "an operation told FAILED is never sent again");
    }
  }

  @Test
  void operationsOnlyEnqueuedAreNotCountedAsAmbiguousAfterACrashAndAPermanentAnswerEndsThemFailed()
      throws Exception {
    int count = 5;
    ChildJvm.Result child = ChildJvm.run(tmp, ExitChild.class, args("enqueue-halt", count));
    assertEquals(HaltingJournal.HALT_CODE, child.exitCode(), child.output());
    List<IdempotencyKey> keys = KillChild.keys(count);

    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir())) {
      for (IdempotencyKey key : keys) {
        OperationRecord r = journal.find(id(key)).orElseThrow();
        assertEquals(OperationState.PENDING, r.state());
        assertEquals(0, r.generation(), "never claimed");
        assertEquals(List.of(), r.attempts(), "never sent, so no ambiguous attempt");
      }
      List<String> sent = new ArrayList<>();
      List<OperationException> failures = new ArrayList<>();
      Transport refusing = (request, key) -> {
        sent.add(key.value());
        return new ResponseSnapshot(400, Map.of(), "{\"error\":\"bad request\"}".getBytes(StandardCharsets.UTF_8));
      };
      restarted(journal).resumePending(Map.of(ExitChild.OPERATION, ResumeHandler.of(refusing,
          o -> { throw new AssertionError(o); }, failures::add)));
      assertEquals(count, sent.size());
      assertEquals(count, failures.size());
      for (IdempotencyKey key : keys) {
        assertEquals(OperationState.FAILED, journal.find(id(key)).orElseThrow().state(),
            "the first attempt was answered 400 and nothing was sent before it: FAILED, not UNCERTAIN");
      }
    }
  }

  /**
   * The child dies inside a resume handler's callback, after the operation's SUCCEEDED write is
   * durable and before the callback confirms it. The restart hands that outcome over once, read
   * from the journal, sends nothing again, and repeats no confirmation.
   */
  @Test
  void anOutcomeWhoseCallbackACrashPreventedIsHandedOverOnceAfterTheRestartWithoutResending() throws Exception {
    ChildJvm.Result child = ChildJvm.run(tmp, ExitChild.class, args("halt-in-handler", COUNT));
    assertEquals(HaltingJournal.HALT_CODE, child.exitCode(), child.output());
    List<IdempotencyKey> keys = KillChild.keys(COUNT);
    IdempotencyKey interrupted = keys.get(COUNT / 2);
    Map<String, Integer> confirmations = new TreeMap<>();
    for (String line : child.output().split("\n")) {
      if (line.startsWith("CONFIRMED ")) {
        confirmations.merge(line.split(" ")[1], 1, Integer::sum);
      }
    }
    assertFalse(confirmations.containsKey(interrupted.value()), child.output());

    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir())) {
      Resumed resumed = resume(journal);
      for (Outcome o : resumed.confirmed) {
        confirmations.merge(o.key().value(), 1, Integer::sum);
        if (o.key().equals(interrupted)) {
          assertTrue(o.fromJournal(), "handed over from the journal, not sent again");
        }
      }
      assertTrue(resumed.confirmed.stream().anyMatch(o -> o.key().equals(interrupted)), resumed.summary.toString());
      Resumed again = resume(journal);
      assertEquals(0, again.summary.examined(), again.summary.toString());
    }
    Set<String> all = new HashSet<>();
    keys.forEach(k -> all.add(k.value()));
    assertEquals(all, confirmations.keySet(), "every outcome confirmed");
    assertTrue(confirmations.values().stream().allMatch(n -> n == 1), "0 confirmations repeated: " + confirmations);
    assertEquals(Map.copyOf(toCounts(all)), Map.copyOf(effects()), "each operation took effect once: 0 re-sends");
  }

  /**
   * Four threads keep calling while the main thread calls System.exit: the shutdown hook closes the
   * journal under them. What they were told is in the journal, the others got a JournalException
   * saying so, nothing is corrupt, and the exit does not hang.
   */
  @Test
  void callsRacingTheShutdownHookGetAJournalExceptionAndLoseNothingTheyWereTold() throws Exception {
    ChildJvm.Result child = ChildJvm.run(tmp, ExitChild.class, args("busy-exit", 200));
    assertEquals(0, child.exitCode(), child.output());
    Set<IdempotencyKey> succeeded = new HashSet<>();
    for (String line : child.output().split("\n")) {
      if (line.startsWith("TOLD ")) {
        assertTrue(line.endsWith(" SUCCEEDED"), line);
        succeeded.add(IdempotencyKey.of(line.split(" ")[1]));
      } else if (line.startsWith("ERR ")) {
        assertTrue(line.contains("dev.idem.core.JournalException") && line.contains("closed by its JVM shutdown hook"),
            "a call after the close is told clearly why: " + line);
      }
    }
    assertTrue(succeeded.size() >= 200, child.output());
    assertFalse(Files.exists(dir().resolve(OPEN_MARKER)), "closed cleanly by the hook");
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir())) {
      for (IdempotencyKey key : succeeded) {
        assertEquals(OperationState.SUCCEEDED, journal.find(id(key)).orElseThrow().state(), key.value());
      }
      for (String key : effects().keySet()) {
        assertNotNull(journal.find(id(IdempotencyKey.of(key))).orElse(null), "sent without a durable record: " + key);
      }
    }
  }

  private static Map<IdempotencyKey, String> told(String output) {
    Map<IdempotencyKey, String> told = new LinkedHashMap<>();
    for (String line : output.split("\n")) {
      if (line.startsWith("TOLD ")) {
        String[] parts = line.split(" ");
        told.put(IdempotencyKey.of(parts[1]), parts[2]);
      }
    }
    return told;
  }

  /** How many times the server received each key. */
  private Map<String, Integer> effects() throws Exception {
    return toCounts(Files.exists(serverLog()) ? Files.readAllLines(serverLog()) : List.of());
  }

  private static Map<String, Integer> toCounts(java.util.Collection<String> keys) {
    Map<String, Integer> counts = new HashMap<>();
    keys.forEach(k -> counts.merge(k, 1, Integer::sum));
    return counts;
  }

  private record Resumed(ResumeSummary summary, List<String> sent, List<Outcome> confirmed) {
  }

  /** A restart's resumePending, through a "server" that appends to the same log as the child's. */
  private Resumed resume(JdbcJournal journal) throws Exception {
    List<Outcome> confirmed = new ArrayList<>();
    List<String> sent = new ArrayList<>();
    try (ExitChild.Server server = new ExitChild.Server(serverLog())) {
      Transport recording = (request, key) -> {
        sent.add(key.value());
        return server.send(request, key);
      };
      ResumeSummary summary = restarted(journal).resumePending(Map.of(ExitChild.OPERATION,
          ResumeHandler.of(recording, confirmed::add, f -> { throw new AssertionError(f); })));
      return new Resumed(summary, sent, confirmed);
    }
  }

  private static OperationId id(IdempotencyKey key) {
    return new OperationId(OperationId.DEFAULT_SCOPE, ExitChild.OPERATION, key);
  }

  /** The restarted process: its clock is past any lease the child held. */
  private static IdempotentExecutor restarted(JdbcJournal journal) {
    Clock later = Clock.fixed(Instant.now().plus(Duration.ofMinutes(10)), ZoneOffset.UTC);
    return IdempotentExecutor.builder().journal(journal).owner("restarted").clock(later)
        .retryPolicy(ExitChild.policy()).build();
  }
}
