package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.OperationException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.core.Outcome;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.Transport;
import dev.idem.jdbc.support.ChildJvm;
import dev.idem.jdbc.support.Ops;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Durability against kill -9: a child JVM submits operations through the real executor on an H2
 * journal and halts ({@link Runtime#halt}, no shutdown hooks, nothing flushed) at a chosen point.
 * The journal is then reopened here, in another JVM, and must hold every operation whose begin
 * returned, and in particular every operation whose request reached the "server", with its key and
 * its request; a resume must then send exactly the unfinished ones, with the same keys.
 */
class JournalKillTest {
  private static final int COUNT = 5;

  @TempDir
  Path tmp;

  @ParameterizedTest(name = "halt {0}")
  @ValueSource(strings = {"after-begin", "after-send", "before-completion"})
  void everyBegunOperationSurvivesAKillWithItsKeyAndIsResumedOnce(String point) throws Exception {
    Path dir = tmp.resolve("journal");
    Path serverLog = tmp.resolve("server.log");
    ChildJvm.Result child = ChildJvm.run(tmp, KillChild.class, dir.toString(), serverLog.toString(), point,
        Integer.toString(COUNT), "1");
    assertEquals(HaltingJournal.HALT_CODE, child.exitCode(), "child did not halt where expected:\n" + child.output());

    List<IdempotencyKey> keys = KillChild.keys(COUNT);
    List<String> sent = Files.readAllLines(serverLog);
    List<String> expectedSent = keys.subList(0, point.equals("after-begin") ? COUNT - 1 : COUNT).stream()
        .map(IdempotencyKey::value).toList();
    assertEquals(expectedSent, sent, "the server saw each request once, up to the halt");

    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      for (int i = 0; i < COUNT; i++) {
        OperationRecord r = journal.find(id(keys.get(i))).orElse(null);
        assertTrue(r != null, "operation " + i + " (" + keys.get(i) + ") was lost by the kill");
        assertEquals(KillChild.request(i), r.request());
        if (i < COUNT - 1) {
          // its completion was carried to disk by the next operation's begin
          assertEquals(OperationState.SUCCEEDED, r.state(), "operation " + i);
        } else {
          // The dead child may have sent it: reopening counts an ambiguous attempt and makes it due,
          // unless the attempt's own SUCCESS record reached the disk before the halt (a group commit
          // may carry it), which says the same: the effect may exist.
          assertEquals(OperationState.PENDING, r.state());
          assertTrue(r.attempts().stream().anyMatch(AttemptRecord::mayHaveTakenEffect), r.attempts().toString());
        }
      }

      List<String> resent = new ArrayList<>();
      List<Outcome> outcomes = new ArrayList<>();
      List<OperationException> failures = new ArrayList<>();
      ResumeSummary summary = restarted(journal).resumePending(Map.of("charge",
          ResumeHandler.of(recording(resent), outcomes::add, failures::add)));

      assertEquals(List.of(keys.get(COUNT - 1).value()), resent, "only the unfinished operation is re-sent, with its key");
      assertEquals(1, summary.succeeded(), summary.toString());
      assertEquals(List.of(), failures);
      assertEquals(keys.get(COUNT - 1), outcomes.get(0).key());
      assertEquals(OperationState.SUCCEEDED, journal.find(id(keys.get(COUNT - 1))).orElseThrow().state());
    }
  }

  /**
   * Guarantee 4 across a crash: the child dies right after its first attempt reached the server,
   * before anything but begin was durable. The resend after the restart gets a 400 (the server
   * refuses it, as a server with no replay of the first answer might). The first attempt may have
   * taken effect, so the operation must end UNCERTAIN, never FAILED. Before the journal knew
   * durably that an attempt may leave, this came back PENDING with no attempts and ended FAILED.
   */
  @Test
  void aKillAfterTheFirstAttemptWentOutNeverEndsFailedWhenTheResendGetsA4xx() throws Exception {
    Path dir = tmp.resolve("journal");
    Path serverLog = tmp.resolve("server.log");
    ChildJvm.Result child = ChildJvm.run(tmp, KillChild.class, dir.toString(), serverLog.toString(), "after-send",
        "1", "1");
    assertEquals(HaltingJournal.HALT_CODE, child.exitCode(), child.output());
    IdempotencyKey key = KillChild.keys(1).get(0);
    assertEquals(List.of(key.value()), Files.readAllLines(serverLog), "attempt 1 reached the server");

    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      List<String> resent = new ArrayList<>();
      List<OperationException> failures = new ArrayList<>();
      Transport refusing = (request, k) -> {
        resent.add(k.value());
        return new ResponseSnapshot(400, Map.of(), "{\"error\":\"bad request\"}".getBytes(StandardCharsets.UTF_8));
      };
      ResumeSummary summary = restarted(journal).resumePending(Map.of("charge",
          ResumeHandler.of(refusing, o -> fail("a 400 is not a success"), failures::add)));

      assertEquals(List.of(key.value()), resent, "resent once, with the same key");
      OperationRecord r = journal.find(id(key)).orElseThrow();
      assertEquals(OperationState.UNCERTAIN, r.state(), summary + " " + r.attempts());
      assertEquals(1, failures.size());
      assertTrue(failures.get(0) instanceof OperationUncertainException, failures.get(0).toString());
    }
  }

  /**
   * Negative control: the same kill on a child that journals in memory only loses operations whose
   * begin returned. It shows that the checks above can fail, so their passing means something.
   */
  @Test
  void negativeControlWithoutADurableJournalTheKillLosesBegunOperations() throws Exception {
    Path dir = tmp.resolve("journal");
    Path serverLog = tmp.resolve("server.log");
    ChildJvm.Result child = ChildJvm.run(tmp, KillChild.class, dir.toString(), serverLog.toString(), "after-begin",
        Integer.toString(COUNT), "1", "unsafe-in-memory");
    assertEquals(HaltingJournal.HALT_CODE, child.exitCode(), "child did not halt where expected:\n" + child.output());

    List<IdempotencyKey> keys = KillChild.keys(COUNT);
    int lost = 0;
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      for (int i = 0; i < COUNT; i++) {
        if (journal.find(id(keys.get(i))).isEmpty()) {
          lost++;
        }
      }
    }
    assertTrue(lost > 0, "without a durable journal the kill was expected to lose begun operations; none was lost,"
        + " so this test cannot tell a durable journal from a non-durable one");
  }

  @Test
  void underConcurrencyEveryRequestThatWentOutHasItsDurableRecord() throws Exception {
    Path dir = tmp.resolve("journal");
    Path serverLog = tmp.resolve("server.log");
    int count = 400;
    ChildJvm.Result child = ChildJvm.run(tmp, KillChild.class, dir.toString(), serverLog.toString(),
        "after-sends:150", Integer.toString(count), "16");
    assertEquals(HaltingJournal.HALT_CODE, child.exitCode(), child.output());

    List<IdempotencyKey> keys = KillChild.keys(count);
    Set<String> sent = new HashSet<>(Files.readAllLines(serverLog));
    assertTrue(sent.size() >= 150, "sent " + sent.size());
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      Set<String> journaled = new HashSet<>();
      for (int i = 0; i < count; i++) {
        var r = journal.find(id(keys.get(i)));
        if (r.isPresent()) {
          journaled.add(keys.get(i).value());
          assertEquals(KillChild.request(i), r.get().request());
        }
      }
      Set<String> sentButLost = new HashSet<>(sent);
      sentButLost.removeAll(journaled);
      assertEquals(Set.of(), sentButLost, "requests went out without a durable record");

      List<String> resent = new ArrayList<>();
      restarted(journal).resumePending(Map.of("charge", ResumeHandler.of(recording(resent), o -> { }, f -> { })));
      assertEquals(resent.size(), new HashSet<>(resent).size(), "an operation was resumed twice");
      for (String k : journaled) {
        assertEquals(OperationState.SUCCEEDED, journal.find(id(IdempotencyKey.of(k))).orElseThrow().state());
      }
    }
  }

  /** A purge is durable when it returns: a kill right after it does not bring purged operations back. */
  @Test
  void aPurgeIsNotUndoneByAKill() throws Exception {
    Path dir = tmp.resolve("journal");
    int count = 5;
    ChildJvm.Result child = ChildJvm.run(tmp, PurgeThenHaltChild.class, dir.toString(), Integer.toString(count));
    assertEquals(HaltingJournal.HALT_CODE, child.exitCode(), "child did not halt where expected:\n" + child.output());

    Ops ops = new Ops(PurgeThenHaltChild.SEED);
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      for (int i = 0; i < count; i++) {
        NewOperation purged = ops.newOp("{\"n\":" + i + "}");
        assertTrue(journal.find(purged.id()).isEmpty(), "purged operation " + i + " came back after the kill");
      }
      NewOperation after = ops.newOp("{\"after\":\"the purge\"}");
      assertEquals(OperationState.PENDING, journal.find(after.id()).orElseThrow().state(),
          "the begin after the purge survives the kill");
      assertEquals(1, journal.findByState(OperationState.PENDING, null, 10).size());
    }
  }

  private static OperationId id(IdempotencyKey key) {
    return new OperationId(OperationId.DEFAULT_SCOPE, "charge", key);
  }

  /** The restarted process: its clock is past any lease the dead child held. */
  private static IdempotentExecutor restarted(JdbcJournal journal) {
    Clock later = Clock.fixed(Instant.now().plus(Duration.ofMinutes(10)), ZoneOffset.UTC);
    return IdempotentExecutor.builder().journal(journal).owner("restarted").clock(later).build();
  }

  private static Transport recording(List<String> resent) {
    return (request, key) -> {
      synchronized (resent) {
        resent.add(key.value());
      }
      return new ResponseSnapshot(201, Map.of("idempotent-replayed", List.of("true")),
          "{}".getBytes(StandardCharsets.UTF_8));
    };
  }
}
