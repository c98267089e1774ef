package dev.idem.examples.crashloop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.examples.childjvm.ChildJvm;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.ChildProcesses;
import dev.idem.okhttp.IdemOkHttp;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The journal's promise under a crash loop, as an operator would test it: child JVMs submit
 * operations (inline through the OkHttp interceptor, and through the outbox; one and eight
 * threads) against the reference server held by this JVM. Each child is SIGKILLed at a random
 * moment, 0 to 300 ms after it starts submitting (one cycle in five: 0 to 300 ms after it started,
 * often during startup), and the next child reopens the same directory and resumes. At the end a
 * last, unkilled incarnation resumes until everything settles.
 *
 * <p>It fails if any acknowledged operation is lost, any key has two effects or two payloads at
 * the server, any request reached the server without a journal record, a SUCCEEDED operation has
 * no effect, or any operation never settles. It prints what it saw. Cycles: 50 by default;
 * {@code -Didem.crashloop.cycles=N} (the {@code crash-loop} profile runs 1,000); the seed with
 * {@code -Didem.crashloop.seed}.
 */
class CrashLoopTest {
  private static final int CYCLES = Integer.getInteger("idem.crashloop.cycles", 50);
  private static final long SEED = Long.getLong("idem.crashloop.seed", 20261201L);
  private static final String[][] MODES = {{"sync", "1"}, {"sync", "8"}, {"outbox", "1"}, {"outbox", "8"}};

  @TempDir
  Path tmp;

  @Test
  void killedAgainAndAgainTheJournalLosesNothingAndSendsEachOperationOnce() throws Exception {
    Path dir = tmp.resolve("journal");
    Path acks = tmp.resolve("acks.txt");
    Random random = new Random(SEED);
    int killedDuringStartup = 0;
    int exitedOnTheirOwn = 0;
    // The children are closed first: however a cycle fails, none outlives the test.
    try (IdempotentServer server = IdempotentServer.start(); ChildProcesses children = new ChildProcesses()) {
      String base = server.url("/").toString();
      for (int cycle = 0; cycle < CYCLES; cycle++) {
        String[] mode = MODES[cycle % MODES.length];
        Path log = tmp.resolve("child-" + cycle + ".log");
        Process child = children.add(
            child(dir, base, mode[0], mode[1], acks, cycle).redirectOutput(log.toFile()).start());
        boolean duringStartup = random.nextInt(5) == 0;
        long delayMs = random.nextInt(301);
        if (duringStartup) {
          killedDuringStartup++;
        } else if (!ChildJvm.awaitLine(child, log, "SUBMITTING", Duration.ofSeconds(30))) {
          child.destroyForcibly();
          child.waitFor(30, TimeUnit.SECONDS);
          throw new AssertionError("cycle " + cycle + ": the child never started submitting:\n" + Files.readString(log));
        }
        if (child.waitFor(delayMs, TimeUnit.MILLISECONDS)) {
          exitedOnTheirOwn++;
        } else {
          child.destroyForcibly(); // SIGKILL: no shutdown hooks, no finally blocks, no close
          assertTrue(child.waitFor(30, TimeUnit.SECONDS), "cycle " + cycle + ": the child did not die");
        }
      }

      Report report = settleAndCheck(dir, server, acks);
      System.out.printf("CrashLoopTest: %d cycles (%d killed during startup, %d finished before the kill),"
              + " %d operations acknowledged, %d journaled, %d requests at the server;"
              + " lost %d, duplicate effects %d, keys with two payloads %d, sent without a record %d,"
              + " succeeded without an effect %d, stuck %d; final states %s%n",
          CYCLES, killedDuringStartup, exitedOnTheirOwn, report.acknowledged, report.journaled,
          server.requestCount(), report.lost.size(), report.duplicateEffects.size(), report.twoPayloads.size(),
          report.sentWithoutRecord.size(), report.succeededWithoutEffect.size(), report.stuck.size(), report.states);
      assertTrue(report.acknowledged > 0, "the loop acknowledged nothing: the test tested nothing");
      assertEquals(List.of(), report.lost, "acknowledged operations lost");
      assertEquals(List.of(), report.duplicateEffects, "keys with more than one effect");
      assertEquals(List.of(), report.twoPayloads, "keys sent with two payloads");
      assertEquals(List.of(), report.sentWithoutRecord, "requests that reached the server with no journal record");
      assertEquals(List.of(), report.succeededWithoutEffect, "SUCCEEDED with no effect at the server");
      assertEquals(List.of(), report.stuck, "operations that never settled");
    }
  }

