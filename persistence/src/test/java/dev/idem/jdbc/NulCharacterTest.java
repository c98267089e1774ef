package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.support.Ops;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

/**
 * A NUL character (U+0000) in the text the journal stores, on SQLite and H2, which store it, with
 * the scenarios {@link PostgresNulCharacterTest} runs on PostgreSQL, which refuses it: one journal
 * must store and refuse the same text whichever database holds it. Free text (reasons) is stored
 * with U+FFFD in place of each NUL; identities and references with a NUL are refused at begin.
 * Failed before the fix: SQLite and H2 stored both as given.
 */
class NulCharacterTest {
  private static final Duration LEASE = Duration.ofSeconds(30);

  @TempDir
  Path tmp;

  @Test
  void reasonsAreStoredWithAReplacementCharacterForEachNulOnSqlite() throws Exception {
    try (JdbcJournal j = sqlite()) {
      reasonsAreStoredWithAReplacementCharacterForEachNul(j);
    }
  }

  @Test
  void reasonsAreStoredWithAReplacementCharacterForEachNulOnH2() throws Exception {
    try (JdbcJournal j = h2()) {
      reasonsAreStoredWithAReplacementCharacterForEachNul(j);
    }
  }

  @Test
  void identitiesAndReferencesWithANulAreRefusedAtBeginOnSqlite() throws Exception {
    try (JdbcJournal j = sqlite()) {
      identitiesAndReferencesWithANulAreRefusedAtBegin(j);
      lookupsWithANulFindNothing(j);
    }
  }

  @Test
  void identitiesAndReferencesWithANulAreRefusedAtBeginOnH2() throws Exception {
    try (JdbcJournal j = h2()) {
      identitiesAndReferencesWithANulAreRefusedAtBegin(j);
      lookupsWithANulFindNothing(j);
    }
  }

  @Test
  void aRequestHeaderWithANulIsStoredAsGivenOnSqlite() throws Exception {
    try (JdbcJournal j = sqlite()) {
      aRequestHeaderWithANulIsStoredAsGiven(j);
    }
  }

  private JdbcJournal sqlite() throws Exception {
    return JdbcJournal.embedded(tmp.resolve("sqlite")).closeOnShutdown(false).open();
  }

  private JdbcJournal h2() throws Exception {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:file:" + tmp.resolve("h2") + ";WRITE_DELAY=0;TRACE_LEVEL_FILE=0");
    return JdbcJournal.dataSource(h2).open();
  }

  /**
   * Every write of a reason on {@code j}, an empty journal, with a NUL in it: each is recorded, the
   * record returned and the record read back both have U+FFFD in its place, and the reason of an
   * attempt, a JSON string inside {@code attempts_json}, is kept as given (JSON escapes it).
   */
  static void reasonsAreStoredWithAReplacementCharacterForEachNul(JdbcJournal j) throws Exception {
    OperationId id = new OperationId("tenant-a", "charge", IdempotencyKey.of("order-nul-reasons"));
    j.begin(Ops.op(id, "{\"amount\":5}"));

    Lease first = j.claim(id, "node", T0, LEASE).orElseThrow();
    AttemptRecord attempt = new AttemptRecord(1, first.generation(), T0, T0.plusMillis(5), Classification.AMBIGUOUS,
        null, "java.io.IOException", "unexpected status line: HTTP/1.1 2\u000000", Duration.ofSeconds(1),
        "retry\u0000after backoff");
    j.recordAttemptAndTransition(id, first, attempt,
        Transition.retryAt(T0.plusMillis(5), T0.plusSeconds(1), "ambiguous: HTTP/1.1 2\u000000"));
    OperationRecord pending = j.find(id).orElseThrow();
    assertEquals(OperationState.PENDING, pending.state());
    assertEquals("ambiguous: HTTP/1.1 2\uFFFD00", pending.reason());
    assertEquals(List.of(attempt), pending.attempts(), "an attempt's text is JSON inside its column, kept as given");

    Lease second = j.claim(id, "node", T0.plusSeconds(1), LEASE).orElseThrow();
    OperationRecord uncertain = j.transition(id, second,
        Transition.finish(OperationState.UNCERTAIN, T0.plusSeconds(2), null, "\u0000 in a status line"));
    assertEquals("\uFFFD in a status line", uncertain.reason());
    assertEquals(uncertain.reason(), j.find(id).orElseThrow().reason(), "the record returned is the one stored");

    OperationRecord settled = j.settleIfUnchanged(j.find(id).orElseThrow(), "reconciler", LEASE,
        Transition.finish(OperationState.SUCCEEDED, T0.plusSeconds(3), Ops.ok("{}"), "found\u0000at the server"))
        .orElseThrow();
    assertEquals("found\uFFFDat the server", settled.reason());
    assertEquals(settled.reason(), j.find(id).orElseThrow().reason());

    OperationId other = new OperationId("tenant-a", "charge", IdempotencyKey.of("order-nul-abandon"));
    j.begin(Ops.op(other, "{}"));
    OperationRecord abandoned = j.abandon(other, Transition.finish(OperationState.FAILED, T0, null, "given\u0000up"));
    assertEquals("given\uFFFDup", abandoned.reason());
    assertEquals("given\uFFFDup", j.find(other).orElseThrow().reason());
  }

