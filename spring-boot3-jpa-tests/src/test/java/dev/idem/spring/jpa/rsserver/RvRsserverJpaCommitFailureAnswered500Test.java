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
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Transactional mode with JPA: a commit that fails is answered 500 by the container, not the
 * documented 503. docs/spring.md (transactional mode): "A commit that fails (...) is answered 503,
 * and a retry is safe." {@code TransactionalGuard.run} answers 503 only for
 * {@code IdempotencyStoreException} and Spring's {@code TransactionException}. With a
 * {@code DataSourceTransactionManager} a failed commit is a {@code TransactionSystemException}; but
 * with Boot's {@code JpaTransactionManager} Hibernate flushes the handler's changes AT the commit,
 * and a failure there (a constraint, a deadlock or serialization failure found by the flush) comes
 * out of {@code TransactionTemplate.execute} as a translated {@code DataAccessException}
 * ({@code DataIntegrityViolationException}, {@code CannotAcquireLockException}...), which passes
 * the guard's catch and reaches the container: a 500 with Boot's error page. Nothing committed (the
 * claim rolled back with the writes), so a retry would be safe, but the client is told 500, an
 * answer Idem's own client and most clients do not retry, instead of the 503 with Retry-After that
 * says "not processed, retry". Here the flush fails on a duplicate primary key.
 *
 * <p>Expected: 503 (the guard's unavailable answer). Before a fix: 500.
 *
 * <p>Since the guard flushes a handler's pending changes when it returns (so that a released
 * answer takes them with it), the duplicate key fails at that flush; the deferred constraint of
 * the second case still fails at the commit itself.
 */
@ExtendWith(PostgresExtension.class)
class RvRsserverJpaCommitFailureAnswered500Test {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @Test
  void aCommitThatFailsAtTheFlushIsAnswered503(PgDatabase pg, @TempDir Path dir) throws Exception {
    try (Connection c = pg.dataSource().getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE ledger (id BIGINT PRIMARY KEY, amount BIGINT NOT NULL)");
      st.execute("INSERT INTO ledger (id, amount) VALUES (1, 100)");
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
      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(base + "/entries"))
          .header("Idempotency-Key", "entry-1").POST(HttpRequest.BodyPublishers.noBody()).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(503, r.statusCode(), "the commit failed (nothing committed, a retry is safe), and the client was"
          + " answered: " + r.body());
    }
  }

  /**
   * The commit itself fails, after a flush that succeeded: PostgreSQL checks a deferred constraint
   * at COMMIT, and JpaTransactionManager translates that failure into a
   * {@code DataIntegrityViolationException}, not a {@code TransactionException}. Nothing committed:
   * answered 503, and the handler's row is not there.
   */
  @Test
  void aCommitThatFailsAtTheCommitItselfIsAnswered503(PgDatabase pg, @TempDir Path dir) throws Exception {
    try (Connection c = pg.dataSource().getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE refs (id BIGINT PRIMARY KEY, ref TEXT NOT NULL,"
          + " CONSTRAINT refs_unique UNIQUE (ref) DEFERRABLE INITIALLY DEFERRED)");
      st.execute("INSERT INTO refs (id, ref) VALUES (1, 'taken')");
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
      HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(base + "/refs"))
          .header("Idempotency-Key", "ref-1").POST(HttpRequest.BodyPublishers.noBody()).build(),
          HttpResponse.BodyHandlers.ofString());
      assertEquals(503, r.statusCode(), "the commit failed on a deferred constraint (nothing committed), and the"
          + " client was answered: " + r.body());
    }
    try (Connection c = pg.dataSource().getConnection(); Statement st = c.createStatement();
         java.sql.ResultSet rs = st.executeQuery("SELECT count(*) FROM refs")) {
      rs.next();
      assertEquals(1, rs.getLong(1), "the handler's row did not commit");
    }
  }

  @SpringBootApplication
  @Import(Entries.class)
  static class App {}

  @Entity
  @Table(name = "ledger")
  public static class Entry {
    @Id
    private Long id;
    private long amount;

    protected Entry() {}

    Entry(long id, long amount) {
      this.id = id;
      this.amount = amount;
    }
  }

  @Entity
  @Table(name = "refs")
  public static class Ref {
    @Id
    private Long id;
    private String ref;

    protected Ref() {}

    Ref(long id, String ref) {
      this.id = id;
      this.ref = ref;
    }
  }

  @RestController
  static class Entries {
    @PersistenceContext
    private EntityManager em;

    /** Persists an entry whose id is taken: Hibernate finds out at the flush, which is the commit. */
    @PostMapping("/entries")
    @Idempotent(transactional = true)
    String add() {
      em.persist(new Entry(1L, 5));
      return "added";
    }

    /** Its row breaks a deferred constraint: the flush passes, the commit fails. */
    @PostMapping("/refs")
    @Idempotent(transactional = true)
    String addRef() {
      em.persist(new Ref(2L, "taken"));
      return "added";
    }
  }
}
