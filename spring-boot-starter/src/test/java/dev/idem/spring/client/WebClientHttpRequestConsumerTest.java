package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.testkit.IdempotentServer;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.netty.http.client.HttpClientRequest;

/**
 * WebClient's per-request hook on the native request ({@code httpRequest(...)}, what Spring's
 * reference documents for a per-request Reactor Netty response timeout) must still work on a
 * keyed call: the filter is documented as transparent, and with the starter every POST is keyed.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class WebClientHttpRequestConsumerTest {
  private IdempotentServer server;
  private IdempotentExecutor executor;

  @BeforeEach
  void start() {
    server = IdempotentServer.start();
    executor = IdempotentExecutor.builder().journal(new InMemoryJournal()).build();
  }

  @AfterEach
  void stop() {
    executor.close();
    server.close();
  }

  @Test
  void aKeyedPostWithAPerRequestResponseTimeoutIsSentAndTheTimeoutApplied() {
    WebClient client = WebClient.builder().filter(IdempotencyExchangeFilter.builder(executor).build()).build();
    AtomicInteger appliedToNetty = new AtomicInteger();
    String body = client.post().uri(server.url("/orders")).contentType(MediaType.APPLICATION_JSON)
        .attributes(IdempotentCall.named("create-order"))
        .httpRequest(r -> {
          Object nativeRequest = r.getNativeRequest();
          if (nativeRequest instanceof HttpClientRequest netty) {
            netty.responseTimeout(Duration.ofSeconds(5));
            appliedToNetty.incrementAndGet();
          }
        })
        .bodyValue("{\"qty\":1}").retrieve().bodyToMono(String.class).block(Duration.ofSeconds(20));
    assertTrue(body != null && body.contains("\"effect\":1"), String.valueOf(body));
    assertEquals(1, appliedToNetty.get(), "the per-request timeout never reached the Netty request");
  }

  /** Even a hook that tolerates the capture never reaches a request that goes on the wire. */
  @Test
  void theHookReachesTheRequestThatIsSent() {
    WebClient client = WebClient.builder().filter(IdempotencyExchangeFilter.builder(executor).build()).build();
    AtomicInteger appliedToNetty = new AtomicInteger();
    String body = client.post().uri(server.url("/orders")).contentType(MediaType.APPLICATION_JSON)
        .attributes(IdempotentCall.named("create-order"))
        .httpRequest(r -> {
          try {
            if (r.getNativeRequest() instanceof HttpClientRequest netty) {
              netty.responseTimeout(Duration.ofSeconds(5));
              appliedToNetty.incrementAndGet();
            }
          } catch (IllegalStateException notOnTheWire) {
            // the filter's in-memory capture
          }
        })
        .bodyValue("{\"qty\":1}").retrieve().bodyToMono(String.class).block(Duration.ofSeconds(20));
    assertTrue(body != null && body.contains("\"effect\":1"), String.valueOf(body));
    assertEquals(1, appliedToNetty.get(), "the per-request timeout never reached the Netty request");
  }
}
