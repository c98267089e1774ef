package dev.idem.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.internal.JsonCanonicalizer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each row of the benchmark sends what it claims to send: a few calls per row against the loopback
 * server, counting what reached it. It times nothing (the benchmark is a program, run by
 * {@code -Pbench-e2e}); it only keeps the rows honest, so that a row that silently stopped sending
 * its key, or sent nothing, cannot produce a figure.
 */
class StrategiesSmokeTest {
  private static final int CALLS = 3;
  private static LoopbackServer server;
  private static OkHttpClient client;

  @TempDir
  Path dir;

  @BeforeAll
  static void start() throws Exception {
    LoopbackServer.requireNoDelay();
    server = LoopbackServer.start(true, 2);
    client = new OkHttpClient();
  }

  @AfterAll
  static void stop() throws Exception {
    client.connectionPool().evictAll();
    client.dispatcher().executorService().shutdown();
    server.close();
  }

  @Test
  void rowsWithoutKeysSendOneRequestPerCallAndNoKey() throws Exception {
    for (Strategy s : Set.of(Strategies.raw(client, server.url()), Strategies.failsafe(client, server.url()),
        Strategies.resilience4j(client, server.url()))) {
      long requests = server.requests();
      long keyed = server.keyedRequests();
      calls(s);
      assertEquals(requests + CALLS, server.requests(), s.label());
      assertEquals(keyed, server.keyedRequests(), s.label() + " sent a key");
    }
  }

  @Test
  void keyedRowsSendAFreshKeyOnEveryCall() throws Exception {
    for (Strategy s : Set.of(Strategies.uuidHeader(client, server.url()), Strategies.idemInMemory(client, server.url()),
        Strategies.idemInMemoryKeepingNone(client, server.url()), Strategies.idemDurable(client, server.url()),
        Strategies.memoryFloor(client, server.url(), InMemoryFloor.DEFAULT_KEEP), Strategies.memoryFloor(client,
            server.url(), 0))) {
      long requests = server.requests();
      long keyed = server.keyedRequests();
      Set<String> keysBefore = new HashSet<>(server.keys());
      calls(s);
      assertEquals(requests + CALLS, server.requests(), s.label());
      assertEquals(keyed + CALLS, server.keyedRequests(), s.label() + ": every request carries the key header");
      Set<String> fresh = new HashSet<>(server.keys());
      fresh.removeAll(keysBefore);
      assertEquals(CALLS, fresh.size(), s.label() + ": one new key per logical call");
    }
  }

  @Test
  void theInMemoryFloorKeepsItsBoundOfFinishedOperationsAndNoMore() {
    InMemoryFloor keeping = new InMemoryFloor(2);
    InMemoryFloor none = new InMemoryFloor(0);
    List<String> keys = new java.util.ArrayList<>();
    for (int i = 0; i < 5; i++) {
      String key = keeping.begin("POST", server.url().toString(), Strategies.BODY);
      keys.add(key);
      keeping.finish(key, 201);
      String other = none.begin("POST", server.url().toString(), Strategies.BODY);
      none.finish(other, 201);
      assertFalse(none.knows(other), "keeping none forgets a finished operation");
    }
    assertEquals(5, new HashSet<>(keys).size(), "a fresh key per operation");
    assertEquals(2, keeping.kept());
    assertFalse(keeping.knows(keys.get(2)), "the oldest are dropped");
    assertTrue(keeping.knows(keys.get(3)) && keeping.knows(keys.get(4)), "the newest are found by their key");
    assertEquals(0, none.kept());
  }

  @Test
  void serverRowsAnswerEveryCallAsTheHandlerWould() throws Exception {
    // A guard row that answered 409 or 422, or a webhook row whose signature the receiver refused
    // (401/400), would fail its call: ServerRows checks 201 (the order handler behind the guard)
    // and 200 (a verified delivery accepted into the inbox) on every one.
    for (Strategy s : List.of(ServerRows.bare(client), ServerRows.guardInMemory(client),
        ServerRows.guardSqlite(client), ServerRows.webhookBare(client), ServerRows.webhookInbox(client))) {
      calls(s);
    }
  }

