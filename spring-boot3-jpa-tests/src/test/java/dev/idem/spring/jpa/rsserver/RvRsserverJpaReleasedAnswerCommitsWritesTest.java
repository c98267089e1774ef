package dev.idem.spring.jpa.rsserver;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.jdbc.support.PostgresExtension;
import dev.idem.jdbc.support.PostgresExtension.PgDatabase;
import dev.idem.spring.server.Idempotent;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityManager;
import jakarta.persistence.Id;
import jakarta.persistence.PersistenceContext;
import jakarta.persistence.Table;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Transactional mode with JPA (Boot's JpaTransactionManager): a handler that changes a managed
 * entity and then answers one of the statuses the guard releases (408, 425, 429, 503: "not
 * processed, retry") has its change COMMITTED, although the claim is released and the retry runs
 * the handler again. docs/server.md: "handler answered 408, 425, 429 or 503 ... claim released: the
 * retry runs the handler again"; {@code TransactionalRun.complete}: "Released: the claim and the
 * handler's writes go together, so a retry finds nothing done". The starter runs the guard with
 * {@code joinTransaction} inside Spring's TransactionTemplate, so the release is a JDBC rollback to
 * the guard's savepoint, and the TransactionTemplate then commits normally. Hibernate has not
 * flushed the handler's dirty entity by then (it flushes at commit, and the guard's JDBC calls on
 * the shared connection trigger no auto-flush): the UPDATE is written after the savepoint rollback
 * and commits. Every retry with the same key runs the handler again and commits again: one key,
 * as many effects as answers (here two withdrawals for two 503s). With JdbcTemplate (writes sent
 * at once) the savepoint undoes them; with JPA it does not. (The stored-answer path commits claim
 * and flush together, and a thrown handler rolls the whole transaction back, so only the release
 * path is wrong.)
 *
 * <p>Expected: after two 503 answers to one key, the balance is unchanged (100), as the handler's
 * writes went with the released claim. Before a fix: 80.
 */
@ExtendWith(PostgresExtension.class)
class RvRsserverJpaReleasedAnswerCommitsWritesTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @Test
  void aReleasedAnswerTakesTheHandlersJpaChangesWithIt(PgDatabase pg, @TempDir Path dir) throws Exception {
    try (Connection c = pg.dataSource().getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE accounts (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL)");
      st.execute("INSERT INTO accounts (id, balance) VALUES (1, 100)");
    }
    try (ConfigurableApplicationContext app = new SpringApplicationBuilder(App.class).properties(
        "server.port=0",
        "idem.directory=" + dir.resolve("idem"),
        "idem.server.store=datasource",
        "idem.client.enabled=false",
        "idem.outbox.enabled=false",
        "spring.jpa.hibernate.ddl-auto=none",
        "spring.datasource.url=jdbc:postgresql://127.0.0.1:" + pg.cluster().port() + "/" + pg.name(),
        "spring.datasource.username=postgres").run()) {
      String base = "http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port");
      HttpRequest withdraw = HttpRequest.newBuilder(URI.create(base + "/withdraw"))
          .header("Idempotency-Key", "withdraw-1").POST(HttpRequest.BodyPublishers.noBody()).build();
      HttpResponse<String> first = HTTP.send(withdraw, HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> retry = HTTP.send(withdraw, HttpResponse.BodyHandlers.ofString());
      assertEquals(503, first.statusCode(), first.body());
      assertEquals(503, retry.statusCode(), "released, so the retry ran the handler again: " + retry.body());
      assertEquals(2, app.getBean(Accounts.class).runs.get());
      assertEquals(100, balance(pg), "two 503s under one key, the claim released each time, yet the handler's JPA"
          + " change committed each time");
    }
  }

  private static long balance(PgDatabase pg) throws Exception {
    try (Connection c = pg.dataSource().getConnection(); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery("SELECT balance FROM accounts WHERE id = 1")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @SpringBootApplication
  @Import(Accounts.class)
  static class App {}

  @Entity
  @Table(name = "accounts")
  public static class Account {
    @Id
    private Long id;
    private long balance;

    protected Account() {}
  }

  @RestController
  static class Accounts {
    final AtomicInteger runs = new AtomicInteger();

    @PersistenceContext
    private EntityManager em;

    /** Takes 10 off, then finds the payment network unavailable: "not processed, retry later". */
    @PostMapping("/withdraw")
    @Idempotent(transactional = true)
    ResponseEntity<String> withdraw() {
      runs.incrementAndGet();
      Account a = em.find(Account.class, 1L);
      a.balance -= 10;
      return ResponseEntity.status(503).body("payment network unavailable, retry later");
    }
  }
}
