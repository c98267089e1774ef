package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * A full disk, as SQLite reports it ({@code SQLITE_FULL}), made real by capping the database's size
 * ({@code max_page_count}) rather than filling a disk: every failing write says whether its
 * request was sent and what stays durable, the journal goes on once there is room, and nothing it
 * acknowledged is lost.
 */
class SqliteDiskFullTest {
  @TempDir
  Path tmp;

  private SQLiteDataSource database(int maxPages) {
    SQLiteConfig config = new SQLiteConfig();
    config.setJournalMode(SQLiteConfig.JournalMode.WAL);
    config.setSynchronous(SQLiteConfig.SynchronousMode.FULL);
    config.setMaxPageCount(maxPages);
    SQLiteDataSource ds = new SQLiteDataSource(config);
    ds.setUrl("jdbc:sqlite:" + tmp.resolve("journal.db"));
    return ds;
  }

  @Test
  void aFullDiskFailsClearlyAndNothingAcknowledgedIsLostOnceThereIsRoom() throws Exception {
    Ops ops = new Ops(99);
    List<NewOperation> acknowledged = new ArrayList<>();
    NewOperation inFlight;
    Lease lease;
    JournalException beginFailure = null;
    String padding = "x".repeat(3000);
    try (JdbcJournal j = JdbcJournal.dataSource(database(40)).open()) {
      inFlight = ops.newOp("{\"first\":true}");
      j.begin(inFlight);
      lease = j.claim(inFlight.id(), "node", Ops.T0, Duration.ofMinutes(1)).orElseThrow();
      acknowledged.add(inFlight);
      for (int i = 0; i < 500 && beginFailure == null; i++) {
        NewOperation op = ops.newOp("{\"n\":" + i + ",\"pad\":\"" + padding + "\"}");
        try {
          j.begin(op);
          acknowledged.add(op);
        } catch (JournalException e) {
          beginFailure = e;
        }
      }
      assertTrue(beginFailure != null, "the capped database never filled up");
      assertTrue(beginFailure.getMessage().contains("disk is full"), beginFailure.getMessage());
      assertTrue(beginFailure.getMessage().contains("nothing was sent"), beginFailure.getMessage());

      // SQLite rolled the whole transaction back: the journal refuses everything until reopened, and says
      // what that means for an attempt that already went out.
      JournalException transitionFailure = assertThrows(JournalException.class, () -> j.transition(inFlight.id(),
          lease, Transition.finish(OperationState.SUCCEEDED, Ops.T0, new ResponseSnapshot(200, Map.of(),
              "{}".getBytes()), null)));
      assertTrue(transitionFailure.getMessage().contains("disk is full"), transitionFailure.getMessage());
      assertTrue(transitionFailure.getMessage().contains("reopen"), transitionFailure.getMessage());
      assertTrue(transitionFailure.getMessage().contains("already sent"), transitionFailure.getMessage());
    }

    // Room again (a bigger cap): the journal reopens, every acknowledged operation is there, and it writes.
    try (JdbcJournal j = JdbcJournal.dataSource(database(100_000)).open()) {
      assertEquals(acknowledged.size() + 0L, j.count(OperationState.PENDING) + j.count(OperationState.IN_FLIGHT),
          "exactly the acknowledged operations: the failed begin left no record");
      for (NewOperation op : acknowledged) {
        assertEquals(op.request(), j.find(op.id()).orElseThrow().request());
      }
      // An app's DataSource is one process's: the dead lease is settled as a possibly sent attempt.
      assertEquals(OperationState.PENDING, j.find(inFlight.id()).orElseThrow().state());
      assertTrue(j.find(inFlight.id()).orElseThrow().attempts().get(0).isAmbiguous());
      NewOperation after = ops.newOp("{\"after\":\"room\"}");
      assertTrue(j.begin(after).created());
    }
  }
}
