package dev.idem.spring.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotencyException;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.testkit.IdempotentServer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.scheduler.Schedulers;

/**
 * docs/spring.md: "The WebClient filter never blocks a Reactor thread on the journal: it encodes the
 * body with the client's own codecs, journals on Idem's pool, and lets the executor do every later
 * write there." The starter's pool ({@code idemJournalPool}) is bounded (a queue of 1024, then it
 * refuses). When it refuses, AsyncDriver records the attempt "on the completing thread after all",
 * which for WebClient is a Reactor Netty event loop: the attempt record and the final transition
 * (durable writes, an fsync each with the embedded journal) run there, stalling every connection
 * that loop serves.
 *
 * <p>Found by a review on 2026-12-05 (webclient).
 */
class WebClientFullPoolReviewTest {
  private final List<String> onEventLoop = new CopyOnWriteArrayList<>();
  private final ExecutorService beginPool = Executors.newSingleThreadExecutor();
  private IdempotentServer server;
  private IdempotentExecutor executor;

  @BeforeEach
  void start() {
    server = IdempotentServer.start();
    // The executor's pool is full (as the starter's bounded pool is under a burst): it refuses.
    executor = IdempotentExecutor.builder().journal(new WatchedJournal())
        .asyncExecutor(r -> {
          throw new RejectedExecutionException("pool full (queue of 1024 taken)");
        }).build();
  }

  @AfterEach
  void stop() throws Exception {
    executor.close();
    server.close();
    beginPool.shutdown();
    beginPool.awaitTermination(10, TimeUnit.SECONDS);
  }

  @Test
  void aFullPoolDoesNotMoveJournalWritesOntoTheEventLoop() throws Exception {
    WebClient client = WebClient.builder()
        .filter(IdempotencyExchangeFilter.builder(executor).journalPool(beginPool).build()).build();
    IdempotentCall call = IdempotentCall.named("create-order");

    String body = client.post().uri(server.url("/orders")).contentType(MediaType.APPLICATION_JSON).attributes(call)
        .bodyValue("{\"qty\":1}").retrieve().bodyToMono(String.class).toFuture().get(20, TimeUnit.SECONDS);

    assertTrue(body.contains("\"effect\":1"), body);
    assertEquals(1, server.effectCount(call.key().orElseThrow().value()));
    assertEquals(List.of(), onEventLoop, "durable journal writes ran on a Reactor Netty event loop");
  }

  private final class WatchedJournal extends ForwardingJournal {
    WatchedJournal() {
      super(new InMemoryJournal());
    }

    private void watch(String call) {
      if (Schedulers.isInNonBlockingThread()) {
        onEventLoop.add(call + " on " + Thread.currentThread().getName());
      }
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
  }
}
