package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.JournalException;
import dev.idem.core.Operation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.resume.ResumeHandler;
import dev.idem.core.spi.Transport;
import dev.idem.core.testing.VirtualTime;
import dev.idem.jdbc.support.CommitReplyLost;
import dev.idem.jdbc.support.Ops;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * A begin whose COMMIT was not confirmed (the connection dropped while the database answered it)
 * may or may not be durable. The journal makes the begin's write again on a fresh connection: if
 * the first did not take effect, the second does and the call goes on; when it cannot be made, the
 * caller is told the operation may have been journaled and to retry with the same key; and a
 * resume then sends it with that key. (ReviewPostgresInDoubtBeginCommitTest and
 * ReviewPostgresInDoubtBeginFoundOwnRowTest cover the row that is there: the call goes on with it.)
 */
@ExtendWith(PostgresExtension.class)
class UnconfirmedBeginCommitTest {
  private final Ops ops = new Ops(4343);
  private final VirtualTime time = new VirtualTime(T0);
  private final List<IdempotencyKey> sent = new CopyOnWriteArrayList<>();
  private final Transport server = (request, key) -> {
    sent.add(key);
    return Ops.ok("{\"id\":1}");
  };

  @TempDir
  Path tmp;

  @Test
  void aCommitThatFailedWithoutCommittingIsMadeAgainAndTheCallSendsOnceWithItsKey(PgDatabase db) throws Exception {
    CommitReplyLost flaky = new CommitReplyLost(db.dataSource());
    flaky.commitFirst = false;
    try (JdbcJournal journalA = JdbcJournal.dataSource(flaky).open();
        JdbcJournal journalB = JdbcJournal.dataSource(db.dataSource()).open()) {
      Operation op = operation();
      flaky.armed.set(true);
      executor(journalA, "instance-a").execute(op, server);
      assertFalse(flaky.armed.get(), "the begin's commit failed");
      assertEquals(List.of(op.id().key()), sent);
      assertEquals(OperationState.SUCCEEDED, journalB.find(id(op)).orElseThrow().state());
      time.advance(Duration.ofMinutes(3));
      executor(journalB, "instance-b").resumePending(handlers());
      assertEquals(List.of(op.id().key()), sent, "one send, by the caller; none by instance-b's resume");
    }
  }

  @Test
  void aCommitWhoseRowCannotBeReadAgainIsReportedMaybeJournaledAndIsResumedWithItsKey(PgDatabase db)
      throws Exception {
    CommitReplyLost flaky = new CommitReplyLost(db.dataSource());
    flaky.downAfterFailure = true;
    try (JdbcJournal journalA = JdbcJournal.dataSource(flaky).open();
        JdbcJournal journalB = JdbcJournal.dataSource(db.dataSource()).open()) {
      Operation op = operation();
      flaky.armed.set(true);
      JournalException e = assertThrows(JournalException.class, () -> executor(journalA, "instance-a").execute(op,
          server));
      assertMaybeJournaled(e);
      assertEquals(List.of(), sent);

      assertEquals(OperationState.IN_FLIGHT, journalB.find(id(op)).orElseThrow().state());
      time.advance(Duration.ofMinutes(3)); // past instance-a's lease
      executor(journalB, "instance-b").resumePending(handlers());
      assertEquals(List.of(op.id().key()), sent, "resumed once, with the key the caller was told to retry with");
    }
  }

  @Test
  void onAnAppsSqliteFileAFailedCommitIsReportedMaybeJournaledAndAReopenResumesItWithItsKey() throws Exception {
    SQLiteConfig config = new SQLiteConfig();
    config.setJournalMode(SQLiteConfig.JournalMode.WAL);
    SQLiteDataSource file = new SQLiteDataSource(config);
    file.setUrl("jdbc:sqlite:" + tmp.resolve("app.db"));
    CommitReplyLost flaky = new CommitReplyLost(file);
    Operation op = operation();
    try (JdbcJournal journal = JdbcJournal.dataSource(flaky).open()) {
      flaky.armed.set(true);
      JournalException e = assertThrows(JournalException.class, () -> executor(journal, "instance-a").execute(op,
          server));
      // The store is unusable after a failed commit: the row cannot be read again before a reopen.
      assertMaybeJournaled(e);
    } catch (JournalException closeAfterFailure) {
      // the broken store's close may report the failure again
    }
    assertEquals(List.of(), sent);
    // The journal's clock too: its crash recovery makes the operation due at its own now.
    try (JdbcJournal reopened = JdbcJournal.dataSource(file).clock(time.clock()).open()) {
      assertTrue(reopened.find(id(op)).isPresent(), "the commit was carried out");
      executor(reopened, "instance-a").resumePending(handlers());
      assertEquals(List.of(op.id().key()), sent);
      assertEquals(OperationState.SUCCEEDED, reopened.find(id(op)).orElseThrow().state());
    }
  }

  private static void assertMaybeJournaled(JournalException e) {
    assertTrue(e.getMessage().contains("MAY have been journaled"), e.getMessage());
    assertTrue(e.getMessage().contains("Retry with the same key"), e.getMessage());
    assertFalse(e.getMessage().contains("no durable record"), e.getMessage());
  }

  private Operation operation() {
    return Operation.builder("create-order", Ops.request("{\"amount\":100}")).key(ops.key()).build();
  }

  private static OperationId id(Operation op) {
    return new OperationId(op.id().scope(), op.id().operation(), op.id().key());
  }

  private Map<String, ResumeHandler> handlers() {
    return Map.of("create-order", ResumeHandler.of(server, o -> { }, f -> { }));
  }

  private IdempotentExecutor executor(JdbcJournal journal, String owner) {
    return IdempotentExecutor.builder().journal(journal).owner(owner).clock(time.clock())
        .scheduler(time.scheduler()).sleeper(time.sleeper()).random(() -> 0.5).build();
  }
}
