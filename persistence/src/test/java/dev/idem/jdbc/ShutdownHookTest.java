package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.JournalException;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.support.FaultyDataSource;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded journal's JVM shutdown hook, run in this JVM by hand (a real exit is
 * {@link JournalExitTest}'s): registered by default, removed by an explicit close, optional, clean,
 * clear to callers that come after it, and bounded in time.
 */
class ShutdownHookTest {
  @TempDir
  Path tmp;
  private final Ops ops = new Ops(24);

  private Path dir() {
    return tmp.resolve("journal");
  }

  @Test
  void anEmbeddedJournalRegistersItsHookAndAnExplicitCloseRemovesIt() throws Exception {
    JdbcJournal first = JdbcJournal.openEmbedded(dir());
    Thread hook = first.shutdownHook();
    assertNotNull(hook, "on by default for the embedded journal");
    first.close();
    assertFalse(Runtime.getRuntime().removeShutdownHook(hook), "close() removed it");

    JdbcJournal second = JdbcJournal.openEmbedded(dir());
    assertTrue(Runtime.getRuntime().removeShutdownHook(second.shutdownHook()), "registered with the JVM");
    second.close();
  }

  @Test
  void theHookIsOptionalAndADataSourceJournalHasNoneUnlessAskedFor() throws Exception {
    try (JdbcJournal j = JdbcJournal.embedded(dir()).closeOnShutdown(false).open()) {
      assertNull(j.shutdownHook());
    }
    try (JdbcJournal j = JdbcJournal.dataSource(h2("a")).open()) {
      assertNull(j.shutdownHook());
    }
    try (JdbcJournal j = JdbcJournal.dataSource(h2("b")).closeOnShutdown(true).open()) {
      assertNotNull(j.shutdownHook());
    }
  }

  @Test
  void theHookMakesDeferredWritesDurableClosesCleanlyAndTellsLaterCallersWhy() throws Exception {
    NewOperation op = ops.newOp("{}");
    JdbcJournal j = JdbcJournal.embedded(dir()).deferredCommitInterval(Duration.ofHours(1)).open();
    j.begin(op);
    Lease lease = j.claim(op.id(), "n", T0, Duration.ofMinutes(1)).orElseThrow();
    j.transition(op.id(), lease, Transition.finish(OperationState.SUCCEEDED, T0, Ops.ok("{}"), null));

    j.shutdownHook().run();

    assertFalse(Files.exists(dir().resolve("idem-journal.open")), "a clean close");
    JournalException e = assertThrows(JournalException.class, () -> j.find(op.id()));
    assertTrue(e.getMessage().contains("closed by its JVM shutdown hook"), e.getMessage());
    try (JdbcJournal reopened = JdbcJournal.openEmbedded(dir())) {
      assertEquals(OperationState.SUCCEEDED, reopened.find(op.id()).orElseThrow().state());
    }
  }

  /** A close stuck on a disk that stopped answering must not hold the JVM's exit. */
  @Test
  void theHookStopsWaitingForAStuckCloseAfterItsTimeout() throws Exception {
    FaultyDataSource faulty = new FaultyDataSource(h2("stuck"));
    JdbcJournal j = JdbcJournal.dataSource(faulty).closeOnShutdown(true)
        .shutdownCloseTimeout(Duration.ofMillis(200)).deferredCommitInterval(Duration.ofHours(1)).open();
    NewOperation op = ops.newOp("{}");
    j.begin(op);
    j.claim(op.id(), "n", T0, Duration.ofMinutes(1)).orElseThrow();  // deferred: the close must commit it
    CountDownLatch release = new CountDownLatch(1);
    faulty.holdFirstSync = release;
    try {
      long started = System.nanoTime();
      j.shutdownHook().run();
      long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

      assertTrue(faulty.firstSyncHeld.await(0, TimeUnit.SECONDS), "the close was stuck in its disk sync");
      assertTrue(tookMillis >= 200 && tookMillis < 10_000, "the hook returned after its timeout: " + tookMillis + " ms");
    } finally {
      release.countDown();
    }
  }

  private JdbcDataSource h2(String name) {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:file:" + tmp.resolve(name) + ";WRITE_DELAY=0;TRACE_LEVEL_FILE=0");
    return h2;
  }
}