  /**
   * A scope, operation name or reference with a NUL is refused at begin (and beginAndClaim) on
   * {@code j}, an empty journal, with an IllegalArgumentException naming the field and not echoing
   * the text, and nothing is written.
   */
  static void identitiesAndReferencesWithANulAreRefusedAtBegin(JdbcJournal j) throws Exception {
    IdempotencyKey key = IdempotencyKey.of("order-nul-identity");
    assertRefused(() -> j.begin(Ops.op(new OperationId("t\u0000a", "charge", key), "{}")), "scope");
    assertRefused(() -> j.begin(Ops.op(new OperationId("tenant-a", "charge\u0000", key), "{}")), "operation name");
    assertRefused(() -> j.begin(Ops.op(new OperationId("tenant-a", "charge", key), "inv-\u0000-7", "{}")),
        "reference");
    assertRefused(() -> j.beginAndClaim(Ops.op(new OperationId("tenant-a", "charge", key), "inv-\u0000-7", "{}"),
        "node", LEASE), "reference");
    for (OperationState s : OperationState.values()) {
      assertEquals(0, j.count(s), "a refused begin wrote a row (" + s + ")");
    }
  }

  /**
   * Lookups and writes of an identity, scope or reference with a NUL, on a journal {@code j} that
   * holds none (begin refuses them): answered as for any identity it does not hold.
   */
  static void lookupsWithANulFindNothing(JdbcJournal j) throws Exception {
    OperationId id = new OperationId("t\u0000a", "charge", IdempotencyKey.of("order-nul-lookup"));
    assertEquals(Optional.empty(), j.find(id));
    assertEquals(List.of(), j.findByReference("t\u0000a", "inv-7"));
    assertEquals(List.of(), j.findByReference("tenant-a", "inv-\u0000-7"));
    assertFalse(j.recordOutcomeDelivered(id, T0));
    assertEquals(0, j.recordOutcomesDelivered(List.of(id), T0));
    assertNotHeld(() -> j.claim(id, "node", T0, LEASE));
    assertNotHeld(() -> j.abandon(id, Transition.finish(OperationState.FAILED, T0, null, "given up")));
    assertNotHeld(() -> j.redrive(id, T0));
  }

  /**
   * A request header value with a NUL (the executor refuses one, but the journal's own callers may
   * not) is stored in {@code request_json} as a JSON escape, so every database stores it, and it
   * reads back as given.
   */
  static void aRequestHeaderWithANulIsStoredAsGiven(JdbcJournal j) throws Exception {
    OperationId id = new OperationId("tenant-a", "charge", IdempotencyKey.of("order-nul-header"));
    RequestSnapshot request = RequestSnapshot.builder("POST", URI.create("https://api.example.test/v1/orders"))
        .header("X-Note", "a\u0000b")
        .body("{}".getBytes(StandardCharsets.UTF_8), "application/json")
        .build();
    j.begin(new NewOperation(id, null, Fingerprinter.defaults().fingerprint(request), request, T0));
    assertEquals(List.of("a\u0000b"), j.find(id).orElseThrow().request().headers().get("x-note"));
  }

  private static void assertRefused(Executable begin, String field) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, begin,
        "a " + field + " with a NUL was not refused as bad input");
    assertTrue(e.getMessage().contains(field) && e.getMessage().contains("NUL"), e.getMessage());
    assertFalse(e.getMessage().contains("\u0000"), "the value is not echoed");
  }

  /**
   * As for an identity the journal does not hold. (On SQLite and H2, which are asked, the message
   * names the identity as for any other unknown one.)
   */
  private static void assertNotHeld(Executable call) {
    IllegalStateException e = assertThrows(IllegalStateException.class, call);
    assertTrue(e.getMessage().contains("no such operation"), e.getMessage());
  }
}
