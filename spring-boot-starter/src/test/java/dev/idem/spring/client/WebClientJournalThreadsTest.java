package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.BeginResult;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.Transition;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The reactive path never runs journal work on a Reactor (non-blocking) thread: begin runs on the
 * filter's journal pool, every later write on the executor's pool, through a retry after a 503 and
 * one after a lost response. A journal that records where each of its calls ran proves it.
 */
class WebClientJournalThreadsTest {
  private final List<String> onEventLoop = new CopyOnWriteArrayList<>();
  private final List<String> calls = new CopyOnWriteArrayList<>();
  private IdempotentServer server;
  private IdempotentExecutor executor;

  @BeforeEach
  void start() {
    server = IdempotentServer.start();
    executor = IdempotentExecutor.builder().journal(new WatchedJournal())
        .retryPolicy(RetryPolicy.builder().maxAttempts(4).build()).random(() -> 0.0).build();
  }

  @AfterEach
  void stop() {
    executor.close();
    server.close();
  }

  @Test
  void noJournalCallRunsOnAReactorThread() throws Exception {
    WebClient client = WebClient.builder().filter(IdempotencyExchangeFilter.builder(executor).build()).build();
    server.plan().next(Fault.status(503)).next(Fault.commitThenDropResponse());
    IdempotentCall call = IdempotentCall.named("create-order");
    // Subscribed from a Reactor parallel thread, as a call chained in a reactive pipeline is.
    String body = Mono.delay(Duration.ofMillis(1)).flatMap(tick -> client.post().uri(server.url("/orders"))
        .contentType(MediaType.APPLICATION_JSON).attributes(call).bodyValue("{\"qty\":1}").retrieve()
        .bodyToMono(String.class)).toFuture().get(20, TimeUnit.SECONDS);
    assertTrue(body.contains("\"effect\":1"), body);
    assertEquals(3, server.requestCount());
    assertEquals(1, server.effectCount(call.key().orElseThrow().value()));
    assertTrue(calls.contains("begin") && calls.contains("transition"), calls.toString());
    assertEquals(List.of(), onEventLoop, "journal calls made on a non-blocking (Reactor) thread");
  }

  /** Records every call, and each one made on a thread Reactor marks non-blocking. */
  private final class WatchedJournal extends ForwardingJournal {
    WatchedJournal() {
      super(new InMemoryJournal());
    }

    private void watch(String call) {
      calls.add(call);
      if (Schedulers.isInNonBlockingThread()) {
        onEventLoop.add(call + " on " + Thread.currentThread().getName());
      }
    }

    @Override
    public BeginResult begin(NewOperation operation) throws IdempotencyException {
      watch("begin");
      return super.begin(operation);
    }

    @Override
    public Optional<OperationRecord> find(OperationId id) throws IdempotencyException {
      watch("find");
      return super.find(id);
    }

    @Override
    public Optional<Lease> claim(OperationId id, String owner, Instant now, Duration leaseFor)
        throws IdempotencyException {
      watch("claim");
      return super.claim(id, owner, now, leaseFor);
    }

    @Override
    public void recordAttempt(OperationId id, Lease lease, AttemptRecord attempt) throws IdempotencyException {
      watch("recordAttempt");
      super.recordAttempt(id, lease, attempt);
    }

    @Override
    public OperationRecord transition(OperationId id, Lease lease, Transition transition) throws IdempotencyException {
      watch("transition");
      return super.transition(id, lease, transition);
    }

    @Override
    public OperationRecord abandon(OperationId id, Transition transition) throws IdempotencyException {
      watch("abandon");
      return super.abandon(id, transition);
    }
  }
}
