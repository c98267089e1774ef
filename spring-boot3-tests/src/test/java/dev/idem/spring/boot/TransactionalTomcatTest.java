package dev.idem.spring.boot;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Base of the tests that run transactional-mode handlers ({@code @Idempotent(transactional = true)})
 * on one Tomcat: the app's DataSource is an {@link AppDatabase} of its own, which is also the
 * guard's store (so the claim commits or rolls back with the handler's rows), and the client and
 * outbox are off. A subclass is a {@code @SpringBootTest(classes = App.class, webEnvironment =
 * RANDOM_PORT)} and names only what it adds (a buffer cap, say) in its properties.
 *
 * <p>It gives the port, keyed and unkeyed POSTs, the rows a handler wrote per item, and the
 * answers of {@link SameHandlerRoutes} unguarded, guarded and replayed.
 */
public abstract class TransactionalTomcatTest {
  /** One client for every test: HTTP/1.1, as the apps these tests stand for are called. */
  protected static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  protected int port;

  @Autowired
  protected JdbcTemplate jdbc;

  @DynamicPropertySource
  static void transactionalApp(DynamicPropertyRegistry registry) {
    // Called once per application context: each test class gets a fresh database.
    AppDatabase.register(registry, AppDatabase.withOrders("idem-tx-"));
    registry.add("idem.server.store", () -> "datasource");
    registry.add("spring.datasource.hikari.connection-init-sql", () -> "PRAGMA busy_timeout = 5000");
    registry.add("idem.client.enabled", () -> "false");
    registry.add("idem.outbox.enabled", () -> "false");
  }

  /** A POST without a body and without an Idempotency-Key to {@code path}. */
  protected HttpRequest post(String path) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .POST(HttpRequest.BodyPublishers.noBody()).build();
  }

  /** A POST without a body to {@code path} under the Idempotency-Key {@code key}. */
  protected HttpRequest post(String path, String key) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.noBody()).build();
  }

  /** Sends {@code request} and reads the whole answer. */
  protected static HttpResponse<byte[]> send(HttpRequest request) throws Exception {
    return HTTP.send(request, HttpResponse.BodyHandlers.ofByteArray());
  }

  /**
   * The {@link SameHandlerRoutes} answers for {@code kind}: unguarded, then guarded under the key
   * {@code k-<kind>}, then that key again (the replay).
   */
  protected SameHandlerAnswers sameHandlerAnswers(String kind) throws Exception {
    HttpResponse<byte[]> plain = send(post(SameHandlerRoutes.PLAIN + kind));
    HttpRequest keyed = post(SameHandlerRoutes.GUARDED + kind, "k-" + kind);
    HttpResponse<byte[]> guarded = send(keyed);
    HttpResponse<byte[]> replay = send(keyed);
    return new SameHandlerAnswers(plain, guarded, replay);
  }

  /** The rows the app's handlers committed for {@code item}. */
  protected int rows(String item) {
    return jdbc.queryForObject("SELECT COUNT(*) FROM orders WHERE item = ?", Integer.class, item);
  }
}
