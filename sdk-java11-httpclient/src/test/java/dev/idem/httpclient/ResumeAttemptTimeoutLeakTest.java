package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.Outcome;
import dev.idem.core.RetryPolicy;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The resume transport's asynchronous path (what {@code resumeAsync} and an
 * {@link dev.idem.core.outbox.OutboxDispatcher} use) has the leak {@link AsyncAttemptTimeoutLeakTest}
 * fixed for live calls: when the retry policy's attemptTimeout abandons an attempt, the executor
 * cancels the transport's future, but {@code ResumeTransport.sendAsync} returns
 * {@code sender.sendAsync(attempt).thenApply(...)}, a dependent future whose cancel never reaches
 * the JDK's exchange. The abandoned request keeps its connection open for as long as the server
 * likes (forever, with no request timeout), one more per timed-out attempt of every resumed
 * operation.
 *
 * <p>Virtual time drives the attempt timeout; the second attempt's timer is held until the
 * operation settled, so that only the first attempt times out.
 *
 * <p>Found by a review on 2026-12-04.
 */
class ResumeAttemptTimeoutLeakTest {
  private static final Duration ATTEMPT_TIMEOUT = Duration.ofSeconds(2);

  @Test
  void theTimedOutResumedAttemptsExchangeIsCancelled() throws Exception {
    try (EndlessBodyServer server = new EndlessBodyServer(0, false)) { // connection 0 never answers
      AtomicReference<CompletableFuture<Outcome>> resumed = new AtomicReference<>();
      AtomicInteger timeouts = new AtomicInteger();
      Fixture f = new Fixture(b -> b.retryPolicy(RetryPolicy.builder().maxAttempts(3).baseDelay(Duration.ofMillis(10))
          .attemptTimeout(ATTEMPT_TIMEOUT).build()), c -> { }, null, delay -> {
            // The first attempt's timer fires at once; later ones wait until the operation settled.
            if (delay.equals(ATTEMPT_TIMEOUT) && timeouts.getAndIncrement() > 0) {
              long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
              while (!resumed.get().isDone() && System.nanoTime() < end) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
              }
            }
          });
      HttpRequest request = HttpRequest.newBuilder(server.url("/orders")) // no request timeout
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"A-1\"}")).build();
      OperationId id = f.client.operation("create-order").enqueue(request);

      resumed.set(f.executor.resumeAsync(id, f.client.resumeTransport()));
      assertTrue(server.received.await(5, TimeUnit.SECONDS), "the first attempt reached the server");
      Outcome outcome = f.await(resumed.get());

      assertEquals(201, outcome.response().status());
      assertEquals(OperationState.SUCCEEDED, f.record(id).state());
      assertEquals(2, server.connections.get(), "one timed-out attempt, then one answered");
      assertTrue(server.clientClosed.await(5, TimeUnit.SECONDS),
          "the exchange of the resumed attempt that timed out is still open 5 s after the operation settled");
    }
  }
}
