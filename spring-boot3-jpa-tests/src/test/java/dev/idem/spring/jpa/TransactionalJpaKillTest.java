package dev.idem.spring.jpa;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.jdbc.support.ChildProcesses;
import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Transactional mode joins a JPA transaction: with Hibernate on the class path Boot's transaction
 * manager is a JpaTransactionManager, and the guard's claim goes through the same connection as
 * Hibernate's writes, on PostgreSQL (a throwaway cluster; skipped loudly without PostgreSQL's
 * binaries, a failure under CI=true). The app runs in a child JVM that halts (no shutdown hooks,
 * as kill -9) after its handler flushed the order but before the commit, or right after the
 * commit before the response leaves. A retry with the same key against the restarted app runs the
 * handler again in the first case (the claim was rolled back with the row) and replays the stored
 * answer in the second (it committed with the row): one row per key either way.
 */
@ExtendWith(PostgresExtension.class)
class TransactionalJpaKillTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @Test
  void aKillBeforeOrAfterTheCommitLeavesOneEffectPerKey(PgDatabase pg) throws Exception {
    // Under target/, kept: the children's logs are there when this fails.
    Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target", "kill-test")), "jpa-");
    try (Connection c = pg.dataSource().getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE orders (id SERIAL PRIMARY KEY, item TEXT NOT NULL)");
    }
    List<String> datasource = List.of(
        "spring.datasource.url=jdbc:postgresql://127.0.0.1:" + pg.cluster().port() + "/" + pg.name(),
        "spring.datasource.username=postgres");
    String before = IdempotencyKey.generate().value();
    String after = IdempotencyKey.generate().value();

    // However this fails, no child outlives it (its port, its files, a share of the machine).
    try (ChildProcesses children = new ChildProcesses()) {
      Process first = start(children, dir, "before-commit:a", datasource);
      assertTrue(post(dir, before, "a").isEmpty(), "the first run died inside the handler");
      awaitDeath(first);
      assertEquals(0, rows(pg), "nothing committed before the kill");

      Process second = start(children, dir, "after-commit:b", datasource);
      HttpResponse<String> retried = post(dir, before, "a").orElseThrow();
      assertEquals(201, retried.statusCode(), retried.body());
      assertTrue(retried.headers().firstValue("Idempotent-Replayed").isEmpty(), "the handler ran again");
      assertTrue(post(dir, after, "b").isEmpty(), "the second run died after the commit");
      awaitDeath(second);
      assertEquals(2, rows(pg), "a's row, and b's committed row");

      start(children, dir, "", datasource);
      HttpResponse<String> replay = post(dir, after, "b").orElseThrow();
      assertEquals(201, replay.statusCode(), replay.body());
      assertEquals(Optional.of("true"), replay.headers().firstValue("Idempotent-Replayed"));
      assertEquals(2, rows(pg), "one row per key");
    }
  }

  private static Process start(ChildProcesses children, Path dir, String kill, List<String> datasource)
      throws IOException, InterruptedException {
    Files.deleteIfExists(dir.resolve("port"));
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    List<String> cmd = new ArrayList<>(List.of(java.toString(), "-Xmx256m", "-XX:TieredStopAtLevel=1",
        "-XX:+UseSerialGC", "-Didem.test.kill=" + kill,
        "-Dorg.springframework.boot.logging.LoggingSystem=none", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        "-cp", System.getProperty("java.class.path"), JpaKillChild.class.getName(), dir.toString()));
    cmd.addAll(datasource);
    Path log = dir.resolve("child-" + (kill.isEmpty() ? "last" : kill.replace(':', '-')) + ".log");
    Process p = children.add(new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (!Files.exists(dir.resolve("port"))) {
      assertTrue(p.isAlive(), "the child died at startup: " + Files.readString(log));
      assertTrue(System.nanoTime() < deadline, "the child did not start within 90 s");
      Thread.sleep(50); // a child JVM starting: nothing to wait on but its port file
    }
    return p;
  }

  private static Optional<HttpResponse<String>> post(Path dir, String key, String item) throws Exception {
    int port = Integer.parseInt(Files.readString(dir.resolve("port")).strip());
    HttpRequest r = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/orders"))
        .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json").header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"" + item + "\"}")).build();
    try {
      return Optional.of(HTTP.send(r, HttpResponse.BodyHandlers.ofString()));
    } catch (IOException e) {
      return Optional.empty(); // the connection died with the process
    }
  }

  private static void awaitDeath(Process p) throws InterruptedException {
    assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the child did not halt");
    assertEquals(99, p.exitValue(), "halted by the kill switch");
  }

  private static long rows(PgDatabase pg) throws Exception {
    try (Connection c = pg.dataSource().getConnection(); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM orders")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
