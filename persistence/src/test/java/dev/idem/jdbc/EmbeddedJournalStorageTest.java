package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.JournalException;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.storage.EmbeddedFiles;
import dev.idem.jdbc.support.Ops;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the embedded (SQLite) journal stores, what it refuses to store, and how it survives reopening and bad rows. */
class EmbeddedJournalStorageTest {
  /** The condition on the state of idem_operation_undelivered since version 5, and of the look for owed outcomes. */
  private static final String OWED_STATE = "AND (state = 'SUCCEEDED' OR state = 'FAILED' OR state = 'UNCERTAIN')";

  @TempDir
  Path tmp;
  private final Ops ops = new Ops(5);

  private Path dir() {
    return tmp.resolve("journal");
  }

  /** Runs SQL on the journal's file while no journal has it open. */
  private String sql(String statement) throws Exception {
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + dir().toRealPath().resolve(EmbeddedFiles.DATABASE_FILE));
        Statement st = c.createStatement()) {
      if (st.execute(statement)) {
        try (ResultSet rs = st.getResultSet()) {
          StringBuilder sb = new StringBuilder();
          while (rs.next()) {
            sb.append(rs.getString(1)).append('\n');
          }
          return sb.toString();
        }
      }
      return Integer.toString(st.getUpdateCount());
    }
  }

  @Test
  void secretHeadersAreNeverStoredEvenIfTheCallerForgotToStripThem() throws Exception {
    RequestSnapshot withSecrets = RequestSnapshot.builder("POST", URI.create("https://api.example.test/pay"))
        .header("Authorization", "Bearer sk_live_SECRET1")
        .header("Proxy-Authorization", "Basic SECRET2")
        .header("Cookie", "session=SECRET3")
        .header("X-Api-Key", "SECRET4")
        .header("Content-Type", "application/json")
        .body("{}".getBytes(StandardCharsets.UTF_8), "application/json")
        .build();
    OperationId id = ops.id("pay");
    NewOperation op = new NewOperation(id, null, Fingerprinter.defaults().fingerprint(withSecrets), withSecrets, T0);
    try (JdbcJournal j = JdbcJournal.embedded(dir()).excludeHeaders(List.of("X-API-Key")).open()) {
      OperationRecord begun = j.begin(op).record();
      assertEquals(Set.of("content-type"), begun.request().headers().keySet());
      assertEquals(begun, j.find(id).orElseThrow());
      Lease lease = j.claim(id, "n", T0, Duration.ofSeconds(30)).orElseThrow();
      j.transition(id, lease, Transition.finish(OperationState.SUCCEEDED, T0, new ResponseSnapshot(200,
          Map.of("Set-Cookie", List.of("s=SECRET5")), new byte[0]), null));
      assertFalse(j.find(id).orElseThrow().response().headers().containsKey("set-cookie"));
    }
    String stored = sql("SELECT request_json || response_json FROM idem_operation");
    for (String secret : List.of("SECRET1", "SECRET2", "SECRET3", "SECRET4", "SECRET5")) {
      assertFalse(stored.contains(secret), secret + " reached the journal file");
    }
  }

  @Test
  void aResponseBodyOverTheLimitIsReplacedByAMarker() throws Exception {
    byte[] big = new byte[JdbcJournal.DEFAULT_MAX_STORED_RESPONSE_BODY + 1];
    byte[] small = new byte[JdbcJournal.DEFAULT_MAX_STORED_RESPONSE_BODY];
    Arrays.fill(small, (byte) 'x');
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir())) {
      ResponseSnapshot keptBig = finish(j, new ResponseSnapshot(200, Map.of("A", List.of("1")), big));
      ResponseSnapshot keptSmall = finish(j, new ResponseSnapshot(200, Map.of(), small));

      assertEquals(0, keptBig.body().length);
      assertEquals(String.valueOf(big.length), keptBig.header(JdbcJournal.TRUNCATED_BODY_HEADER).orElseThrow());
      assertEquals("1", keptBig.header("a").orElseThrow());
      assertArrayEquals(small, keptSmall.body());
      assertTrue(keptSmall.header(JdbcJournal.TRUNCATED_BODY_HEADER).isEmpty());
    }
  }

  @Test
  void aResponseHeaderWithoutAValueIsKeptAsOne() throws Exception {
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir())) {
      ResponseSnapshot kept = finish(j, new ResponseSnapshot(204, Map.of("X-None", List.of(), "A", List.of("1")),
          new byte[0]));
      assertEquals(List.of(), kept.headers().get("x-none"));
      assertEquals(List.of("1"), kept.headers().get("a"));
    }
  }

  @Test
  void valuesTooLongForTheirColumnsAreRefusedAtTheCallAndTheJournalGoesOn() throws Exception {
    NewOperation op = ops.newOp("{}");
    String tooLongOwner = "node-" + "x".repeat(201);
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir())) {
      j.begin(op);
      JournalException e = assertThrows(JournalException.class,
          () -> j.claim(op.id(), tooLongOwner, T0, Duration.ofSeconds(30)));
      assertTrue(e.getMessage().contains("owner"), e.getMessage());
      assertEquals(OperationState.PENDING, j.find(op.id()).orElseThrow().state(), "nothing of the claim was kept");
      assertEquals(1, j.findByState(OperationState.PENDING, null, 10).size(), "the journal still writes");

      // A request whose JSON is wider than its column: refused at begin, so it is never sent.
      RequestSnapshot wide = RequestSnapshot.builder("POST", URI.create("https://api.example.test/v1/orders"))
          .header("X-Big", "v".repeat(1_000_001)).body(new byte[0], "application/json").build();
      NewOperation wideOp = new NewOperation(ops.id("create-order"), null, Fingerprinter.defaults().fingerprint(wide),
          wide, T0);
      JournalException refused = assertThrows(JournalException.class, () -> j.begin(wideOp));
      assertTrue(refused.getMessage().contains("request_json"), refused.getMessage());
      assertTrue(j.find(wideOp.id()).isEmpty());
    }
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir())) {
      assertTrue(j.claim(op.id(), "n", T0, Duration.ofSeconds(30)).isPresent(), "the journal reopens and goes on");
    }
  }

  private ResponseSnapshot finish(JdbcJournal j, ResponseSnapshot response) throws Exception {
    NewOperation op = ops.newOp("{}");
    j.begin(op);
    Lease lease = j.claim(op.id(), "n", T0, Duration.ofSeconds(30)).orElseThrow();
    OperationRecord returned = j.transition(op.id(), lease,
        Transition.finish(OperationState.SUCCEEDED, T0, response, null));
    assertEquals(returned, j.find(op.id()).orElseThrow());
    return returned.response();
  }

  @Test
  void aRequestBodyOverTheLimitIsRefusedAtBegin() throws Exception {
    try (JdbcJournal j = JdbcJournal.embedded(dir()).maxRequestBodyBytes(10).open()) {
      NewOperation op = ops.newOp("{\"eleven\":1}");
      JournalException e = assertThrows(JournalException.class, () -> j.begin(op));
      assertTrue(e.getMessage().contains("nothing was sent"), e.getMessage());
      assertTrue(j.find(op.id()).isEmpty());
    }
  }

  @Test
  void deferredWritesAreDurableAfterCloseAndTheSchemaIsMigratedOnce() throws Exception {
    NewOperation op = ops.newOp("{}");
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir())) {
      assertEquals(5, j.schemaVersion());
      j.begin(op);
      Lease lease = j.claim(op.id(), "n", T0, Duration.ofSeconds(30)).orElseThrow();
      j.recordAttempt(op.id(), lease, Ops.attempt(1, 1, T0));
      j.transition(op.id(), lease, Transition.finish(OperationState.SUCCEEDED, T0.plusSeconds(1), Ops.ok("{}"), null));
    }
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir())) {
      OperationRecord r = j.find(op.id()).orElseThrow();
      assertEquals(OperationState.SUCCEEDED, r.state());
      assertEquals(List.of(Ops.attempt(1, 1, T0)), r.attempts());
      assertEquals(Ops.ok("{}"), r.response());
    }
    assertEquals("1\n2\n3\n4\n5\n", sql("SELECT version FROM idem_schema_version ORDER BY version"));
  }

  /**
   * A row deleted from the middle of idem_schema_version (by hand, or lost in a partial restore)
   * left version 5 as the highest, and the open went on as if every migration had run. It is
   * refused, naming the missing migration and what to do; with the row back the journal opens with
   * its operation.
   */
  @Test
  void aJournalWhoseVersionTableLostAMiddleRowIsRefusedUntilTheRowIsBack() throws Exception {
    NewOperation pending = ops.newOp("{\"pending\":1}");
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir())) {
      j.begin(pending);
    }
    String row = sql("SELECT description || '/' || applied_at FROM idem_schema_version WHERE version = 3");
    sql("DELETE FROM idem_schema_version WHERE version = 3");

    JournalException e = assertThrows(JournalException.class, () -> JdbcJournal.openEmbedded(dir()).close());
    assertTrue(e.getMessage().contains("idem_schema_version") && e.getMessage().contains("version 3 (V3__due_order.sql)"),
        e.getMessage());
    assertEquals("1\n2\n4\n5\n", sql("SELECT version FROM idem_schema_version ORDER BY version"));

    String[] parts = row.strip().split("/");
    sql("INSERT INTO idem_schema_version (version, description, applied_at) VALUES (3, '" + parts[0] + "', "
        + parts[1] + ")");
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir())) {
      assertEquals(5, j.schemaVersion());
      assertEquals(OperationState.PENDING, j.find(pending.id()).orElseThrow().state());
    }
  }

  /**
   * A journal written before version 2 knew nothing of queued operations or deliveries: its rows
   * count as inline (the cautious reading: a never-claimed one is maybe sent after a crash) and no
   * outcome of theirs is handed over again.
   */
  @Test
  void rowsOfAVersion1JournalAreInlineAndOweNoOutcomeAfterTheMigration() throws Exception {
    NewOperation done = ops.newOp("{\"done\":1}");
    NewOperation waiting = ops.newOp("{\"waiting\":1}");
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir())) {
      for (NewOperation op : List.of(done, waiting)) {
        j.begin(new NewOperation(op.id(), null, op.fingerprint(), op.request(), op.createdAt(), true));
      }
      Lease lease = j.claim(done.id(), "n", T0, Duration.ofSeconds(30)).orElseThrow();
      j.transition(done.id(), lease, Transition.finish(OperationState.SUCCEEDED, T0, Ops.ok("{}"), null));
    }
    // Back to the version 1 schema, as an older Idem left it.
    sql("DELETE FROM idem_schema_version WHERE version = 5");
    sql("DELETE FROM idem_schema_version WHERE version = 4");
    sql("DROP INDEX idem_operation_due");
    sql("DELETE FROM idem_schema_version WHERE version = 3");
    sql("DROP INDEX idem_operation_undelivered");
    sql("ALTER TABLE idem_operation DROP COLUMN queued");
    sql("ALTER TABLE idem_operation DROP COLUMN outcome_delivered_at");
    sql("DELETE FROM idem_schema_version WHERE version = 2");

    try (JdbcJournal j = JdbcJournal.openEmbedded(dir())) {
      assertEquals(5, j.schemaVersion());
      OperationRecord r = j.find(done.id()).orElseThrow();
      assertEquals(OperationState.SUCCEEDED, r.state());
      assertFalse(r.queued());
      assertFalse(r.outcomeUndelivered());
      assertFalse(j.find(waiting.id()).orElseThrow().queued());
      assertEquals(List.of(), j.findUndelivered(null, 10));
    }
    assertEquals("1\n2\n3\n4\n5\n", sql("SELECT version FROM idem_schema_version ORDER BY version"));
  }

  /**
   * Version 4 narrows idem_operation_undelivered to what the look for owed outcomes returns (queued,
   * finished, not delivered): in version 3 it also held every queued operation not yet finished, so
   * that look walked all of them, and each one's terminal transition rewrote its entry. Failed
   * before: the migration did not exist.
   */
  @Test
  void aVersion3JournalMigratesToAnUndeliveredIndexOfOwedOutcomesOnly() throws Exception {
    NewOperation owed = ops.newOp("{\"owed\":1}");
    NewOperation waiting = ops.newOp("{\"waiting\":1}");
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir())) {
      for (NewOperation op : List.of(owed, waiting)) {
        j.begin(new NewOperation(op.id(), null, op.fingerprint(), op.request(), op.createdAt(), true));
      }
      Lease lease = j.claim(owed.id(), "n", T0, Duration.ofSeconds(30)).orElseThrow();
      j.transition(owed.id(), lease, Transition.finish(OperationState.SUCCEEDED, T0, Ops.ok("{}"), null));
    }
    // Back to the version 3 index, as Idem 0.1 with schema 3 left it.
    sql("DROP INDEX idem_operation_undelivered");
    sql("CREATE INDEX idem_operation_undelivered ON idem_operation (scope, operation, op_key)"
        + " WHERE queued = 1 AND outcome_delivered_at IS NULL");
    sql("DELETE FROM idem_schema_version WHERE version = 5");
    sql("DELETE FROM idem_schema_version WHERE version = 4");
    assertEquals("2\n", sql("SELECT COUNT(*) FROM idem_operation INDEXED BY idem_operation_undelivered"
        + " WHERE queued = 1 AND outcome_delivered_at IS NULL"));

    try (JdbcJournal j = JdbcJournal.openEmbedded(dir())) {
      assertEquals(5, j.schemaVersion());
      assertEquals(List.of(owed.id()), j.findUndelivered(null, 10).stream().map(OperationRecord::id).toList());
      assertEquals(OperationState.PENDING, j.find(waiting.id()).orElseThrow().state());
    }
    assertEquals("1\n", sql("SELECT COUNT(*) FROM idem_operation INDEXED BY idem_operation_undelivered"
        + " WHERE queued = 1 AND outcome_delivered_at IS NULL " + OWED_STATE + " AND quarantined_at IS NULL"));
    assertEquals("1\n2\n3\n4\n5\n", sql("SELECT version FROM idem_schema_version ORDER BY version"));
  }

  /**
   * Version 5 writes idem_operation_undelivered's condition on the state as three comparisons: as
   * {@code state IN (...)} (version 4), SQLite built a temporary B-tree for it on every begin,
   * claim, transition and delivery ({@link OperationStatementsTest}). The index holds the same
   * rows, and the look for owed outcomes still reads it. Failed before: the migration did not exist.
   */
  @Test
  void aVersion4JournalMigratesToAnUndeliveredIndexWithoutAnInList() throws Exception {
    NewOperation owed = ops.newOp("{\"owed\":1}");
    NewOperation delivered = ops.newOp("{\"delivered\":1}");
    NewOperation waiting = ops.newOp("{\"waiting\":1}");
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir())) {
      for (NewOperation op : List.of(owed, delivered, waiting)) {
        j.begin(new NewOperation(op.id(), null, op.fingerprint(), op.request(), op.createdAt(), true));
      }
      for (NewOperation op : List.of(owed, delivered)) {
        Lease lease = j.claim(op.id(), "n", T0, Duration.ofSeconds(30)).orElseThrow();
        j.transition(op.id(), lease, Transition.finish(OperationState.SUCCEEDED, T0, Ops.ok("{}"), null));
      }
      assertTrue(j.recordOutcomeDelivered(delivered.id(), T0));
    }
    // Back to the version 4 index, as Idem with schema 4 left it.
    sql("DROP INDEX idem_operation_undelivered");
    sql("CREATE INDEX idem_operation_undelivered ON idem_operation (scope, operation, op_key)"
        + " WHERE queued = 1 AND outcome_delivered_at IS NULL AND state IN ('SUCCEEDED', 'FAILED', 'UNCERTAIN')"
        + " AND quarantined_at IS NULL");
    sql("DELETE FROM idem_schema_version WHERE version = 5");

    try (JdbcJournal j = JdbcJournal.openEmbedded(dir())) {
      assertEquals(5, j.schemaVersion());
      assertEquals(List.of(owed.id()), j.findUndelivered(null, 10).stream().map(OperationRecord::id).toList());
      assertEquals(OperationState.PENDING, j.find(waiting.id()).orElseThrow().state());
    }
    String index = sql("SELECT sql FROM sqlite_master WHERE name = 'idem_operation_undelivered'");
    assertTrue(index.contains(OWED_STATE.substring("AND ".length())), index);
    assertFalse(index.contains(" IN "), index);
    assertEquals("1\n", sql("SELECT COUNT(*) FROM idem_operation INDEXED BY idem_operation_undelivered"
        + " WHERE queued = 1 AND outcome_delivered_at IS NULL " + OWED_STATE + " AND quarantined_at IS NULL"));
    assertEquals("1\n2\n3\n4\n5\n", sql("SELECT version FROM idem_schema_version ORDER BY version"));
  }

  @Test
  void aJournalWithANewerSchemaIsNotOpened() throws Exception {
    JdbcJournal.openEmbedded(dir()).close();
    sql("INSERT INTO idem_schema_version VALUES (99, 'from the future', 0)");
    JournalException e = assertThrows(JournalException.class, () -> JdbcJournal.openEmbedded(dir()));
    assertTrue(e.getMessage().contains("newer than this Idem version supports"), e.getMessage());
  }

  @Test
  void rowsThatCannotBeReadAreQuarantinedAndTheOthersKeepWorking() throws Exception {
    NewOperation unknownState = ops.newOp("{}");
    NewOperation badJson = ops.newOp("{}");
    NewOperation badAttempts = ops.newOp("{}");
    NewOperation good = ops.newOp("{}");
    try (JdbcJournal j = JdbcJournal.openEmbedded(dir())) {
      for (NewOperation op : List.of(unknownState, badJson, badAttempts, good)) {
        j.begin(op);
      }
    }
    sql("UPDATE idem_operation SET state = 'ARCHIVED' WHERE op_key = '" + unknownState.id().key() + "'");
    sql("UPDATE idem_operation SET request_json = '{\"v\":1,\"body\":\"SECRET-BODY' WHERE op_key = '"
        + badJson.id().key() + "'");
    sql("UPDATE idem_operation SET attempts_json = '{}' WHERE op_key = '" + badAttempts.id().key() + "'");

    Clock clock = Clock.fixed(T0.plusSeconds(3600), ZoneOffset.UTC);
    try (JdbcJournal j = JdbcJournal.embedded(dir()).clock(clock).open()) {
      // the unknown state was found on open; the others are found when read
      assertEquals(List.of(good.id()), j.findDue(T0, null, 10).stream().map(OperationRecord::id).toList());
      assertEquals(List.of(good.id()),
          j.findByState(OperationState.PENDING, null, 10).stream().map(OperationRecord::id).toList());

      JournalException e = assertThrows(JournalException.class, () -> j.find(unknownState.id()));
      assertTrue(e.getMessage().contains("quarantined") && e.getMessage().contains("unknown state 'ARCHIVED'"),
          e.getMessage());
      JournalException again = assertThrows(JournalException.class, () -> j.begin(badJson));
      assertTrue(again.getMessage().contains("request_json: not valid JSON"), again.getMessage());
      assertFalse(again.getMessage().contains("SECRET-BODY"));

      List<QuarantinedOperation> q = j.findQuarantined(10);
      assertEquals(Set.of(unknownState.id().key().value(), badJson.id().key().value(), badAttempts.id().key().value()),
          q.stream().map(QuarantinedOperation::key).collect(java.util.stream.Collectors.toSet()));
      assertTrue(q.stream().allMatch(x -> x.quarantinedAt().equals(clock.instant())));
      assertTrue(q.stream().noneMatch(x -> x.reason().contains("SECRET")));

      // the good row still works end to end, and purge leaves quarantined rows alone
      Lease lease = j.claim(good.id(), "n", T0, Duration.ofSeconds(30)).orElseThrow();
      j.transition(good.id(), lease, Transition.finish(OperationState.SUCCEEDED, T0, Ops.ok("{}"), null));
      assertEquals(1, j.purge(T0.plusSeconds(1)));
      assertEquals(3, j.findQuarantined(10).size());
    }
  }
}
