package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.JournalException;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.Operation;
import dev.idem.core.spi.Transport;
import dev.idem.jdbc.support.FaultyDataSource;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** When the journal cannot be written, calls fail fast with a JournalException and nothing is sent. */
class JournalFaultTest {
  @TempDir
  Path dir;
  private final Ops ops = new Ops(11);
  private final AtomicInteger sends = new AtomicInteger();
  private final Transport transport = (request, key) -> {
    sends.incrementAndGet();
    return Ops.ok("{}");
  };
  private FaultyDataSource faulty;
  private JdbcJournal journal;

  @BeforeEach
  void open() throws Exception {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:file:" + dir.resolve("j") + ";WRITE_DELAY=0;TRACE_LEVEL_FILE=0");
    faulty = new FaultyDataSource(h2);
    journal = JdbcJournal.dataSource(faulty).open();
  }

  @AfterEach
  void close() {
    try {
      journal.close();
    } catch (dev.idem.core.IdempotencyException ignored) {
      // some tests break the journal on purpose
    }
  }

  @Test
  void aFullDiskFailsBeginAndNothingIsSent() throws Exception {
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();
    faulty.failWrites = true;

    Operation op = Operation.builder("charge", Ops.request("{}")).build();
    JournalException e = assertThrows(JournalException.class, () -> executor.execute(op, transport));

    assertTrue(e.getMessage().contains("the disk is full"), e.getMessage());
    assertEquals(0, sends.get());
    assertTrue(journal.find(op.id()).isEmpty());

    faulty.failWrites = false; // the failed statement was rolled back alone; the journal goes on
    executor.execute(op, transport);
    assertEquals(1, sends.get());
  }

  @Test
  void aFailedCommitMakesEveryLaterCallFailFastUntilReopened() throws Exception {
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();
    faulty.failCommits = true;

    Operation first = Operation.builder("charge", Ops.request("{}")).build();
    JournalException e = assertThrows(JournalException.class, () -> executor.execute(first, transport));
    assertTrue(e.getMessage().contains("commit"), e.getMessage());

    faulty.failCommits = false;
    NewOperation later = ops.newOp("{}");
    JournalException again = assertThrows(JournalException.class, () -> journal.begin(later));
    assertTrue(again.getMessage().contains("unusable after a failed write"), again.getMessage());
    assertThrows(JournalException.class, () -> executor.execute(Operation.builder("charge", Ops.request("{}")).build(),
        transport));
    assertEquals(0, sends.get());
  }
}
