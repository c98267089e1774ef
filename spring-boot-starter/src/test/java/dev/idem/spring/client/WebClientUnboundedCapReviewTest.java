package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;

/**
 * {@code maxBodyBytes(Long.MAX_VALUE)} (the builder accepts any non-negative value; an app that
 * means "no cap" writes it) makes BodyCapture join with {@code (int) Math.min(Integer.MAX_VALUE - 8,
 * limit + 1)}: {@code limit + 1} overflows to {@code Long.MIN_VALUE}, which casts to 0, so every
 * non-empty body is refused as "over the 9223372036854775807 bytes". RestClient takes the same
 * setting and sends.
 *
 * <p>Found by a review on 2026-12-05 (webclient).
 */
class WebClientUnboundedCapReviewTest {
  private final IdempotentExecutor executor = IdempotentExecutor.builder().journal(new InMemoryJournal()).build();
  private final List<ClientRequest> exchanged = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() {
    executor.close();
  }

  @Test
  void theLargestCapStillSendsASmallBody() throws Exception {
    WebClient client = WebClient.builder()
        .exchangeFunction(request -> {
          exchanged.add(request);
          return Mono.just(ClientResponse.create(HttpStatus.CREATED).header("Content-Length", "0").build());
        })
        .filter(IdempotencyExchangeFilter.builder(executor).journalPool(Runnable::run).maxBodyBytes(Long.MAX_VALUE)
            .build())
        .build();
    IdempotentCall call = IdempotentCall.named("create-order");
    Object outcome;
    try {
      outcome = client.post().uri("http://api.example/orders").contentType(MediaType.APPLICATION_JSON)
          .attributes(call).bodyValue("{\"qty\":1}").retrieve().toBodilessEntity()
          .map(e -> e.getStatusCode().value()).toFuture().get(10, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      outcome = e.getCause();
    }
    assertEquals(201, outcome, "a 9-byte body under maxBodyBytes(Long.MAX_VALUE) was refused");
    assertEquals(1, exchanged.size());
  }
}
