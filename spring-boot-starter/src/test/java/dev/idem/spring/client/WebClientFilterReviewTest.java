package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/**
 * The WebClient filter, driven through a WebClient whose exchange function is a test double (no
 * network, no sleeps): what happens to a response that arrives after the caller cancelled, and
 * where the body cap ({@code maxBodyBytes}, {@code idem.client.max-body-bytes}) is enforced.
 *
 * <p>Found by a review on 2026-12-04.
 */
class WebClientFilterReviewTest {
  private final InMemoryJournal journal = new InMemoryJournal();
  private final IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();
  private final List<ClientRequest> exchanged = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() {
    executor.close();
  }

  /**
   * A caller that cancels while an attempt is on the wire (a {@code timeout(...)} on the Mono, a
   * client that went away): the filter's cancel hook releases "the last live response", but the
   * attempt's response has not arrived yet. When it does arrive, ReactiveAttempts keeps it as the
   * last response (a 2xx of unknown length is kept live, unread, for the caller) and nobody ever
   * releases its body: the pooled connection under it is never given back.
   *
   * <p>Expected: the late response's body is released (subscribed and drained, as
   * {@code releaseBody()} does). Before the fix: it is never subscribed.
   */
  @Test
  void aResponseThatArrivesAfterTheCallerCancelledIsReleased() throws Exception {
    CompletableFuture<ClientResponse> wire = new CompletableFuture<>();
    CompletableFuture<Void> sent = new CompletableFuture<>();
    WebClient client = WebClient.builder()
        .exchangeFunction(request -> {
          exchanged.add(request);
          sent.complete(null);
          return Mono.fromFuture(wire);
        })
        .filter(IdempotencyExchangeFilter.builder(executor).journalPool(Runnable::run).build())
        .build();
    IdempotentCall call = IdempotentCall.named("create-order");
    Disposable subscription = client.post().uri("http://api.example/orders").contentType(MediaType.APPLICATION_JSON)
        .attributes(call).bodyValue("{\"qty\":1}").retrieve().bodyToMono(String.class).subscribe(v -> { }, e -> { });
    sent.get(10, TimeUnit.SECONDS);

    subscription.dispose(); // the caller goes away while the attempt is on the wire

    // The response arrives afterwards: a 2xx of unknown length, which the filter keeps live and unread.
    AtomicBoolean bodySubscribed = new AtomicBoolean();
    Flux<DataBuffer> body = Flux.defer(() -> {
      bodySubscribed.set(true);
      return Flux.just(DefaultDataBufferFactory.sharedInstance.wrap("{\"id\":1}".getBytes(StandardCharsets.UTF_8)));
    });
    wire.complete(ClientResponse.create(HttpStatus.CREATED).header("Content-Type", "application/json").body(body)
        .build());

    // The executor records the cancelled attempt (ambiguous, PENDING) once the response is in.
    OperationRecord record = awaitAttemptRecorded(call);
    assertEquals(OperationState.PENDING, record.state(), record.toString());
    assertEquals(1, exchanged.size());
    assertTrue(bodySubscribed.get(),
        "the response that arrived after the cancel was never released: its connection is never given back");
  }

  /**
   * Cancelling is the caller's right, not an error: the filter used to cancel its own result future
   * before Reactor knew of the cancel, and Reactor then reported that future's
   * CancellationException as an error dropped (logged at ERROR, once per cancelled call).
   */
  @Test
  void aCancelIsNotReportedAsADroppedError() throws Exception {
    CompletableFuture<ClientResponse> wire = new CompletableFuture<>();
    CompletableFuture<Void> sent = new CompletableFuture<>();
    WebClient client = WebClient.builder()
        .exchangeFunction(request -> {
          exchanged.add(request);
          sent.complete(null);
          return Mono.fromFuture(wire);
        })
        .filter(IdempotencyExchangeFilter.builder(executor).journalPool(Runnable::run).build())
        .build();
    IdempotentCall call = IdempotentCall.named("create-order");
    List<Throwable> dropped = new CopyOnWriteArrayList<>();
    Disposable subscription = client.post().uri("http://api.example/orders").contentType(MediaType.APPLICATION_JSON)
        .attributes(call).bodyValue("{\"qty\":1}").retrieve().bodyToMono(String.class)
        // Reactor's per-subscription hook for dropped errors (Hooks.KEY_ON_ERROR_DROPPED, package-private),
        // seen by every operator and by the subscriber itself
        .subscribe(v -> { }, e -> { }, null,
            Context.of("reactor.onErrorDropped.local", (Consumer<Throwable>) dropped::add));
    sent.get(10, TimeUnit.SECONDS);

    subscription.dispose();
    wire.complete(ClientResponse.create(HttpStatus.CREATED).header("Content-Length", "0").build());

    OperationRecord record = awaitAttemptRecorded(call);
    assertEquals(OperationState.PENDING, record.state(), record.toString());
    assertEquals(List.of(), dropped, "a cancel was reported as an error dropped");
  }

  /**
   * {@code maxBodyBytes} is "the largest request body of a keyed call; a larger one is refused
   * before anything is sent", and the RestClient interceptor refuses {@code length > max}. The
   * WebClient filter joins the encoded body with a limit of {@code max + 1} bytes, which
   * {@code DataBufferUtils.join} fails only past {@code max + 1}: a body of exactly one byte over the
   * cap is journaled and sent.
   */
  @Test
  void aBodyOneByteOverTheCapIsRefusedBeforeAnythingIsSent() throws Exception {
    WebClient client = WebClient.builder()
        .exchangeFunction(request -> {
          exchanged.add(request);
          return Mono.just(ClientResponse.create(HttpStatus.CREATED).header("Content-Length", "0").build());
        })
        .filter(IdempotencyExchangeFilter.builder(executor).journalPool(Runnable::run).maxBodyBytes(10).build())
        .build();
    IdempotentCall call = IdempotentCall.named("create-order");
    CompletableFuture<Integer> status = client.post().uri("http://api.example/orders")
        .contentType(MediaType.TEXT_PLAIN).attributes(call).bodyValue("12345678901") // 11 bytes, cap 10
        .retrieve().toBodilessEntity().map(e -> e.getStatusCode().value()).toFuture();

    Throwable failure = null;
    try {
      status.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      failure = e.getCause();
    }
    assertEquals(List.of(), exchanged, "a body over maxBodyBytes went on the wire");
    assertInstanceOf(IdempotencyException.class, failure);
    for (OperationState state : OperationState.values()) {
      assertEquals(List.of(), journal.findByState(state, null, 10), "journaled a body over the cap");
    }
  }

  private OperationRecord awaitAttemptRecorded(IdempotentCall call) throws Exception {
    long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (System.nanoTime() < until) {
      if (call.key().isPresent()) {
        for (OperationRecord r : journal.findByState(OperationState.PENDING, null, 10)) {
          if (r.id().key().equals(call.key().get()) && !r.attempts().isEmpty()) {
            return r;
          }
        }
      }
      Thread.onSpinWait();
      Thread.yield();
    }
    throw new AssertionError("the cancelled attempt was never recorded");
  }
}
