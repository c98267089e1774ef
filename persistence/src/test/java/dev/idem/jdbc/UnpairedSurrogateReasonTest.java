package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reason that already holds an unpaired UTF-16 surrogate (a transport failure's message built
 * from a server's bytes, a string cut by the application): no encoding stores one, the drivers
 * write '?', so the record returned by the write held the surrogate and the one read back held '?'.
 * Each unpaired surrogate is stored as U+FFFD, as a NUL is, on every database, so that the record
 * returned is the record stored. {@link PostgresUnpairedSurrogateTest} runs this on PostgreSQL.
 */
class UnpairedSurrogateReasonTest {
  private static final Duration LEASE = Duration.ofSeconds(30);

  @TempDir
  Path tmp;

  @Test
  void reasonsAreStoredWithAReplacementCharacterForEachUnpairedSurrogateOnSqlite() throws Exception {
    try (JdbcJournal j = JdbcJournal.embedded(tmp).closeOnShutdown(false).open()) {
      reasonsAreStoredWithAReplacementCharacterForEachUnpairedSurrogate(j);
    }
  }

  @Test
  void reasonsAreStoredWithAReplacementCharacterForEachUnpairedSurrogateOnH2() throws Exception {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:file:" + tmp.resolve("h2") + ";WRITE_DELAY=0;TRACE_LEVEL_FILE=0");
    try (JdbcJournal j = JdbcJournal.dataSource(h2).open()) {
      reasonsAreStoredWithAReplacementCharacterForEachUnpairedSurrogate(j);
    }
  }

  /**
   * On {@code j}, an empty journal: every write of a reason with unpaired surrogates (a lone high,
   * a lone low, a pair in the wrong order) returns and stores U+FFFD in place of each, and keeps a
   * well-formed pair as given.
   */
  static void reasonsAreStoredWithAReplacementCharacterForEachUnpairedSurrogate(JdbcJournal j) throws Exception {
    OperationId id = new OperationId("tenant-a", "charge", IdempotencyKey.of("order-surrogate-reasons"));
    j.begin(Ops.op(id, "{\"amount\":5}"));

    Lease first = j.claim(id, "node", T0, LEASE).orElseThrow();
    OperationRecord pending = j.transition(id, first,
        Transition.retryAt(T0.plusMillis(5), T0.plusSeconds(1), "ambiguous: \uD83D cut \uD83D\uDE00 kept"));
    assertEquals("ambiguous: \uFFFD cut \uD83D\uDE00 kept", pending.reason());
    assertEquals(pending.reason(), j.find(id).orElseThrow().reason(), "the record returned is the one stored");

    Lease second = j.claim(id, "node", T0.plusSeconds(1), LEASE).orElseThrow();
    OperationRecord uncertain = j.transition(id, second,
        Transition.finish(OperationState.UNCERTAIN, T0.plusSeconds(2), null, "\uDE00\uD83D at the end \uDE00"));
    assertEquals("\uFFFD\uFFFD at the end \uFFFD", uncertain.reason());
    assertEquals(uncertain.reason(), j.find(id).orElseThrow().reason(), "the record returned is the one stored");

    OperationRecord settled = j.settleIfUnchanged(j.find(id).orElseThrow(), "reconciler", LEASE,
        Transition.finish(OperationState.SUCCEEDED, T0.plusSeconds(3), Ops.ok("{}"), "found \uD800"))
        .orElseThrow();
    assertEquals("found \uFFFD", settled.reason());
    assertEquals(settled.reason(), j.find(id).orElseThrow().reason(), "the record returned is the one stored");

    OperationId other = new OperationId("tenant-a", "charge", IdempotencyKey.of("order-surrogate-abandon"));
    j.begin(Ops.op(other, "{}"));
    OperationRecord abandoned = j.abandon(other, Transition.finish(OperationState.FAILED, T0, null, "given\uDBFFup"));
    assertEquals("given\uFFFDup", abandoned.reason());
    assertEquals("given\uFFFDup", j.find(other).orElseThrow().reason());
  }
}
