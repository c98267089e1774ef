package dev.idem.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.spi.Transport;
import dev.idem.jdbc.support.FaultyDataSource;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a durable keyed call costs the journal, counted, not timed (issue 28): one INSERT (the
 * begin, the one synchronous write), one UPDATE for the claim and one for the attempt and its
 * outcome, and nothing read back. Before issue 28 the same call ran 3 SELECTs and 3 UPDATEs after
 * its INSERT (the claim, the attempt and the transition each read the row first, and the
 * transition parsed it).
 */
class DurableCallStatementsTest {
  @TempDir
  Path dir;

  @Test
  void aSuccessfulCallIsOneInsertAndTwoUpdatesWithNothingReadBack() throws Exception {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:file:" + dir.resolve("j") + ";WRITE_DELAY=0;TRACE_LEVEL_FILE=0");
    FaultyDataSource ds = new FaultyDataSource(h2);
    AtomicInteger sends = new AtomicInteger();
    Transport transport = (request, key) -> {
      sends.incrementAndGet();
      return Ops.ok("{\"id\":7}");
    };
    // A long deferred-commit interval: the background commit must not run a statement mid-count.
    try (JdbcJournal journal = JdbcJournal.dataSource(ds).deferredCommitInterval(Duration.ofHours(1)).open()) {
      IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();
      executor.execute(Operation.builder("charge", Ops.request("{}")).build(), transport); // warms the caches
      ds.onOperations.clear();

      Outcome outcome = executor.execute(Operation.builder("charge", Ops.request("{\"n\":2}")).build(), transport);

      assertEquals(Map.of("INSERT", 1, "UPDATE", 2), counts(ds));
      assertEquals(2, sends.get());
      assertEquals(1, outcome.attempts().size());
      var stored = journal.find(outcome.operationId()).orElseThrow();
      assertEquals(OperationState.SUCCEEDED, stored.state());
      assertEquals(outcome.attempts(), stored.attempts());
      assertEquals(Ops.ok("{\"id\":7}"), stored.response());
    }
  }

  private static Map<String, Integer> counts(FaultyDataSource ds) {
    Map<String, Integer> m = new TreeMap<>();
    ds.onOperations.forEach((verb, n) -> m.put(verb, n.get()));
    return m;
  }
}
