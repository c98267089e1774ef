package dev.idem.spring.boot;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotentExecutor;
import dev.idem.spring.client.IdempotentCall;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
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
 * Boot's WebClient connector follows redirects by default too, and the starter does not change
 * that yet: docs/spring.md tells an app that calls servers which may redirect a POST to set
 * {@code dont-follow}. With it, a keyed POST's 307 reaches Idem, which answers it to the caller:
 * one request, one attempt, nothing at the new location. (Without it the POST was re-sent to the
 * new location, unjournaled.) Boot 3.5 names the setting {@code spring.http.reactiveclient.redirects};
 * Boot 4.0 has one for every client, {@code spring.http.clients.redirects}.
 */
@SpringBootTest(classes = TestApp.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "spring.http.reactiveclient.redirects=dont-follow",
    "spring.http.clients.redirects=dont-follow",
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
  void aKeyedPostsRedirectReachesIdemWithTheDocumentedSetting() throws Exception {
    server.plan().next(Fault.redirect(307, "/moved"));
    IdempotentCall call = IdempotentCall.named("create-order");
    int status = webClients.build().post().uri(server.url("/orders")).contentType(MediaType.APPLICATION_JSON)
        .attributes(call).bodyValue(Map.of("qty", 6)).exchangeToMono(res -> res.releaseBody()
            .thenReturn(res.statusCode().value())).toFuture().get();
    assertEquals(307, status, "the caller gets the redirect");
    StarterTest.assertRedirectLeftToIdem(server, executor, call);
  }
}
