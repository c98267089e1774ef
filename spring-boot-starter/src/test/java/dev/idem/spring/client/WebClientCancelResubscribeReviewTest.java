package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * A tagged call whose subscriber cancels while its attempt is on the wire ({@code timeout(...)}),
 * then subscribes the same Mono again ({@code retry()}), the usual Reactor pattern. The filter's
 * Javadoc: "an attempt already on the wire runs to its end and is recorded"; the executor's:
 * "within one executor, concurrent calls for the same OperationId are single-flight: the second
 * waits for the first one's outcome instead of sending". The cancelled execution leaves the flight
 * at once, so the re-subscription takes back this executor's own lease as if a dead process had
 * held it: it sends a second request with the same key while the first is still on the wire, the
 * journal records the first attempt as "the process that held this attempt stopped", and the
 * first attempt's real answer is never recorded.
 *
 * <p>Found by a review on 2026-12-05 (webclient).
 */
class WebClientCancelResubscribeReviewTest {
  private final InMemoryJournal journal = new InMemoryJournal();
  private final IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal).build();
  private final List<ClientRequest> exchanged = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() {
    executor.close();
  }

  @Test
  void aResubscriptionAfterACancelDoesNotSendBesideTheAttemptStillOnTheWire() throws Exception {
    CompletableFuture<ClientResponse> firstWire = new CompletableFuture<>();
    CompletableFuture<Void> sent = new CompletableFuture<>();
    WebClient client = WebClient.builder()
        .exchangeFunction(request -> {
          exchanged.add(request);
          if (exchanged.size() == 1) {
            sent.complete(null);
            return Mono.fromFuture(firstWire);
          }
          return Mono.just(ClientResponse.create(HttpStatus.CREATED).header("Content-Length", "2").body("{}").build());
        })
        .filter(IdempotencyExchangeFilter.builder(executor).journalPool(Runnable::run).build())
        .build();
    IdempotentCall call = IdempotentCall.named("create-order");
    Mono<String> create = client.post().uri("http://api.example/orders").contentType(MediaType.APPLICATION_JSON)
        .attributes(call).bodyValue("{\"qty\":1}").retrieve().bodyToMono(String.class);
    Disposable first = create.subscribe(v -> { }, e -> { });
    sent.get(10, TimeUnit.SECONDS);
    first.dispose(); // timeout(...) fired while the attempt is on the wire

    CompletableFuture<String> second = create.toFuture(); // retry(): the same Mono again
    int sentBesideTheFirst = exchanged.size() - 1;
    firstWire.complete(ClientResponse.create(HttpStatus.CREATED).header("Content-Length", "2").body("{}").build());
    second.get(10, TimeUnit.SECONDS);

    OperationRecord record = journal.findByState(OperationState.SUCCEEDED, null, 10).get(0);
    assertEquals(0, sentBesideTheFirst, "the re-subscription sent key " + call.key().orElseThrow()
        + " again while the first attempt with it was still on the wire: " + record.attempts());
    for (AttemptRecord a : record.attempts()) {
      assertFalse(String.valueOf(a.reason()).contains("process that held this attempt stopped"),
          "the journal says the process stopped, of an attempt this live process was still running: " + a);
    }
  }
}
