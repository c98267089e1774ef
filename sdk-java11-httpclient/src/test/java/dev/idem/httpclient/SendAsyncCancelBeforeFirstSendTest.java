package dev.idem.httpclient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyException;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ForwardingJournal;
import dev.idem.core.spi.Lease;
import dev.idem.core.testing.VirtualTime;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Regression test for a defect found by review, described as it was; fixed: CallEngine hooks the cancel to the transport before the execution starts.
 *
 * <p>{@code sendAsync} cancelled by the app (another thread: a UI, a watchdog) while the operation is
 * being begun and claimed, before its first attempt is sent. The request body comes from a
 * publisher that delivers on another thread (a reactive source through
 * {@code BodyPublishers.fromPublisher}), so {@code sendAsync} has returned its future and the
 * capture, begin, claim and first send run later, on the publisher's thread.
 *
 * <p>The OkHttp call factory sends nothing in the same window and records no attempt
 * (AsyncReviewCancelBeforeFirstSendTest). Here the cancel hook on the caller's future is attached
 * only after {@code executeAsync} returned, which is after the driver handed the first attempt to
 * the HTTP client: the attempt is handed over after the cancel, then cancelled, and recorded as an
 * AMBIGUOUS attempt ("may have taken effect"), so that a later permanent refusal of this operation
 * ends UNCERTAIN rather than FAILED although the caller cancelled before anything was sent.
 *
 * <p>Deterministic: the publisher is driven by the test thread, and the cancel is made by the
 * journal's first claim.
 */
class SendAsyncCancelBeforeFirstSendTest {
  private static final byte[] BODY = "{\"sku\":\"A-1\"}".getBytes(StandardCharsets.UTF_8);

  @Test
  void aCancelBeforeTheFirstAttemptSendsNothingAndRecordsNoAttempt() throws Exception {
    AtomicReference<Runnable> onClaim = new AtomicReference<>();
    InMemoryJournal memory = new InMemoryJournal();
    ForwardingJournal hooked = new ForwardingJournal(memory) {
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
    VirtualTime time = new VirtualTime();
    ScriptedClient silent = ScriptedClient.silent();
    dev.idem.core.IdempotentExecutor executor = dev.idem.core.IdempotentExecutor.builder().journal(hooked)
        .clock(time.clock()).scheduler(time.scheduler()).sleeper(time.sleeper()).retryPolicy(Fixture.POLICY)
        .build();
    try {
      IdempotentHttpClient client = IdempotentHttpClient.builder(silent).idempotentExecutor(executor).build();
      OperationCall call = client.operation("create-order");
      OperationId id = call.operationId();

      LaterPublisher body = new LaterPublisher();
      HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:9/orders"))
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.fromPublisher(body, BODY.length)).build();
      CompletableFuture<IdempotentHttpResponse<String>> future = call.sendAsync(request, BodyHandlers.ofString());
      onClaim.set(() -> future.cancel(true)); // the app cancels while the first claim is written

      body.deliver(BODY); // the capture ends: begin, claim (the cancel) and first send run here

      assertTrue(future.isCancelled());
      OperationRecord record = executor.find(id).orElseThrow();
      assertEquals(0, silent.exchanges.get(), "the attempt was handed to the HTTP client after the caller had"
          + " cancelled; journal: " + record.state() + " " + record.attempts());
      assertEquals(OperationState.PENDING, record.state());
      assertEquals(List.of(), record.attempts(), "nothing was sent, so no attempt that may have taken effect may be"
          + " recorded: a later 422 would end UNCERTAIN instead of FAILED");
    } finally {
      executor.close();
    }
  }

  /** A publisher that subscribes at once and delivers its bytes when the test says so. */
  private static final class LaterPublisher implements Flow.Publisher<ByteBuffer> {
    private volatile Flow.Subscriber<? super ByteBuffer> subscriber;
    private final java.util.concurrent.atomic.AtomicLong demand = new java.util.concurrent.atomic.AtomicLong();

    @Override
    public void subscribe(Flow.Subscriber<? super ByteBuffer> s) {
      subscriber = s;
      s.onSubscribe(new Flow.Subscription() {
        @Override
        public void request(long n) {
          demand.addAndGet(n);
        }

        @Override
        public void cancel() {}
      });
    }

    void deliver(byte[] bytes) {
      assertTrue(demand.get() > 0, "the capture asked for the body");
      subscriber.onNext(ByteBuffer.wrap(bytes));
      subscriber.onComplete();
    }
  }
}
