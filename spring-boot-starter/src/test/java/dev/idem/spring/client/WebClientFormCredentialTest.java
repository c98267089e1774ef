package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.http.UntaggedPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.mock.http.client.reactive.MockClientHttpRequest;
import org.springframework.web.reactive.function.BodyInserter;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeStrategies;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * Through WebClient, an untagged POST the fresh-key policy keys was keyed before its body was
 * read, so a credential in its form body ({@code client_secret=}, an app's own OAuth token call)
 * went to the journal in clear. Such a call now goes out once, unjournaled and without a key, as
 * RestClient sends it; a form without a credential is keyed and journaled as before.
 */
class WebClientFormCredentialTest {
  private static final String SECRET = "planted-client-secret-webclient";
  private final InMemoryJournal journal = new InMemoryJournal();
  private final IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();
  /** Each request the exchange function got: its key header (null if none) and its body. */
  private final List<List<String>> exchanged = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() {
    executor.close();
  }

  private WebClient client() {
    return WebClient.builder()
        .exchangeFunction(request -> {
          MockClientHttpRequest written = new MockClientHttpRequest(request.method(), request.url());
          return request.body().insert(written, new BodyInserter.Context() {
            @Override
            public List<HttpMessageWriter<?>> messageWriters() {
              return ExchangeStrategies.withDefaults().messageWriters();
            }

            @Override
            public Optional<ServerHttpRequest> serverRequest() {
              return Optional.empty();
            }

            @Override
            public Map<String, Object> hints() {
              return Map.of();
            }
          }).then(Mono.defer(written::getBodyAsString)).map(body -> {
            exchanged.add(java.util.Arrays.asList(request.headers().getFirst("Idempotency-Key"), body));
            return ClientResponse.create(HttpStatus.OK).header("Content-Type", "text/plain").body("ok").build();
          });
        })
        .filter(IdempotencyExchangeFilter.builder(executor).untaggedPolicy(UntaggedPolicy.FRESH_KEY)
            .journalPool(Runnable::run).build())
        .build();
  }

  private List<OperationRecord> all() throws Exception {
    List<OperationRecord> all = new ArrayList<>();
    for (OperationState s : OperationState.values()) {
      all.addAll(journal.findByState(s, null, 100));
    }
    return all;
  }

  @Test
  void anUntaggedTokenCallGoesOutOnceUnjournaled() throws Exception {
    String answer = client().post().uri("http://auth.example/oauth/token")
        .body(BodyInserters.fromFormData("grant_type", "client_credentials").with("client_secret", SECRET))
        .retrieve().bodyToMono(String.class).block(Duration.ofSeconds(10));

    assertEquals(List.of(), all(), "nothing journaled, so no byte of the secret");
    assertEquals("ok", answer);
    assertEquals(1, exchanged.size(), "sent once");
    assertNull(exchanged.get(0).get(0), "sent as a pass-through call: no key");
    assertEquals("grant_type=client_credentials&client_secret=" + SECRET, exchanged.get(0).get(1),
        "the body the app wrote, whole");
  }

  @Test
  void anUntaggedFormWithoutACredentialIsKeyedAndJournaled() throws Exception {
    client().post().uri("http://api.example/orders")
        .body(BodyInserters.fromFormData("item", "book")).retrieve().toBodilessEntity().block(Duration.ofSeconds(10));

    List<OperationRecord> records = all();
    assertEquals(1, records.size());
    assertEquals("untagged-post", records.get(0).id().operation());
    assertEquals(1, exchanged.size());
    assertEquals(records.get(0).id().key().value(), exchanged.get(0).get(0), "keyed with the journaled key");
    assertEquals("item=book", exchanged.get(0).get(1));
  }
}
