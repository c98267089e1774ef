package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.jdbc.support.ChildJvm;
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

/**
 * kill -9 in the middle of a resume whose lanes claim the queued operations a batch at a time: the
 * operations claimed and not yet sent are, after the restart, what every claimed operation is
 * (maybe sent: an ambiguous attempt, resent with the same key), the never-claimed ones stay known
 * as never sent, and the restarted resume sends each unfinished operation once, with its key.
 */
class ResumeKillTest {
  private static final int COUNT = 200;
  private static final int LANES = 4;

  @TempDir
  Path tmp;

  @Test
  void aKillMidResumeLeavesEveryClaimedOperationMaybeSentAndEveryOtherUntouched() throws Exception {
    Path dir = tmp.resolve("journal");
    Path serverLog = tmp.resolve("server.log");
    ChildJvm.Result child = ChildJvm.run(tmp, ResumeKillChild.class, dir.toString(), serverLog.toString(),
        Integer.toString(COUNT), Integer.toString(LANES), "60");
    assertEquals(HaltingJournal.HALT_CODE, child.exitCode(), child.output());

    List<IdempotencyKey> keys = KillChild.keys(COUNT);
    Set<String> sent = new HashSet<>(Files.readAllLines(serverLog));
    assertEquals(60, sent.size(), "each key reached the server once before the halt");
    try (JdbcJournal journal = JdbcJournal.openEmbedded(dir)) {
      Set<String> unfinished = new HashSet<>();
      int claimedNotSent = 0;
      for (int i = 0; i < COUNT; i++) {
        OperationRecord r = journal.find(id(keys.get(i))).orElseThrow();
        String key = keys.get(i).value();
        assertEquals(KillChild.request(i), r.request());
        if (r.state() == OperationState.SUCCEEDED) {
          assertTrue(sent.contains(key), "succeeded without being sent: " + key);
          continue;
        }
        assertEquals(OperationState.PENDING, r.state(), key);
        unfinished.add(key);
        boolean maybeSent = r.attempts().stream().anyMatch(AttemptRecord::mayHaveTakenEffect);
        if (r.generation() == 0) {
          // Never claimed: known never to have been sent.
          assertEquals(List.of(), r.attempts(), key);
          assertTrue(!sent.contains(key), "sent without a durable claim: " + key);
        } else {
          assertTrue(maybeSent, "a claimed operation must count as maybe sent: " + r.attempts());
          if (!sent.contains(key)) {
            claimedNotSent++;
          }
        }
      }
      // Claimed ahead of the lanes: at most a batch and a half waiting, and one per lane taken.
      assertTrue(claimedNotSent <= LANES + LANES + LANES / 2, "claimed and not sent: " + claimedNotSent);

      List<String> resent = new ArrayList<>();
      restarted(journal).resumePending(Map.of("charge", ResumeHandler.of((request, key) -> {
        synchronized (resent) {
          resent.add(key.value());
        }
        return new ResponseSnapshot(201, Map.of("idempotent-replayed", List.of("true")),
            "{}".getBytes(StandardCharsets.UTF_8));
      }, o -> { }, f -> { throw new AssertionError(f); })));

      assertEquals(unfinished.size(), resent.size(), "each unfinished operation resent once");
      assertEquals(unfinished, new HashSet<>(resent), "the unfinished ones, with their journaled keys");
      for (IdempotencyKey key : keys) {
        assertEquals(OperationState.SUCCEEDED, journal.find(id(key)).orElseThrow().state());
      }
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
}