  @Test
  void floorRowsCommitOneRowPerCallAndTheClientFloorSendsItsKey() throws Exception {
    // The floor rows are what the goals are read against: a floor that skipped its write, or wrote
    // nothing to the file, would flatter every ratio to it.
    Strategy client = Strategies.durableFloor(StrategiesSmokeTest.client, server.url());
    Path clientDir = Files.createTempDirectory(dir, "floor");
    long keyed = server.keyedRequests();
    Set<String> keysBefore = new HashSet<>(server.keys());
    calls(client, clientDir);
    assertEquals(keyed + CALLS, server.keyedRequests(), "the floor sends its key on every request");
    Set<String> fresh = new HashSet<>(server.keys());
    fresh.removeAll(keysBefore);
    assertEquals(fresh, rows(clientDir, "SUCCEEDED"), "each call's key is committed, then its outcome");

    Strategy journalRow = Strategies.durableFloorJournalRow(StrategiesSmokeTest.client, server.url());
    Path rowDir = Files.createTempDirectory(dir, "floor-row");
    keysBefore = new HashSet<>(server.keys());
    calls(journalRow, rowDir);
    fresh = new HashSet<>(server.keys());
    fresh.removeAll(keysBefore);
    assertEquals(CALLS, fresh.size(), "the floor keeping the journal's row sends a fresh key on every request");
    assertEquals(fresh, rows(rowDir, "SELECT op_key, state FROM idem_operation", "SUCCEEDED"),
        "each call's journal row is committed, then its outcome");
    try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + rowDir.resolve("floor.db"));
        java.sql.ResultSet rs = c.createStatement().executeQuery("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index'"
            + " AND tbl_name = 'idem_operation' AND sql IS NOT NULL")) {
      // The journal's own indexes (due order, state and age, references, quarantine, undelivered):
      // a floor without them would measure a cheaper table than the journal's.
      assertTrue(rs.next() && rs.getInt(1) >= 5, "the floor keeping the journal's row has the journal's indexes");
    }

    for (Strategy s : List.of(ServerRows.guardFloor(StrategiesSmokeTest.client),
        ServerRows.webhookFloor(StrategiesSmokeTest.client))) {
      Path d = Files.createTempDirectory(dir, "floor");
      calls(s, d);
      assertEquals(CALLS, rows(d, null).size(), s.label());
    }
  }

  /** The keys in a floor's file, in {@code state} (any state if null), read by a connection of its own. */
  private static Set<String> rows(Path dir, String state) throws Exception {
    return rows(dir, "SELECT op_key, state FROM op", state);
  }

  /** As {@link #rows(Path, String)}, by {@code query} (a key, then a state). */
  private static Set<String> rows(Path dir, String query, String state) throws Exception {
    Set<String> keys = new HashSet<>();
    try (java.sql.Connection c = java.sql.DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("floor.db"));
        java.sql.ResultSet rs = c.createStatement().executeQuery(query)) {
      while (rs.next()) {
        if (state == null || state.equals(rs.getString(2))) {
          keys.add(rs.getString(1));
        }
      }
    }
    return keys;
  }

  @Test
  void theBodyIsNinetyBytesOfCanonicalJson() {
    assertEquals(90, Strategies.BODY.length);
    // Already canonical, as a well-behaved app sends it: the row measures Idem's cost on the common case.
    assertEquals(new String(Strategies.BODY, StandardCharsets.UTF_8),
        new String(JsonCanonicalizer.canonicalize(Strategies.BODY).orElseThrow(), StandardCharsets.UTF_8));
  }

  private void calls(Strategy s) throws Exception {
    calls(s, Files.createTempDirectory(dir, "row"));
  }

  private static void calls(Strategy s, Path workDir) throws Exception {
    try (Strategy.Session session = s.open(workDir)) {
      for (int i = 0; i < CALLS; i++) {
        session.call();
      }
    }
  }
}
