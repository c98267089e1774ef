package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * docs/client.md ("Responses stream") and {@code CaptureRule}: "A body that breaks off or runs out of
 * time is not kept, and never turns the answered attempt into an unanswered one"; "a 2xx is
 * SUCCEEDED and never re-sent". The WebClient filter reads a small 2xx body for the journal and,
 * when that read breaks off, fails the whole attempt as if no response had come.
 *
 * <p>Found by a review on 2026-12-05 (webclient).
 */
class WebClientAnsweredAttemptReviewTest {
  private final InMemoryJournal journal = new InMemoryJournal();
  private final List<ClientRequest> exchanged = new CopyOnWriteArrayList<>();
  private IdempotentExecutor executor;

  @AfterEach
  void stop() {
    if (executor != null) {
      executor.close();
    }
  }

  /**
   * The server answers 201 with {@code Content-Length: 8}, and the connection breaks after the first
   * 3 bytes of the body. The status and headers arrived: the attempt is answered, SUCCEEDED, never
   * re-sent (the OkHttp adapter's ResponseCapture keeps exactly this). The filter instead maps the
   * body's read error to an IOException for the whole attempt: the executor records an ambiguous,
   * unanswered attempt and sends again (or, with no attempt left, ends UNCERTAIN although the
   * server said 201).
   */
  @Test
  void a2xxWhoseSmallBodyBreaksOffIsAnsweredNotResent() throws Exception {
    executor = IdempotentExecutor.builder().journal(journal)
        .retryPolicy(RetryPolicy.builder().maxAttempts(1).build()).build();
    WebClient client = WebClient.builder()
        .exchangeFunction(request -> {
          exchanged.add(request);
          Flux<DataBuffer> body = Flux.concat(
              Flux.just(DefaultDataBufferFactory.sharedInstance.wrap("{\"i".getBytes(StandardCharsets.UTF_8))),
              Flux.error(new IOException("Connection reset by peer")));
          return Mono.just(ClientResponse.create(HttpStatus.CREATED).header("Content-Type", "application/json")
              .header("Content-Length", "8").body(body).build());
        })
        .filter(IdempotencyExchangeFilter.builder(executor).journalPool(Runnable::run).build())
        .build();
    IdempotentCall call = IdempotentCall.named("create-order");

    CompletableFuture<Integer> status = client.post().uri("http://api.example/orders")
        .contentType(MediaType.APPLICATION_JSON).attributes(call).bodyValue("{\"qty\":1}")
        .exchangeToMono(r -> r.releaseBody().thenReturn(r.statusCode().value()))
        .onErrorResume(e -> Mono.just(-1))
        .toFuture();
    status.get(10, TimeUnit.SECONDS);

    OperationRecord record = recordOf(call);
    List<String> seen = new ArrayList<>();
    exchanged.forEach(r -> seen.add(r.method() + " " + r.url()));
    assertEquals(OperationState.SUCCEEDED, record.state(),
        "the server answered 201, but the journal keeps " + record.state() + ": a body that broke off turned the"
            + " answered attempt into an unanswered one (" + record + ")");
    assertEquals(201, status.get(), "the caller was not handed the server's 201");
    assertEquals(1, seen.size(), "an answered 2xx was sent again: " + seen);
  }

  private OperationRecord recordOf(IdempotentCall call) throws Exception {
    for (OperationState state : OperationState.values()) {
      for (OperationRecord r : journal.findByState(state, null, 100)) {
        if (r.id().key().equals(call.key().orElseThrow())) {
          return r;
        }
      }
    }
    throw new AssertionError("nothing journaled for " + call);
  }
}
