package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.springframework.test.web.client.response.MockRestResponseCreators.withSuccess;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.http.UntaggedPolicy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.mock.http.client.reactive.MockClientHttpRequest;
import org.springframework.test.web.client.MockRestServiceServer;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.BodyInserter;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeStrategies;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * After a27c4ebe the WebClient filter checks an untagged credential form body against
 * {@code maxBodyBytes} before its pass-through ("as the JDK and OkHttp clients do"), so such a body
 * over the cap is refused by WebClient, OkHttp ({@code PreparedCall.of} before the pass-through) and
 * java.net.http (the bounded capture). RestClient's {@code IdempotencyInterceptor.intercept} still
 * passes it through before {@code support.checkBody} (line 94 vs 99), so the very same OAuth token
 * call goes out through RestClient and is refused through WebClient: the filter's own comment
 * promises "both clients refuse exactly the same bodies" (the interceptor's check). An app moving a
 * token call between the two Spring clients (or with the same {@code idem.client.max-body-bytes} for
 * both) gets a refusal on one and a request on the wire on the other. Pre-existing in RestClient, not
 * introduced by a27c4ebe, which made the other three agree.
 */
class RvRtoday14CredentialFormOverCapClientsDisagreeTest {
  private static final long CAP = 64;
  private final InMemoryJournal journal = new InMemoryJournal();
  private final IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();
  private final List<String> exchanged = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() {
    executor.close();
  }

  private static MultiValueMap<String, String> form() {
    MultiValueMap<String, String> m = new LinkedMultiValueMap<>();
    m.add("grant_type", "client_credentials");
    m.add("client_secret", "planted-client-secret-over-the-cap");
    m.add("scope", "orders:read orders:write payments:read payments:write");
    return m;
  }

  private WebClient webClient() {
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
            exchanged.add("WebClient: " + body);
            return ClientResponse.create(HttpStatus.OK).header("Content-Type", "text/plain").body("ok").build();
          });
        })
        .filter(IdempotencyExchangeFilter.builder(executor).untaggedPolicy(UntaggedPolicy.FRESH_KEY)
            .maxBodyBytes(CAP).journalPool(Runnable::run).build())
        .build();
  }

  @Test
  void baselineWebClientRefusesTheOverCapCredentialForm() {
    assertThrows(RuntimeException.class, () -> webClient().post().uri("http://auth.example/oauth/token")
        .contentType(MediaType.APPLICATION_FORM_URLENCODED).body(BodyInserters.fromFormData(form()))
        .retrieve().bodyToMono(String.class).block(Duration.ofSeconds(10)));
    assertEquals(List.of(), exchanged, "WebClient sends nothing");
  }

  @Test
  void restClientRefusesTheSameOverCapCredentialFormAsWebClient() {
    RestClient.Builder builder = RestClient.builder().requestInterceptor(IdempotencyInterceptor.builder(executor)
        .untaggedPolicy(UntaggedPolicy.FRESH_KEY).maxBodyBytes(CAP).build());
    MockRestServiceServer server = MockRestServiceServer.bindTo(builder).build();
    server.expect(request -> exchanged.add("RestClient: "
            + ((org.springframework.mock.http.client.MockClientHttpRequest) request).getBodyAsString()))
        .andRespond(withSuccess("{\"access_token\":\"t\"}", MediaType.APPLICATION_JSON));
    RestClient client = builder.build();

    Throwable refused = null;
    try {
      client.post().uri("http://auth.example/oauth/token").contentType(MediaType.APPLICATION_FORM_URLENCODED)
          .body(form()).retrieve().body(String.class);
    } catch (RuntimeException e) {
      refused = e;
    }
    assertEquals(List.of(), exchanged, "RestClient sent an untagged credential form over maxBodyBytes=" + CAP
        + " that WebClient (a27c4ebe), OkHttp and java.net.http refuse before anything is sent (refused: "
        + refused + ")");
  }
}
