package dev.idem.spring.boot.tenants;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.IdempotencyGuard;
import dev.idem.server.RecordQuery;
import dev.idem.spring.boot.AppDatabase;
import dev.idem.spring.server.Idempotent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code idem.server.caller-header}: the header a gateway sets is the caller a key is scoped by.
 * Two tenants that pick the same key each run their own operation and are replayed their own
 * answer; a keyed request without the header is refused 400 before its handler runs or anything is
 * stored, rather than put in one "anonymous" scope with every other such request.
 */
@SpringBootTest(classes = CallerHeaderTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "idem.client.enabled=false", "idem.outbox.enabled=false", "idem.server.caller-header=X-Tenant-Id"})
class CallerHeaderTest {
  static final Path DIR = AppDatabase.withOrders("idem-caller-header-");

  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) {
    AppDatabase.register(registry, DIR);
  }

  @SpringBootApplication
  @Import(Orders.class)
  static class App {}

  @RestController
  static class Orders {
    final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    final AtomicInteger created = new AtomicInteger();

    @PostMapping("/orders")
    @ResponseStatus(HttpStatus.CREATED)
    @Idempotent
    Map<String, Object> create(@RequestHeader(name = "X-Tenant-Id", required = false) String tenant,
        @RequestBody Map<String, Object> order) {
      runs.computeIfAbsent(String.valueOf(tenant), t -> new AtomicInteger()).incrementAndGet();
      return Map.of("tenant", String.valueOf(tenant), "order", created.incrementAndGet(), "item", order.get("item"));
    }

    int runsOf(String tenant) {
      AtomicInteger n = runs.get(tenant);
      return n == null ? 0 : n.get();
    }
  }

  static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @LocalServerPort
  int port;
  @Autowired
  Orders orders;
  @Autowired
  IdempotencyGuard guard;

  private HttpResponse<String> post(String tenant, String key, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders"))
        .header("Content-Type", "application/json").header("Idempotency-Key", key);
    if (tenant != null) {
      b.header("X-Tenant-Id", tenant);
    }
    return HTTP.send(b.POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private long recordsWithKey(String key) {
    return guard.records(RecordQuery.all()).records().stream().filter(r -> r.id().key().equals(key)).count();
  }

  @Test
  void twoTenantsWithTheSameKeyEachRunOnceAndAreReplayedTheirOwnAnswer() throws Exception {
    String key = "order-shared-0001";
    // Tenants of this test only: the tests share the context, and the handler's counts.
    HttpResponse<String> acme = post("acme-1", key, "{\"item\":\"book\"}");
    HttpResponse<String> globex = post("globex-1", key, "{\"item\":\"book\"}");
    assertEquals(201, acme.statusCode(), acme.body());
    assertEquals(201, globex.statusCode(), globex.body());
    assertTrue(globex.headers().firstValue("Idempotent-Replayed").isEmpty(), "globex ran its own operation");
    assertTrue(acme.body().contains("\"tenant\":\"acme-1\""), acme.body());
    assertTrue(globex.body().contains("\"tenant\":\"globex-1\""), globex.body());
    assertEquals(1, orders.runsOf("acme-1"));
    assertEquals(1, orders.runsOf("globex-1"));

    HttpResponse<String> acmeAgain = post("acme-1", key, "{\"item\":\"book\"}");
    HttpResponse<String> globexAgain = post("globex-1", key, "{\"item\":\"book\"}");
    assertEquals("true", acmeAgain.headers().firstValue("Idempotent-Replayed").orElse(null));
    assertEquals("true", globexAgain.headers().firstValue("Idempotent-Replayed").orElse(null));
    assertEquals(acme.body(), acmeAgain.body(), "acme's retry gets acme's answer");
    assertEquals(globex.body(), globexAgain.body(), "globex's retry gets globex's answer");
    assertEquals(1, orders.runsOf("acme-1"), "a retry does not run the handler again");
    assertEquals(1, orders.runsOf("globex-1"), "a retry does not run the handler again");
    assertEquals(2, recordsWithKey(key), "one record per tenant for the one key");
  }

  @Test
  void anotherTenantsKeyWithAnotherBodyRuns() throws Exception {
    String key = "order-shared-0002";
    assertEquals(201, post("acme", key, "{\"item\":\"book\"}").statusCode());
    HttpResponse<String> globex = post("globex", key, "{\"item\":\"lamp\"}");
    assertEquals(201, globex.statusCode(), "globex is refused for acme's use of the key: " + globex.body());
    assertTrue(globex.body().contains("\"item\":\"lamp\""), globex.body());
  }

  @Test
  void aKeyedRequestWithoutTheHeaderIsRefusedBeforeAnythingRunsOrIsStored() throws Exception {
    String key = "order-no-tenant-0003";
    int before = orders.created.get();
    for (String blankOrMissing : new String[] {null, " "}) {
      HttpResponse<String> r = post(blankOrMissing, key, "{\"item\":\"book\"}");
      assertEquals(400, r.statusCode(), r.body());
      assertEquals("application/problem+json", r.headers().firstValue("Content-Type").orElse(null));
      assertTrue(r.body().contains("urn:idem:problem:idempotency-caller-missing"), r.body());
      assertTrue(r.body().contains("X-Tenant-Id"), "the refusal names the header: " + r.body());
    }
    assertEquals(before, orders.created.get(), "the handler never ran");
    assertEquals(0, recordsWithKey(key), "nothing was claimed or stored");

    // The same key with the header is a first request: the refusals left nothing behind.
    HttpResponse<String> acme = post("acme", key, "{\"item\":\"book\"}");
    assertEquals(201, acme.statusCode(), acme.body());
    assertTrue(acme.headers().firstValue("Idempotent-Replayed").isEmpty(), acme.body());
    assertEquals(before + 1, orders.created.get());
  }
}
