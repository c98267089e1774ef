package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.support.FaultyDataSource;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A call that runs while another thread closes the journal (the shutdown hook does that while the
 * app's threads still call) either completes and is committed by the close, or is refused with a
 * {@link JournalException}: never told "done" and then rolled back with the connection.
 */
class CloseRaceTest {
  @TempDir
  Path tmp;
  private final Ops ops = new Ops(77);

  @Test
  void aTransitionWhileTheCloseCommitsIsEitherKeptOrRefusedNeverAcknowledgedAndLost() throws Exception {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:file:" + tmp.resolve("j") + ";WRITE_DELAY=0;TRACE_LEVEL_FILE=0");
    FaultyDataSource faulty = new FaultyDataSource(h2);
    JdbcJournal journal = JdbcJournal.dataSource(faulty).deferredCommitInterval(Duration.ofHours(1)).open();
    NewOperation op = ops.newOp("{}");
    journal.begin(op);
    Lease lease = journal.claim(op.id(), "n", T0, Duration.ofMinutes(1)).orElseThrow();

    // The close's commit is held in its disk sync: the close has begun and not finished.
    CountDownLatch release = new CountDownLatch(1);
    faulty.holdFirstSync = release;
    AtomicReference<Throwable> closeFailure = new AtomicReference<>();
    Thread closer = new Thread(() -> {
      try {
        journal.close();
      } catch (Exception | Error e) {
        closeFailure.set(e);
      }
    }, "closer");
    closer.start();
    assertTrue(faulty.firstSyncHeld.await(10, TimeUnit.SECONDS), "the close is committing");

    boolean told;
    try {
      journal.transition(op.id(), lease, Transition.finish(OperationState.SUCCEEDED, T0, Ops.ok("{}"), null));
      told = true;
    } catch (JournalException e) {
      assertTrue(e.getMessage().contains("is closed"), e.getMessage());
      told = false;
    } finally {
      release.countDown();
    }
    closer.join(TimeUnit.SECONDS.toMillis(10));
    assertEquals(null, closeFailure.get());

    try (JdbcJournal reopened = JdbcJournal.dataSource(h2).open()) {
      OperationRecord r = reopened.find(op.id()).orElseThrow();
      if (told) {
        assertEquals(OperationState.SUCCEEDED, r.state(), "the caller was told SUCCEEDED: " + r);
      } else {
        assertTrue(r.hasAmbiguousAttempt(), "refused: the claim stands, recovered as maybe sent: " + r);
      }
    }
  }
}
