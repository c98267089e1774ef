package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.OperationUncertainException;
import dev.idem.spring.client.IdempotentCall;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.ReceivedRequest;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.http.RequestEntity;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The starter in a Spring Boot app on a random port, with the app's own SQLite DataSource: the
 * client (Boot's RestClient and WebClient builders, the app's RestTemplate) against the test kit's
 * reference server, the guard in transactional mode and on a route named in properties, and
 * health. Effects are counted per key at the server and rows in the app's database.
 */
@SpringBootTest(classes = TestApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "idem.server.store=datasource",
    "idem.server.routes=POST /payments",
    "management.endpoints.web.exposure.include=health",
    "management.endpoint.health.show-details=always",
    "spring.datasource.hikari.connection-init-sql=PRAGMA busy_timeout = 5000",
    "spring.datasource.hikari.maximum-pool-size=4"})
class StarterTest {
  static final Path DIR;

  static {
    try {
      DIR = Files.createTempDirectory("idem-boot-");
      // The app's own tables, in the database that also holds the guard's records.
      try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + DIR.resolve("app.db"));
           Statement st = c.createStatement()) {
        st.execute("PRAGMA journal_mode = WAL");
        st.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT NOT NULL)");
        st.execute("CREATE TABLE payments (id INTEGER PRIMARY KEY, amount TEXT NOT NULL)");
      }
    } catch (Exception e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) {
    registry.add("idem.directory", () -> DIR.resolve("idem").toString());
    registry.add("spring.datasource.url", () -> "jdbc:sqlite:" + DIR.resolve("app.db"));
    // One source per scheme of the shared vectors, each with the vectors' secret.
    for (String scheme : List.of("standard-webhooks", "stripe", "github")) {
      registry.add("idem.webhooks.sources." + scheme + ".scheme", () -> scheme);
      registry.add("idem.webhooks.sources." + scheme + ".secrets[0]", () -> WebhookVectors.secret(scheme));
    }
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  int port;
  @Autowired
  RestClient.Builder restClients;
  @Autowired
  WebClient.Builder webClients;
  @Autowired
  RestTemplate restTemplate;
  @Autowired
  IdempotentExecutor executor;
  @Autowired
  org.springframework.beans.factory.ObjectProvider<dev.idem.spring.client.IdempotencyInterceptor> interceptor;
  @Autowired
  JdbcTemplate jdbc;
  @Autowired
  TestApp.FailNext failNext;
  @Autowired
  TestApp.Received received;

  IdempotentServer server;

  @BeforeEach
  void startServer() {
    server = IdempotentServer.start();
  }

  @AfterEach
  void stopServer() {
    server.close();
  }

  // ------------------------------------------------------------------ client

  /**
   * The first finding: Boot's RestClient.Builder, used the obvious way, sent a POST without
   * a key and journaled nothing. With the starter the same code sends a key and journals it.
   */
  @Test
  void anUntaggedPostThroughBootsRestClientBuilderIsKeyedAndJournaled() throws Exception {
    RestClient client = restClients.baseUrl(server.url("/").toString()).build();
    ResponseEntity<String> r = client.post().uri("/orders").contentType(MediaType.APPLICATION_JSON)
        .body("{\"qty\":1}").retrieve().toEntity(String.class);
    assertEquals(201, r.getStatusCode().value());
    String key = onlyKey();
    assertEquals(1, server.effectCount(key));
    OperationRecord rec = journaled("untagged-post", key);
    assertEquals(OperationState.SUCCEEDED, rec.state());
  }

  /** A lost response: the same key goes out again, the server replays, one effect. */
  @Test
  void aLostResponseThroughRestClientIsRetriedWithItsKeyAndReplayed() throws Exception {
    server.plan().next(Fault.commitThenDropResponse());
    IdempotentCall call = IdempotentCall.named("create-order");
    String body = restClients.build().post().uri(server.url("/orders")).contentType(MediaType.APPLICATION_JSON)
        .attributes(call).body("{\"qty\":2}").retrieve().body(String.class);
    assertTrue(body.contains("\"effect\":1"), body);
    String key = call.key().orElseThrow().value();
    assertEquals(2, server.requestCount());
    assertEquals(Set.of(key), keysSent());
    assertEquals(1, server.effectCount(key));
    assertTrue(call.replayed());
    assertEquals(OperationState.SUCCEEDED, journaled("create-order", key).state());
  }

  /**
   * What docs/spring.md tells an app to do with an OperationUncertainException: the same call
   * again is refused without sending anything (the journal keeps the operation UNCERTAIN, and
   * Idem never reports an outcome it does not know); after a re-drive the same call sends the
   * same key once more and the server replays: one effect.
   */
  @Test
  void anUncertainCallIsRefusedAgainUntilReDrivenAndThenReplayedUnderItsKey() throws Exception {
    server.plan().forNext(3, Fault.commitThenDropResponse()); // every attempt of idem.client.max-attempts
    IdempotentCall call = IdempotentCall.named("create-order");
    RestClient client = restClients.build();
    ResourceAccessException first = assertThrows(ResourceAccessException.class, () -> client.post()
        .uri(server.url("/orders")).contentType(MediaType.APPLICATION_JSON).attributes(call).body("{\"qty\":7}")
        .retrieve().toBodilessEntity());
    OperationUncertainException uncertain = assertInstanceOf(OperationUncertainException.class, first.getCause());
    assertFalse(uncertain.fromJournal());
    String key = call.key().orElseThrow().value();
    assertEquals(3, server.requestCount());
    assertEquals(1, server.effectCount(key));
    assertEquals(OperationState.UNCERTAIN, journaled("create-order", key).state());

    ResourceAccessException again = assertThrows(ResourceAccessException.class, () -> client.post()
        .uri(server.url("/orders")).contentType(MediaType.APPLICATION_JSON).attributes(call).body("{\"qty\":7}")
        .retrieve().toBodilessEntity());
    assertTrue(assertInstanceOf(OperationUncertainException.class, again.getCause()).fromJournal(),
        "handed over from the journal");
    assertEquals(3, server.requestCount(), "nothing was sent");

    executor.redrive(uncertain.operationId());
    int status = client.post().uri(server.url("/orders")).contentType(MediaType.APPLICATION_JSON).attributes(call)
        .body("{\"qty\":7}").retrieve().toBodilessEntity().getStatusCode().value();
    assertEquals(201, status);
    assertEquals(4, server.requestCount());
    assertEquals(Set.of(key), keysSent(), "the same key on every attempt");
    assertEquals(1, server.effectCount(key));
    assertTrue(call.replayed());
    assertEquals(OperationState.SUCCEEDED, journaled("create-order", key).state());
  }

  /**
   * Boot builds its clients' request factories to follow redirects (the default of
   * {@code spring.http.client.redirects}); with the JDK client a 307 re-sent the keyed POST to the
   * new location below Idem, where the journal counted no attempt (this test failed so). Now the
   * keyed request's 307 reaches Idem, which answers it to the caller as the other adapters do:
   * one request, one attempt, FAILED, nothing at the new location. An untagged GET keeps Boot's
   * redirects.
   */
  @Test
  void aKeyedPostsRedirectIsNotFollowedBelowIdemWhileAGetStillFollowsIt() throws Exception {
    server.plan().next(Fault.redirect(307, "/moved"));
    IdempotentCall call = IdempotentCall.named("create-order");
    int status = restClients.build().post().uri(server.url("/orders")).contentType(MediaType.APPLICATION_JSON)
        .attributes(call).body("{\"qty\":5}").exchange((req, res) -> res.getStatusCode().value());
    assertEquals(307, status, "the caller gets the redirect");
    assertRedirectLeftToIdem(server, executor, call);

    server.plan().next(Fault.redirect(302, "/moved"));
    restClients.build().get().uri(server.url("/orders/1")).exchange((req, res) -> res.getStatusCode().value());
    assertEquals(1, requestsTo("/moved"), "Boot's client followed the GET's redirect");
  }

  static void assertRedirectLeftToIdem(IdempotentServer server, IdempotentExecutor executor, IdempotentCall call) throws IOException {
    String key = call.key().orElseThrow().value();
    assertEquals(0, server.recordedRequests().stream().filter(r -> r.path().equals("/moved")).count(),
        "the redirect was not followed");
    assertEquals(List.of(key), server.recordedRequests().stream().map(r -> r.keyHeader().orElse("(none)")).toList());
    assertEquals(1, server.requestCount());
    assertEquals(0, server.effectCount(key));
    OperationRecord rec = executor.list(OperationState.FAILED, null, 1000).stream()
        .filter(r -> r.id().key().value().equals(key)).findFirst().orElseThrow();
    assertEquals(1, rec.attempts().size(), "requests on the wire = attempts in the journal");
  }

  @Test
  void aLostResponseThroughWebClientIsRetriedWithItsKeyAndReplayed() throws Exception {
    server.plan().next(Fault.commitThenDropResponse());
    IdempotentCall call = IdempotentCall.named("create-order");
    String body = webClients.build().post().uri(server.url("/orders")).contentType(MediaType.APPLICATION_JSON)
        .attributes(call).bodyValue(Map.of("qty", 3)).retrieve().bodyToMono(String.class).toFuture().get();
    assertTrue(body.contains("\"effect\":1"), body);
    String key = call.key().orElseThrow().value();
    assertEquals(2, server.requestCount());
    assertEquals(Set.of(key), keysSent());
    assertEquals(1, server.effectCount(key));
    assertTrue(call.replayed());
    assertEquals(OperationState.SUCCEEDED, journaled("create-order", key).state());
  }

  @Test
  void theAppsOwnRestTemplateBeanSendsUntaggedPostsKeyed() throws Exception {
    server.plan().next(Fault.status(503));
    ResponseEntity<String> r = restTemplate.postForEntity(server.url("/orders"), Map.of("qty", 4), String.class);
    assertEquals(201, r.getStatusCode().value());
    String key = onlyKey();
    assertEquals(2, server.requestCount());
    assertEquals(1, server.effectCount(key));
    assertEquals(OperationState.SUCCEEDED, journaled("untagged-post", key).state());
  }

  /** The second finding: a key header the app set itself was sent but not journaled. */
  @Test
  void aKeyHeaderTheAppSetsIsTheJournaledKey() throws Exception {
    String key = "app-key-" + IdempotencyKey.generate().value();
    restClients.build().post().uri(server.url("/orders")).header("Idempotency-Key", key)
        .contentType(MediaType.APPLICATION_JSON).body("{\"qty\":5}").retrieve().toBodilessEntity();
    assertEquals(Set.of(key), keysSent());
    assertEquals(OperationState.SUCCEEDED, journaled("untagged-post", key).state());
  }

  /** Queued delivery: journaled now, sent by the starter's outbox (started with the app) with the journaled key. */
  @Test
  void anEnqueuedRequestIsDeliveredByTheOutbox() throws Exception {
    IdempotencyKey key = IdempotencyKey.generate();
    interceptor.getObject().enqueue("untagged-post", key, RequestEntity.post(server.url("/orders"))
        .contentType(MediaType.APPLICATION_JSON).body("{\"qty\":6}"));
    assertTrue(server.awaitEffects(key.value(), 1, java.time.Duration.ofSeconds(20)), "delivered");
    assertEquals(Set.of(key.value()), keysSent());
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
    while (executor.find(new dev.idem.core.OperationId(dev.idem.core.OperationId.DEFAULT_SCOPE, "untagged-post", key))
        .map(r -> r.state() != OperationState.SUCCEEDED).orElse(true) && System.nanoTime() < deadline) {
      Thread.sleep(20); // the outbox records the outcome on its own thread
    }
    assertEquals(OperationState.SUCCEEDED, journaled("untagged-post", key.value()).state());
  }

  // ------------------------------------------------------------------ server

  @Test
  void transactionalModeRunsTheHandlerOncePerKeyAndReplays() throws Exception {
    long before = rows("orders");
    String key = IdempotencyKey.generate().value();
    HttpResponse<String> first = post("/orders", key, "{\"item\":\"book\"}");
    HttpResponse<String> second = post("/orders", key, "{\"item\":\"book\"}");
    assertEquals(201, first.statusCode(), first.body());
    assertEquals(201, second.statusCode());
    assertEquals(first.body(), second.body());
    assertEquals(Optional.of("true"), second.headers().firstValue("Idempotent-Replayed"));
    assertEquals(before + 1, rows("orders"), "one effect for the key");

    assertEquals(422, post("/orders", key, "{\"item\":\"pen\"}").statusCode(), "the key with another payload");
    assertEquals(400, post("/orders", null, "{\"item\":\"pen\"}").statusCode(), "no key");
    assertEquals(before + 1, rows("orders"));
  }

  /** A handler that wrote its row and then failed: the claim and the row roll back together; the retry runs once. */
  @Test
  void aHandlerThatFailsAfterItsWriteLeavesNeitherTheRowNorTheClaim() throws Exception {
    long before = rows("orders");
    String key = IdempotencyKey.generate().value();
    failNext.armed.set(true);
    HttpResponse<String> failed = post("/orders", key, "{\"item\":\"lamp\"}");
    assertEquals(500, failed.statusCode(), failed.body());
    assertEquals(before, rows("orders"), "the row rolled back with the claim");
    HttpResponse<String> retried = post("/orders", key, "{\"item\":\"lamp\"}");
    assertEquals(201, retried.statusCode(), retried.body());
    assertTrue(retried.headers().firstValue("Idempotent-Replayed").isEmpty(), "the retry ran the handler");
    assertEquals(before + 1, rows("orders"));
  }

  @Test
  void aRouteNamedInPropertiesIsGuarded() throws Exception {
    long before = rows("payments");
    String key = IdempotencyKey.generate().value();
    HttpResponse<String> first = post("/payments", key, "{\"amount\":\"12.00\"}");
    HttpResponse<String> second = post("/payments", key, "{\"amount\":\"12.00\"}");
    assertEquals(201, first.statusCode(), first.body());
    assertEquals(Optional.of("true"), second.headers().firstValue("Idempotent-Replayed"));
    assertEquals(before + 1, rows("payments"));
  }

  // ------------------------------------------------------------------ webhooks

  /**
   * Every shared signature vector through the endpoint its source got: a valid delivery is stored
   * and answered 2xx, an invalid one is refused (4xx) and stores nothing; the handler beans then
   * run each stored event once.
   */
  @Test
  void theWebhookEndpointsVerifyTheSharedVectors() throws Exception {
    int valid = 0;
    for (WebhookVectors.Vector v : WebhookVectors.playable()) {
      HttpRequest.Builder b = HttpRequest.newBuilder(app("/webhooks/" + v.scheme()))
          .POST(HttpRequest.BodyPublishers.ofByteArray(v.body()));
      v.headers().forEach(b::header);
      HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
      if (v.valid()) {
        valid++;
        assertTrue(r.statusCode() / 100 == 2, v + " -> " + r.statusCode() + " " + r.body());
      } else {
        assertTrue(r.statusCode() / 100 == 4, v + " -> " + r.statusCode() + " " + r.body());
      }
    }
    assertTrue(valid >= 10, "valid vectors: " + valid);
    Set<String> stored = WebhookVectors.playable().stream().filter(WebhookVectors.Vector::valid)
        .map(WebhookVectors.Vector::eventKey).collect(Collectors.toSet());
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
    while (received.events.size() < stored.size() && System.nanoTime() < deadline) {
      Thread.sleep(20); // the processor runs on its own threads; bounded wait for them
    }
    Set<String> handled = received.events.stream().map(e -> e.source() + "/" + e.eventId())
        .collect(Collectors.toSet());
    assertEquals(stored, handled);
    assertEquals(stored.size(), received.events.size(), "each event handled once");
  }

  // ------------------------------------------------------------------ operations

  @Test
  void healthReportsTheJournalWritable() throws Exception {
    HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(app("/actuator/health/idem")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    assertTrue(r.body().contains("\"status\":\"UP\""), r.body());
    assertTrue(r.body().contains("\"writable\":true"), r.body());
    assertTrue(r.body().contains("\"guard\""), r.body());
  }

  // ------------------------------------------------------------------ helpers

  private HttpResponse<String> post(String path, String key, String json) throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(app(path)).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json));
    if (key != null) {
      b.header("Idempotency-Key", key);
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private URI app(String path) {
    return URI.create("http://localhost:" + port + path);
  }

  private long rows(String table) {
    Long n = jdbc.queryForObject("SELECT COUNT(*) FROM " + table, Long.class);
    return n == null ? 0 : n;
  }

  private Set<String> keysSent() {
    return server.recordedRequests().stream().map(ReceivedRequest::keyHeader)
        .map(k -> k.orElse("(none)")).collect(Collectors.toSet());
  }

  private long requestsTo(String path) {
    return server.recordedRequests().stream().filter(r -> r.path().equals(path)).count();
  }

  private String onlyKey() {
    Set<String> keys = keysSent();
    assertEquals(1, keys.size(), "one key on every request: " + keys);
    String key = keys.iterator().next();
    assertFalse(key.equals("(none)"), "the POST went out without a key");
    return key;
  }

  private OperationRecord journaled(String operation, String key) throws IOException {
    List<OperationRecord> found = executor.list(OperationState.SUCCEEDED, null, 1000);
    found.addAll(executor.list(OperationState.PENDING, null, 1000));
    found.addAll(executor.list(OperationState.UNCERTAIN, null, 1000));
    return found.stream().filter(r -> r.id().operation().equals(operation) && r.id().key().value().equals(key))
        .findFirst().orElseThrow(() -> new AssertionError("not journaled: " + operation + " " + key));
  }
}
