package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.http.UntaggedPolicy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.mock.http.client.reactive.MockClientHttpRequest;
import org.springframework.web.reactive.function.BodyInserter;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeStrategies;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Commit 1e0eab22: IdempotencyExchangeFilter's new pass-through branch for an untagged form body
 * holding a credential ({@code next.exchange(unjournaled(request, captured))}) runs before the
 * filter's check of a Content-Length the app set against the bytes the encoders wrote, and
 * {@code unjournaled} then overwrites the declared length with the captured one. So a streamed form
 * body cut short (the app declared the whole length, the stream ended 15 bytes early: the tail of
 * {@code password=} is missing) goes out as a complete, shorter request: the token endpoint gets a
 * wrong password (a failed login counted against the account, a lockout) or a truncated scope. The
 * filter's Javadoc promises that such a body "fails with a RequestNotSentException before anything is
 * journaled or sent", as the keyed path (a form without a credential, the second test) still does,
 * and as the JDK and OkHttp clients refuse such a request.
 */
class RvRtoday11WebClientCredentialPassThroughIgnoresDeclaredLengthTest {
  private final InMemoryJournal journal = new InMemoryJournal();
  private final IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();
  private final List<String> exchanged = new CopyOnWriteArrayList<>();

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
            exchanged.add("Content-Length: " + request.headers().getContentLength() + ", body: " + body);
            return ClientResponse.create(HttpStatus.OK).header("Content-Type", "text/plain").body("ok").build();
          });
        })
        .filter(IdempotencyExchangeFilter.builder(executor).untaggedPolicy(UntaggedPolicy.FRESH_KEY)
            .journalPool(Runnable::run).build())
        .build();
  }

  private static Flux<DataBuffer> stream(String s) {
    return Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(s.getBytes(StandardCharsets.UTF_8)));
  }

  private String post(String path, String sent, long declared) {
    return client().post().uri("http://auth.example" + path)
        .contentType(MediaType.APPLICATION_FORM_URLENCODED)
        .contentLength(declared)
        .body(BodyInserters.fromDataBuffers(stream(sent)))
        .retrieve().bodyToMono(String.class).block(Duration.ofSeconds(10));
  }

  @Test
  void anUntaggedCredentialFormCutShortIsNotSentAsAWholeRequest() {
    String whole = "grant_type=password&username=alice&password=hunter2-and-more";
    String cut = whole.substring(0, whole.length() - 15); // the tail of password= never came
    RuntimeException e = assertThrows(RuntimeException.class, () -> post("/oauth/token", cut, whole.length()),
        () -> "a form body declared " + whole.length() + " bytes (Content-Length) and streamed " + cut.length()
            + " went out as a complete request: " + exchanged);
    assertTrue(((Throwable) e) instanceof dev.idem.core.spi.RequestNotSentException
        || e.getCause() instanceof dev.idem.core.spi.RequestNotSentException, "as for a keyed call: " + e);
    assertEquals(List.of(), exchanged, "nothing sent");
  }

  @Test
  void baselineTheKeyedPathRefusesTheSameMismatch() {
    String whole = "grant_type=password&username=alice&scope=all&more=stuff-more-1";
    String cut = whole.substring(0, 45);
    assertThrows(RuntimeException.class, () -> post("/orders", cut, whole.length()));
    assertEquals(List.of(), exchanged, "the keyed path sends nothing");
  }
}
