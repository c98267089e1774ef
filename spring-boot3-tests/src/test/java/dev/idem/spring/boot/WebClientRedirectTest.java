package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.spring.client.IdempotentCall;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Boot builds the WebClient's connector to follow redirects (the default of
 * {@code spring.http.reactiveclient.redirects}; Boot 4.0: {@code spring.http.clients.redirects}):
 * Reactor Netty re-sent a keyed POST answered 307 to the new location below Idem's filter, where
 * the journal counted no attempt (this test failed so without the starter's connector wrapper).
 * Now a keyed exchange's 3xx reaches Idem as with the other adapters, with Boot's defaults, while
 * an untagged GET keeps Boot's redirects.
 */
@SpringBootTest(classes = TestApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "idem.outbox.enabled=false",
    "idem.server.store=datasource"})
class WebClientRedirectTest {
  @DynamicPropertySource
  static void stores(DynamicPropertyRegistry registry) {
    registry.add("idem.directory", () -> StarterTest.DIR.resolve("idem-webclient-redirects").toString());
    // A database of its own: the guard opens its SQLite store once per JVM, and StarterTest's
    // context (cached beside this one) holds app.db.
    registry.add("spring.datasource.url", () -> "jdbc:sqlite:" + StarterTest.DIR.resolve("webclient.db"));
  }

  @Autowired
  WebClient.Builder webClients;
  @Autowired
  IdempotentExecutor executor;

  IdempotentServer server;

  @BeforeEach
  void startServer() {
    server = IdempotentServer.start();
  }

  @AfterEach
  void stopServer() {
    server.close();
  }

  @Test
  void aKeyedPostsTemporaryRedirectIsTheCallersAnswerNotFollowed() throws Exception {
    server.plan().next(Fault.redirect(307, "/moved"));
    IdempotentCall call = IdempotentCall.named("create-order");
    assertEquals(307, post(call, 6), "the caller gets the redirect");
    StarterTest.assertRedirectLeftToIdem(server, executor, call);
  }

  @Test
  void aKeyedPostsMovedIsRetriedWithItsKeyNeverFollowed() throws Exception {
    server.plan().next(Fault.redirect(301, "/moved"));
    IdempotentCall call = IdempotentCall.named("create-order");
    assertEquals(201, post(call, 7));
    String key = call.key().orElseThrow().value();
    assertEquals(0, requestsTo("/moved"), "the redirect was not followed");
    assertEquals(List.of(key, key), server.recordedRequests().stream().map(r -> r.keyHeader().orElse("(none)")).toList(),
        "both requests on the wire carried the key");
    assertEquals(1, server.effectCount(key));
    OperationRecord rec = executor.list(OperationState.SUCCEEDED, null, 1000).stream()
        .filter(r -> r.id().key().value().equals(key)).findFirst().orElseThrow();
    assertEquals(2, rec.attempts().size(), "requests on the wire = attempts in the journal");
  }

  @Test
  void anUntaggedGetStillFollowsBootsRedirects() throws Exception {
    server.plan().next(Fault.redirect(302, "/moved"));
    webClients.build().get().uri(server.url("/orders/1")).exchangeToMono(res -> res.releaseBody()
        .thenReturn(res.statusCode().value())).toFuture().get();
    assertEquals(1, requestsTo("/moved"), "Boot's connector followed the GET's redirect");
  }

  private int post(IdempotentCall call, int qty) throws Exception {
    return webClients.build().post().uri(server.url("/orders")).contentType(MediaType.APPLICATION_JSON)
        .attributes(call).bodyValue(Map.of("qty", qty)).exchangeToMono(res -> res.releaseBody()
            .thenReturn(res.statusCode().value())).toFuture().get();
  }

  private long requestsTo(String path) {
    return server.recordedRequests().stream().filter(r -> r.path().equals(path)).count();
  }
}