  private record Report(int acknowledged, int journaled, List<String> lost, List<String> duplicateEffects,
      List<String> twoPayloads, List<String> sentWithoutRecord, List<String> succeededWithoutEffect,
      List<String> stuck, Map<OperationState, Integer> states) {
  }

  /** A last incarnation, never killed, resumes until nothing is left to do; then the checks. */
  private static Report settleAndCheck(Path dir, IdempotentServer server, Path acks) throws Exception {
    Set<String> acknowledged = new LinkedHashSet<>();
    if (Files.exists(acks)) {
      String text = Files.readString(acks, StandardCharsets.US_ASCII);
      int end = text.lastIndexOf('\n');
      for (String line : text.substring(0, end + 1).split("\n")) {
        if (!line.isBlank()) {
          acknowledged.add(line.strip());
        }
      }
    }
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      IdempotentExecutor executor = CrashLoopChild.executor(journal, Duration.ofMillis(500));
      IdemOkHttp idem = IdemOkHttp.builder(executor).build();
      OkHttpClient client = CrashLoopChild.client(idem);
      long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
      while (System.nanoTime() < deadline && unsettled(journal) > 0) {
        var summary = executor.resumePending(Map.of(CrashLoopChild.OPERATION, CrashLoopChild.handler(idem, client)));
        if (System.getProperty("idem.crashloop.debug") != null) {
          System.out.println("final resume: " + summary);
        }
        if (unsettled(journal) > 0) {
          Thread.sleep(100);
        }
      }

      Map<OperationState, Integer> states = new HashMap<>();
      Map<String, OperationRecord> byKey = new HashMap<>();
      for (OperationState s : OperationState.values()) {
        OperationId after = null;
        while (true) {
          List<OperationRecord> page = journal.findByState(s, after, 500);
          if (page.isEmpty()) {
            break; // only an empty page is the last: a journal may end one short while more follow
          }
          for (OperationRecord r : page) {
            byKey.put(r.id().key().value(), r);
            states.merge(s, 1, Integer::sum);
          }
          after = page.get(page.size() - 1).id();
        }
      }
      List<String> lost = new ArrayList<>();
      for (String key : acknowledged) {
        if (!byKey.containsKey(key)) {
          lost.add(key);
        }
      }
      Map<String, Set<String>> payloads = new HashMap<>();
      for (ReceivedRequest r : server.recordedRequests()) {
        r.keyHeader().ifPresent(k -> payloads.computeIfAbsent(k, x -> new HashSet<>()).add(r.body()));
      }
      List<String> duplicateEffects = new ArrayList<>();
      List<String> twoPayloads = new ArrayList<>();
      List<String> sentWithoutRecord = new ArrayList<>();
      for (Map.Entry<String, Set<String>> e : payloads.entrySet()) {
        if (server.effectCount(e.getKey()) > 1) {
          duplicateEffects.add(e.getKey() + " x" + server.effectCount(e.getKey()));
        }
        if (e.getValue().size() > 1) {
          twoPayloads.add(e.getKey());
        }
        if (!byKey.containsKey(e.getKey())) {
          sentWithoutRecord.add(e.getKey());
        }
      }
      List<String> succeededWithoutEffect = new ArrayList<>();
      List<String> stuck = new ArrayList<>();
      for (OperationRecord r : byKey.values()) {
        if (!r.state().isTerminal()) {
          stuck.add(r.id() + " " + r.state() + " next " + r.nextAttemptAt() + " reason " + r.reason() + " attempts "
              + r.attempts());
        } else if (r.state() == OperationState.SUCCEEDED && server.effectCount(r.id().key().value()) != 1) {
          succeededWithoutEffect.add(r.id().toString());
        }
      }
      return new Report(acknowledged.size(), byKey.size(), lost, duplicateEffects, twoPayloads, sentWithoutRecord,
          succeededWithoutEffect, stuck, states);
    }
  }

  private static long unsettled(JdbcJournal journal) throws Exception {
    return journal.count(OperationState.PENDING) + journal.count(OperationState.IN_FLIGHT);
  }

  private static ProcessBuilder child(Path dir, String base, String mode, String threads, Path acks, int cycle) {
    return ChildJvm.builder(CrashLoopChild.class,
        List.of(dir.toString(), base, mode, threads, acks.toString(), Integer.toString(cycle)));
  }
}
