package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.jdbc.support.ChildProcesses;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Transactional mode survives the process dying: the app runs in a child JVM that halts (no
 * shutdown hooks, as kill -9) inside the order handler before its transaction commits, or right
 * after the commit before the response leaves. A retry with the same key against the restarted
 * app runs the handler again in the first case and replays the stored answer in the second: one
 * row per key either way.
 */
class TransactionalKillTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @Test
  void aKillBeforeOrAfterTheCommitLeavesOneEffectPerKey() throws Exception {
    // Under target/, kept: the children's logs are there when this fails.
    Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target", "kill-test")), "run-");
    Database db = () -> DriverManager.getConnection("jdbc:sqlite:" + dir.resolve("app.db"));
    try (Connection c = db.connect(); Statement st = c.createStatement()) {
      st.execute("PRAGMA journal_mode = WAL");
      st.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT NOT NULL)");
      st.execute("CREATE TABLE payments (id INTEGER PRIMARY KEY, amount TEXT NOT NULL)");
    }
    killBeforeAndAfterTheCommit(dir, List.of(), db);
  }

  /** The app's database, as the test reads it. */
  interface Database {
    Connection connect() throws SQLException;
  }

  /**
   * The scenario, on the app's database {@code db}, which the children reach with the
   * {@code datasource} properties (none: a SQLite file in {@code dir}).
   */
  static void killBeforeAndAfterTheCommit(Path dir, List<String> datasource, Database db) throws Exception {
    String before = IdempotencyKey.generate().value();
    String after = IdempotencyKey.generate().value();

    // However this fails, no child outlives it (its port, its files, a share of the machine).
    try (ChildProcesses children = new ChildProcesses()) {
      Process first = start(children, dir, "before-commit:a", datasource);
      assertTrue(lost(post(dir, before, "{\"item\":\"a\"}")), "the first run died inside the handler");
      awaitDeath(first);
      assertEquals(0, rows(db), "nothing committed before the kill");

      Process second = start(children, dir, "after-commit:b", datasource);
      HttpResponse<String> retried = post(dir, before, "{\"item\":\"a\"}").orElseThrow();
      assertEquals(201, retried.statusCode(), retried.body());
      assertTrue(retried.headers().firstValue("Idempotent-Replayed").isEmpty(), "the handler ran again");
      assertTrue(lost(post(dir, after, "{\"item\":\"b\"}")), "the second run died after the commit");
      awaitDeath(second);
      assertEquals(2, rows(db), "a's row, and b's committed row");

      start(children, dir, "", datasource);
      HttpResponse<String> replay = post(dir, after, "{\"item\":\"b\"}").orElseThrow();
      assertEquals(201, replay.statusCode(), replay.body());
      assertEquals(Optional.of("true"), replay.headers().firstValue("Idempotent-Replayed"));
      assertEquals(2, rows(db), "one row per key");
    }
  }

  private static Process start(ChildProcesses children, Path dir, String kill, List<String> datasource)
      throws IOException, InterruptedException {
    Files.deleteIfExists(dir.resolve("port"));
    List<String> args = new java.util.ArrayList<>(List.of(dir.toString()));
    args.addAll(datasource);
    Process p = children.add(
        ChildJvm.start(log(dir, kill), List.of("-Didem.test.kill=" + kill), KillChild.class, args));
    ChildJvm.await(() -> Files.exists(dir.resolve("port")), p, log(dir, kill), "the child started");
    return p;
  }

  private static Path log(Path dir, String kill) {
    return dir.resolve("child-" + (kill.isEmpty() ? "last" : kill.replace(':', '-')) + ".log");
  }

  private static Optional<HttpResponse<String>> post(Path dir, String key, String json) throws Exception {
    int port = Integer.parseInt(Files.readString(dir.resolve("port")).strip());
    HttpRequest r = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/orders"))
        .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json").header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString(json)).build();
    try {
      return Optional.of(HTTP.send(r, HttpResponse.BodyHandlers.ofString()));
    } catch (IOException e) {
      Files.writeString(dir.resolve("lost-" + key + ".txt"), e.toString());
      return Optional.empty(); // the connection died with the process
    }
  }

  private static boolean lost(Optional<HttpResponse<String>> response) {
    return response.isEmpty();
  }

  private static void awaitDeath(Process p) throws InterruptedException {
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the child did not halt");
    assertEquals(99, p.exitValue(), "halted by the kill switch");
  }

  private static long rows(Database db) throws Exception {
    try (Connection c = db.connect(); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM orders")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
