package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationState;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A WebClient request whose app-set {@code Content-Length} (100, or 5) differs from the 18 bytes
 * its streamed body encodes to ({@code .contentLength(n).body(flux, String.class)}: a proxy that
 * forwards its caller's length, a file whose size was read first). The encoders keep the app's
 * length for a streamed body, and Reactor Netty alone sends it as declared: the server waits for
 * bytes that never come (100), or reads the first 5 as the whole body (5). Idem captured the 18
 * bytes, journaled them and sent them with a length of 18: a request the app's client never
 * delivered whole took effect as complete. Expected: refused with an IOException, as the JDK and
 * OkHttp clients refuse such a body, before anything is journaled or sent.
 *
 * <p>Found by a review on 2026-12-05 (declared length).
 */
class WebClientDeclaredLengthReviewTest {
  private final InMemoryJournal journal = new InMemoryJournal();
  private final IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();
  private final List<ClientRequest> exchanged = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() {
    executor.close();
  }

  @ParameterizedTest
  @ValueSource(longs = {100, 5})
  void aStreamedBodyOtherThanItsDeclaredLengthIsRefusedBeforeTheJournal(long declared) throws Exception {
    WebClient client = WebClient.builder()
        .exchangeFunction(request -> {
          exchanged.add(request);
          return Mono.just(ClientResponse.create(HttpStatus.CREATED).header("Content-Length", "0").build());
        })
        .filter(IdempotencyExchangeFilter.builder(executor).journalPool(Runnable::run).build())
        .build();
    Object outcome;
    try {
      outcome = client.post().uri("http://api.example/orders").contentType(MediaType.APPLICATION_JSON)
          .contentLength(declared).attributes(IdempotentCall.named("create-order"))
          .body(Flux.just("{\"amount\": ", "100, \"n"), String.class).retrieve().toBodilessEntity()
          .map(e -> e.getStatusCode().value()).toFuture().get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      outcome = e.getCause();
    }
    int journaled = 0;
    for (OperationState s : OperationState.values()) {
      journaled += journal.findByState(s, null, 100).size();
    }
    assertTrue(outcome instanceof IOException, "a body that declared " + declared + " bytes and encoded to 18 was"
        + " answered " + outcome + "; sent: " + exchanged.size() + ", journaled: " + journaled);
    assertTrue(((IOException) outcome).getMessage().contains("declared " + declared), ((IOException) outcome).getMessage());
    assertEquals(0, exchanged.size(), "nothing sent");
    assertEquals(0, journaled, "nothing journaled");
  }
}
