package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.resume.ResumeSummary;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import dev.idem.core.spi.Transport;
import dev.idem.jdbc.support.FaultyDataSource;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * A resume with several lanes claims the queued operations a batch at a time ({@code
 * Journal.claimAll}): one unit of work and one commit for the batch, one fenced UPDATE per
 * operation, nothing read to claim it (issue 28, P4).
 */
class ResumeClaimBatchTest {
  private static final int LANES = 8;
  private static final int OPERATIONS = 64;

  @TempDir
  Path dir;

  /**
   * Why: each resumed operation's claim was a durable write of its own (an UPDATE that matched
   * nothing, a SELECT of the row, the claiming UPDATE), which its lane waited for before sending.
   * Counted, not timed: before, the resume ran 64 more SELECTs and 64 more UPDATEs on the table, and
   * a commit per group of claims that happened to meet in the writer's queue.
   */
  @Test
  void aResumeWithSeveralLanesClaimsEachOperationWithOneUpdateInOneCommitPerBatch() throws Exception {
    SQLiteDataSource sqlite = new SQLiteDataSource();
    sqlite.setUrl("jdbc:sqlite:" + dir.resolve("j.db"));
    FaultyDataSource ds = new FaultyDataSource(sqlite);
    // A long deferred-commit interval: no background commit runs while the statements are counted.
    try (JdbcJournal journal = JdbcJournal.dataSource(ds).deferredCommitInterval(Duration.ofHours(1)).open()) {
      IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).resumeConcurrency(LANES).build();
      List<OperationId> ids = new ArrayList<>();
      for (int i = 0; i < OPERATIONS; i++) {
        ids.add(executor.enqueue(Operation.builder("charge", Ops.request("{\"n\":" + i + "}")).build()).id());
      }
      ds.onOperations.clear();
      ds.statements.clear();
      ds.commits.set(0);
      ds.writeCommits.set(0);
      ConcurrentMap<IdempotencyKey, Integer> sends = new ConcurrentHashMap<>();
      Transport transport = (request, key) -> {
        sends.merge(key, 1, Integer::sum);
        return Ops.ok("{\"id\":7}");
      };

      ResumeSummary summary = executor.resumePending(Map.of("charge",
          ResumeHandler.of(transport, o -> { }, f -> { throw new AssertionError(f); })));

      assertEquals(OPERATIONS, summary.succeeded(), summary.toString());
      assertEquals(ids.size(), sends.size());
      assertTrue(ids.stream().allMatch(id -> sends.get(id.key()) == 1), "each sent once, with its journaled key");
      // Per operation: its claim, its attempt and outcome, its delivery mark.
      assertEquals(3 * OPERATIONS, ds.onOperations.get("UPDATE").get(), "UPDATEs: " + ds.onOperations);
      // The page reads only (owed outcomes, the due page's two queries, the leases held elsewhere).
      assertTrue(ds.onOperations.get("SELECT").get() <= 6, "SELECTs: " + ds.onOperations);
      // Only the claims are durable writes: at most one commit per batch of LANES. (The journal
      // also ends each page read's transaction with a commit of nothing, so as not to pin the app's
      // WAL; those are not counted.)
      assertTrue(ds.writeCommits.get() <= OPERATIONS / LANES, "commits with writes: " + ds.writeCommits.get());
      for (OperationId id : ids) {
        assertEquals(OperationState.SUCCEEDED, journal.find(id).orElseThrow().state());
      }
    }
  }

  /**
   * The batch claims an operation only if its row is still as read: one claimed by another owner,
   * or ended, since the read gets no lease (its caller claims it alone and learns why); an expired
   * lease is taken over, and says so; a reopen treats the claimed rows as it treats every claimed
   * row.
   */
  @Test
  void theBatchClaimsOnlyRowsStillAsReadAndItsClaimsAreDurable() throws Exception {
    Ops ops = new Ops(28);
    Path journalDir = dir.resolve("embedded");
    Instant now = Ops.T0.plusSeconds(10);
    List<OperationId> ids = new ArrayList<>();
    List<OperationRecord> asRead = new ArrayList<>();
    Lease expired;
    try (JdbcJournal journal = JdbcJournal.openEmbedded(journalDir)) {
      for (int i = 0; i < 4; i++) {
        OperationId id = ops.id("charge");
        NewOperation op = Ops.op(id, "{\"n\":" + i + "}");
        journal.begin(new NewOperation(id, null, op.fingerprint(), op.request(), Ops.T0, true));
        ids.add(id);
      }
      // The third is IN_FLIGHT under a lease that expired before now: taken over.
      expired = journal.claim(ids.get(2), "dead", Ops.T0, Duration.ofSeconds(1)).orElseThrow();
      for (OperationId id : ids) {
        asRead.add(journal.find(id).orElseThrow());
      }
      // After the read: the second is claimed by another owner, the fourth ends FAILED.
      journal.claim(ids.get(1), "other", now, Duration.ofMinutes(2)).orElseThrow();
      Lease fourth = journal.claim(ids.get(3), "other", now, Duration.ofMinutes(2)).orElseThrow();
      journal.transition(ids.get(3), fourth, Transition.finish(OperationState.FAILED, now, null, "refused"));

      List<Optional<Lease>> leases = journal.claimAll(asRead, "me", now, Duration.ofMinutes(2));

      assertEquals(4, leases.size());
      assertEquals(Optional.of(new Lease("me", 1, now.plus(Duration.ofMinutes(2)), false)), leases.get(0));
      assertFalse(leases.get(1).isPresent(), "claimed by another owner since it was read");
      assertEquals(Optional.of(new Lease("me", expired.generation() + 1, now.plus(Duration.ofMinutes(2)), true)),
          leases.get(2));
      assertFalse(leases.get(3).isPresent(), "ended since it was read");
    }
    try (JdbcJournal reopened = JdbcJournal.openEmbedded(journalDir)) {
      assertEquals(1, reopened.find(ids.get(1)).orElseThrow().generation(), "only the other owner's claim");
      assertEquals(OperationState.FAILED, reopened.find(ids.get(3)).orElseThrow().state());
      // A claimed row found at open is treated as any claimed row, whether or not it was sent: it
      // may have been, so it is PENDING again with an ambiguous attempt, resent with its key.
      for (int i : new int[] {0, 2}) {
        OperationRecord r = reopened.find(ids.get(i)).orElseThrow();
        assertEquals(OperationState.PENDING, r.state(), "operation " + i);
        assertEquals(i == 0 ? 1 : expired.generation() + 1, r.generation(), "operation " + i + "'s batch claim");
        assertTrue(r.attempts().stream().anyMatch(AttemptRecord::mayHaveTakenEffect), r.attempts().toString());
      }
    }
  }
}
