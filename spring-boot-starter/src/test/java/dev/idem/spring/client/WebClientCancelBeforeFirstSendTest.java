package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
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
 * Regression test for a defect found by review, described as it was; fixed: ReactiveAttempts sends nothing once abandoned.
 *
 * <p>A keyed WebClient call whose subscriber goes away (a Reactor {@code timeout(...)}, a disposed
 * subscription) while the filter is still journaling it on the journal pool: the operation's
 * begin and first claim are written, its first attempt is not sent yet. The caller is gone, so
 * nothing should go out (the OkHttp call factory and the java.net.http adapter send nothing in the
 * same window, see AsyncReviewCancelBeforeFirstSendTest), and the journal must not hold an attempt
 * "that may have taken effect" for a request the caller cancelled before it was sent.
 *
 * <p>The filter only learns of the execution once {@code executeAsync} has returned, which is after
 * the driver sent the first attempt, and {@code ReactiveAttempts.sendAsync} never looks at its
 * {@code abandoned} flag before it exchanges: the request is sent after the cancel, and recorded
 * as an AMBIGUOUS attempt when it ends.
 *
 * <p>Deterministic: the journal pool is run by the test thread, and the cancel is made by the
 * journal's first claim, exactly where another thread's cancel lands when the journal is slow.
 */
class WebClientCancelBeforeFirstSendTest {
  private final InMemoryJournal memory = new InMemoryJournal();
  private final AtomicReference<Runnable> onClaim = new AtomicReference<>();
  private final ForwardingJournal journal = new ForwardingJournal(memory) {
    @Override
    public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
        throws IdempotencyException {
      Optional<Lease> lease = super.claim(id, owner, now, leaseFor);
      Runnable hook = onClaim.getAndSet(null);
      if (hook != null) {
        hook.run();
      }
      return lease;
    }
  };
  private final IdempotentExecutor executor = IdempotentExecutor.builder().journal(journal)
      .asyncExecutor(Runnable::run).build(); // journal work on the thread that completes it: no waiting
  private final List<ClientRequest> exchanged = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() {
    executor.close();
  }

  @Test
  void aCancelBeforeTheFirstAttemptSendsNothing() throws Exception {
    List<Runnable> journalPool = new CopyOnWriteArrayList<>();
    CompletableFuture<ClientResponse> wire = new CompletableFuture<>();
    WebClient client = WebClient.builder()
        .exchangeFunction(request -> {
          exchanged.add(request);
          return Mono.fromFuture(wire); // the server answers once the test says so
        })
        .filter(IdempotencyExchangeFilter.builder(executor).journalPool(journalPool::add).build())
        .build();
    IdempotentCall call = IdempotentCall.named("create-order");
    Disposable subscription = client.post().uri("http://api.example/orders").contentType(MediaType.APPLICATION_JSON)
        .attributes(call).bodyValue("{\"qty\":1}").retrieve().bodyToMono(String.class).subscribe(v -> { }, e -> { });
    assertEquals(1, journalPool.size(), "the begin is queued on the journal pool");

    onClaim.set(subscription::dispose); // the caller's timeout(...) fires while the claim is written
    journalPool.get(0).run();

    assertTrue(subscription.isDisposed());
    List<String> keysSent = exchanged.stream().map(r -> r.headers().getFirst("Idempotency-Key")).toList();
    // The server answers what it was sent (the effect is then committed), and the journal records it.
    wire.complete(ClientResponse.create(HttpStatus.CREATED).header("Content-Length", "2").body("{}").build());

    List<OperationRecord> records = new java.util.ArrayList<>();
    for (OperationState state : OperationState.values()) {
      records.addAll(memory.findByState(state, null, 10));
    }
    assertEquals(1, records.size(), "the operation is journaled");
    OperationRecord record = records.get(0);
    assertEquals(List.of(), keysSent,
        "key " + call.key().orElseThrow() + " was sent after the caller had cancelled, before any attempt went out;"
            + " journal: " + record.state() + " " + record.attempts());
    assertEquals(List.of(), record.attempts(), "no attempt was sent, so none may be recorded");
  }
}
