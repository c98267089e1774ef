package dev.idem.spring.jpa.rtoday6;

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
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.event.TransactionPhase;
import org.springframework.transaction.event.TransactionalEventListener;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Transactional mode (JPA, Boot's JpaTransactionManager): a released answer (408, 425, 429, 503:
 * "not processed, retry") still COMMITS the writes the handler deferred to its transaction's
 * commit through Spring's transaction synchronization, here the most common form of it: a domain
 * event the handler publishes, written to an outbox table by a
 * {@code @TransactionalEventListener(phase = BEFORE_COMMIT)} (the transactional-outbox pattern).
 *
 * <p>Commit 2bd0323d made a release take the handler's pending JPA changes with it by flushing
 * them inside the guard's savepoint ({@code TransactionalGuard.flush}), but the release is still
 * a JDBC rollback to that savepoint followed by a normal commit of Spring's transaction
 * ({@code TransactionalGuard.run}: the callback returns the released answer, the TransactionTemplate
 * commits). Everything the commit itself runs (before-commit listeners and synchronizations, and
 * after-commit ones: a message sent, a mail) happens after the savepoint rollback and is committed
 * (or performed) although the claim was released: every retry of the key, which runs the handler
 * again, makes the effect again. docs/spring.md: "released: the claim and every write of the
 * handler are undone, so a retry runs it again". (The same holds for the 503 the guard answers
 * when storing the result fails: TransactionalRun.storeFailed returns an answer, and Spring commits.)
 * A release in a transaction the guard began could roll that transaction back instead
 * (setRollbackOnly), which skips the commit's synchronizations.
 *
 * <p>Expected: after two 503 answers to one key, no outbox row (the handler's balance change is
 * already undone by the flush fix). Before a fix: two outbox rows, one per released answer.
 */
@ExtendWith(PostgresExtension.class)
class RvRtoday6ReleasedAnswerCommitsBeforeCommitWritesTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @Test
  void aReleasedAnswerTakesTheHandlersBeforeCommitWritesWithIt(PgDatabase pg, @TempDir Path dir) throws Exception {
    try (Connection c = pg.dataSource().getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE accounts (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL)");
      st.execute("INSERT INTO accounts (id, balance) VALUES (1, 100)");
      st.execute("CREATE TABLE outbox (id BIGSERIAL PRIMARY KEY, message TEXT NOT NULL)");
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
      assertEquals(100, count(pg, "SELECT balance FROM accounts WHERE id = 1"), "the flush fix undoes the JPA change");
      assertEquals(0, count(pg, "SELECT count(*) FROM outbox"), "two 503s under one key, the claim released each"
          + " time, yet the handler's before-commit outbox write committed each time: "
          + count(pg, "SELECT count(*) FROM outbox") + " 'withdrawn' messages for no withdrawal");
    }
  }

  private static long count(PgDatabase pg, String sql) throws Exception {
    try (Connection c = pg.dataSource().getConnection(); Statement st = c.createStatement();
         ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @SpringBootApplication
  @Import({Accounts.class, Outbox.class})
  static class App {}

  @Entity
  @Table(name = "accounts")
  public static class Account {
    @Id
    private Long id;
    private long balance;

    protected Account() {}
  }

  record Withdrawn(long account, long amount) {}

  /** The transactional outbox: the event is written in the same transaction, just before it commits. */
  @Component
  static class Outbox {
    private final JdbcTemplate jdbc;

    Outbox(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @TransactionalEventListener(phase = TransactionPhase.BEFORE_COMMIT)
    void on(Withdrawn e) {
      jdbc.update("INSERT INTO outbox (message) VALUES (?)", "withdrawn " + e.amount() + " from " + e.account());
    }
  }

  @RestController
  static class Accounts {
    final AtomicInteger runs = new AtomicInteger();

    @PersistenceContext
    private EntityManager em;

    private final ApplicationEventPublisher events;

    Accounts(ApplicationEventPublisher events) {
      this.events = events;
    }

    /** Takes 10 off and announces it, then finds the payment network unavailable: "not processed, retry later". */
    @PostMapping("/withdraw")
    @Idempotent(transactional = true)
    ResponseEntity<String> withdraw() {
      runs.incrementAndGet();
      Account a = em.find(Account.class, 1L);
      a.balance -= 10;
      events.publishEvent(new Withdrawn(1, 10));
      return ResponseEntity.status(503).body("payment network unavailable, retry later");
    }
  }
}
