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
import org.sqlite.SQLiteDataSource;

/**
 * What a durable keyed call costs the journal, counted, not timed (issue 28): one INSERT (the
 * begin, the one synchronous write, which claims the row it inserts), one UPDATE for the attempt
 * and its outcome, and nothing read back. Before issue 28 the same call ran 3 SELECTs and 3
 * UPDATEs after its INSERT (the claim, the attempt and the transition each read the row first, and
 * the transition parsed it); before the begin claimed, the claim was an UPDATE of its own. And no unit of it sets a savepoint: each writes with one statement, which
 * the database undoes whole if it fails (before: a SAVEPOINT and, on SQLite, a RELEASE per unit).
 */
class DurableCallStatementsTest {
  @TempDir
  Path dir;

  @Test
  void aSuccessfulCallIsOneInsertAndOneUpdateWithNothingReadBack() throws Exception {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:file:" + dir.resolve("j") + ";WRITE_DELAY=0;TRACE_LEVEL_FILE=0");
    // The begin's commit syncs the H2 file (CHECKPOINT SYNC); no unit sets a savepoint.
    assertStatements(new FaultyDataSource(h2), Map.of("CHECKPOINT", 1, "INSERT", 1, "UPDATE", 1));
  }

  @Test
  void onSqliteTooNoUnitOfTheCallSetsASavepoint() throws Exception {
    SQLiteDataSource sqlite = new SQLiteDataSource();
    sqlite.setUrl("jdbc:sqlite:" + dir.resolve("j.db"));
    // Before issue 28's second cut each of the three units ran SAVEPOINT and RELEASE around it.
    assertStatements(new FaultyDataSource(sqlite), Map.of("INSERT", 1, "UPDATE", 1));
  }

  /**
   * The request memo's one monitor was the only Java monitor that 32 durable callers contended
   * (JFR, issue 28): the begin put the request in, the outcome took it out. The inline call never
   * reads it back, so the begin keeps nothing there; a later transition() reads the stored request.
   * Failed before: the memo held the request while the attempt was in flight.
   */
  @Test
  void anInlineCallKeepsNoRequestInTheMemoAndATransitionStillReturnsTheStoredRequest() throws Exception {
    try (JdbcJournal journal = JdbcJournal.embedded(dir.resolve("embedded")).closeOnShutdown(false).open()) {
      AtomicInteger keptDuringSend = new AtomicInteger(-1);
      Transport transport = (request, key) -> {
        keptDuringSend.set(journal.requestsRemembered());
        return Ops.ok("{\"id\":7}");
      };
      Outcome outcome = IdempotentExecutor.builder().journal(journal).build()
          .execute(Operation.builder("charge", Ops.request("{\"n\":1}")).build(), transport);
      assertEquals(OperationState.SUCCEEDED, journal.find(outcome.operationId()).orElseThrow().state());
      assertEquals(0, keptDuringSend.get(), "the begin kept the request in the memo while the attempt ran");
      assertEquals(0, journal.requestsRemembered());

      // A transition() after a begin, with nothing in the memo: the record it returns carries the
      // request as stored, read back from the row.
      dev.idem.core.OperationId id = new dev.idem.core.OperationId("s", "charge",
          dev.idem.core.IdempotencyKey.of("k-transition"));
      java.time.Instant now = java.time.Instant.parse("2026-12-02T10:00:00Z");
      var request = Ops.request("{\"n\":2}");
      var begun = journal.beginAndClaim(new dev.idem.core.spi.NewOperation(id, null,
          dev.idem.core.fingerprint.Fingerprinter.defaults().fingerprint(request), request, now), "owner-1",
          Duration.ofMinutes(1));
      var done = journal.transition(id, begun.lease(),
          dev.idem.core.spi.Transition.finish(OperationState.SUCCEEDED, now, Ops.ok("{}"), "HTTP 200"));
      assertEquals(OperationState.SUCCEEDED, done.state());
      assertEquals(request, done.request());
      assertEquals(journal.find(id).orElseThrow(), done);
      assertEquals(0, journal.requestsRemembered());
    }
  }

  private static void assertStatements(FaultyDataSource ds, Map<String, Integer> expected) throws Exception {
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
      ds.statements.clear();

      Outcome outcome = executor.execute(Operation.builder("charge", Ops.request("{\"n\":2}")).build(), transport);

      assertEquals(Map.of("INSERT", 1, "UPDATE", 1), counts(ds.onOperations));
      assertEquals(expected, counts(ds.statements));
      assertEquals(2, sends.get());
      assertEquals(1, outcome.attempts().size());
      var stored = journal.find(outcome.operationId()).orElseThrow();
      assertEquals(OperationState.SUCCEEDED, stored.state());
      assertEquals(outcome.attempts(), stored.attempts());
      assertEquals(Ops.ok("{\"id\":7}"), stored.response());
    }
  }

  private static Map<String, Integer> counts(Map<String, AtomicInteger> byVerb) {
    Map<String, Integer> m = new TreeMap<>();
    byVerb.forEach((verb, n) -> m.put(verb, n.get()));
    return m;
  }
}
