package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An attempt's text (its reason, a transport failure's message, and its decision) is JSON inside
 * {@code attempts_json}: JSON can escape any UTF-16 unit, so it is kept as given, as a NUL is. An
 * unpaired surrogate was written into the JSON as itself, which SQLite's and PostgreSQL's drivers
 * store as '?' (H2 keeps it): the attempt read back was not the attempt recorded.
 * {@link PostgresUnpairedSurrogateTest} runs this on PostgreSQL.
 */
class UnpairedSurrogateAttemptTest {
  private static final Duration LEASE = Duration.ofSeconds(30);

  @TempDir
  Path tmp;

  @Test
  void anAttemptsTextWithUnpairedSurrogatesReadsBackAsGivenOnSqlite() throws Exception {
    try (JdbcJournal j = JdbcJournal.embedded(tmp).closeOnShutdown(false).open()) {
      anAttemptsTextWithUnpairedSurrogatesReadsBackAsGiven(j);
    }
  }

  @Test
  void anAttemptsTextWithUnpairedSurrogatesReadsBackAsGivenOnH2() throws Exception {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:file:" + tmp.resolve("h2") + ";WRITE_DELAY=0;TRACE_LEVEL_FILE=0");
    try (JdbcJournal j = JdbcJournal.dataSource(h2).open()) {
      anAttemptsTextWithUnpairedSurrogatesReadsBackAsGiven(j);
    }
  }

  /**
   * On {@code j}, an empty journal: an attempt appended in SQL (with its transition), then one
   * appended by rewriting the list (which re-encodes the first), both with unpaired surrogates and
   * a well-formed pair in their text, read back as recorded.
   */
  static void anAttemptsTextWithUnpairedSurrogatesReadsBackAsGiven(JdbcJournal j) throws Exception {
    OperationId id = new OperationId("tenant-a", "charge", IdempotencyKey.of("order-surrogate-attempts"));
    j.begin(Ops.op(id, "{\"amount\":5}"));
    Lease first = j.claim(id, "node", T0, LEASE).orElseThrow();
    AttemptRecord one = new AttemptRecord(1, first.generation(), T0, T0.plusMillis(5), Classification.AMBIGUOUS,
        null, "java.io.IOException", "unexpected \uD83D end \uD83D\uDE00", Duration.ofSeconds(1), "retry \uDE00");
    j.recordAttemptAndTransition(id, first, one, Transition.retryAt(T0.plusMillis(5), T0.plusSeconds(1), "again"));
    assertEquals(List.of(one), j.find(id).orElseThrow().attempts());

    Lease second = j.claim(id, "node", T0.plusSeconds(1), LEASE).orElseThrow();
    AttemptRecord two = new AttemptRecord(2, second.generation(), T0.plusSeconds(1), T0.plusSeconds(2),
        Classification.AMBIGUOUS, null, "java.io.IOException", "\uDE00\uD83D", Duration.ofSeconds(2), "retry");
    j.recordAttempt(id, second, two);
    assertEquals(List.of(one, two), j.find(id).orElseThrow().attempts());
  }
}
