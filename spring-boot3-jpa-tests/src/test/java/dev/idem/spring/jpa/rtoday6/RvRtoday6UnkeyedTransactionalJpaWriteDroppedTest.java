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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Transactional mode with JPA: since commit a0fe40b6 a request WITHOUT a key to a transactional
 * handler (a PUT, a DELETE, or any method on {@code keyRequired = false}) goes through the
 * lease-mode filter and runs outside any transaction ({@code GuardFilter.doFilterInternal}:
 * {@code transactional} is false without the key header). A handler written for transactional
 * mode, relying on the guard's transaction as docs/spring.md describes it ("every write the handler
 * makes through JdbcTemplate, JPA or anything else that joins Spring's transaction ... commit
 * together"; {@code @Idempotent}'s own Javadoc example has no {@code @Transactional}), then loses
 * its JPA change SILENTLY: with Boot's default open-in-view the entity is found and changed, the
 * handler answers 200, and nothing ever flushes or commits it (no transaction). Before a0fe40b6 the
 * unkeyed request ran in the guard's transaction (TransactionalRun.unguarded) and the change
 * committed. (With JdbcTemplate the handler's writes are no longer atomic either: each
 * auto-commits, and one that throws midway leaves the first ones committed.) A fix that keeps the
 * body unread could still run such a request in a Spring transaction of its own.
 *
 * <p>Expected: the 200 answer's change is in the database (balance 90). Since a0fe40b6: 100.
 */
@ExtendWith(PostgresExtension.class)
class RvRtoday6UnkeyedTransactionalJpaWriteDroppedTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @Test
  void anUnkeyedRequestsAnsweredJpaChangeIsWritten(PgDatabase pg, @TempDir Path dir) throws Exception {
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
      // A PUT needs no key (only POST and PATCH do): it runs unguarded, as documented.
      HttpRequest put = HttpRequest.newBuilder(URI.create(base + "/accounts/1/balance"))
          .PUT(HttpRequest.BodyPublishers.ofString("90")).header("Content-Type", "text/plain").build();
      HttpResponse<String> answer = HTTP.send(put, HttpResponse.BodyHandlers.ofString());
      assertEquals(200, answer.statusCode(), answer.body());
      assertEquals(90, balance(pg), "the unkeyed PUT to a transactional JPA handler was answered 200 ("
          + answer.body() + ") but its change was never written: it ran outside any transaction");
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
    @PersistenceContext
    private EntityManager em;

    /** Sets the balance; relies on the guard's transaction, as transactional mode's handlers do. */
    @PutMapping("/accounts/1/balance")
    @Idempotent(transactional = true)
    ResponseEntity<String> set(@org.springframework.web.bind.annotation.RequestBody String balance) {
      Account a = em.find(Account.class, 1L);
      a.balance = Long.parseLong(balance.trim());
      return ResponseEntity.ok("balance set to " + a.balance);
    }
  }
}
