package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.testkit.StreamingBodyServer;
import dev.idem.testkit.StreamingBodyServer.Reply;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 24, "The read timeout bounds the whole response": a 200 whose small declared body trickles
 * in (here 40 bytes, one every 100 ms: 4 s in all, each byte well within any read timeout) held
 * the call until the last byte, whatever the read timeout said; and with an {@code attemptTimeout}
 * shorter than the trickle, the answered attempt was taken for one without a response, sent again,
 * and ended UNCERTAIN although its 200 had arrived. Now Idem reads the body for the journal for one
 * read timeout in all, and before the attempt timeout; the attempt is answered by its status line.
 *
 * <p>These run in real time against a real socket (the trickle is the server's), each in about a
 * second; the bounds asserted are far from the 4 s the trickle takes.
 */
class TricklingBodyTest {
  private static final int LENGTH = 40;
  private static final Duration EVERY = Duration.ofMillis(100);
  /** Well under the 4 s the whole body takes, and well over the bounds configured below. */
  private static final long MUCH_LESS_THAN_THE_TRICKLE_MS = 2_500;

  private final InMemoryJournal journal = new InMemoryJournal();
  private StreamingBodyServer server;

  @BeforeEach
  void start() throws Exception {
    server = StreamingBodyServer.start(n -> Reply.of(200, LENGTH, true).trickled(EVERY));
  }

  @AfterEach
  void stop() {
    server.close();
  }

  /** An executor on real time: the attempt timeout's timer must really fire while the body trickles. */
  private IdemOkHttp idem(RetryPolicy policy) {
    return IdemOkHttp.builder(IdempotentExecutor.builder().journal(journal).retryPolicy(policy).build()).build();
  }

  @Test
  void theReadTimeoutBoundsTheWholeCapturedBodyNotEachRead() throws Exception {
    OkHttpClient client = idem(RetryPolicy.ofDefaults()).install(new OkHttpClient.Builder()
        .readTimeout(Duration.ofMillis(400))).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    long started = System.nanoTime();
    try (Response r = client.newCall(Fixture.order(server.url(), op)).execute()) {
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      assertEquals(200, r.code());
      assertTrue(tookMs < MUCH_LESS_THAN_THE_TRICKLE_MS, "execute() took " + tookMs + " ms");
      // The caller reads on from where Idem stopped: what arrived, then the rest as it comes.
      assertTrue(r.body().source().request(2), "the body goes on to the caller");
      assertEquals(StreamingBodyServer.expectedByte(0), r.body().source().getBuffer().getByte(0));
    }
    assertAnsweredOnce(op.key());
  }

  @Test
  void anAttemptTimeoutWhileTheBodyTricklesDoesNotMakeTheAttemptUnanswered() throws Exception {
    RetryPolicy policy = RetryPolicy.builder().attemptTimeout(Duration.ofMillis(700)).build();
    OkHttpClient client = idem(policy).install(new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(10))).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    long started = System.nanoTime();
    try (Response r = client.newCall(Fixture.order(server.url(), op)).execute()) {
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      assertEquals(200, r.code());
      assertTrue(tookMs < MUCH_LESS_THAN_THE_TRICKLE_MS, "execute() took " + tookMs + " ms");
    }
    assertAnsweredOnce(op.key());
  }

  @Test
  void theCallFactorysEnqueueIsBoundedTooAndNeverSendsTheAnsweredRequestAgain() throws Exception {
    RetryPolicy policy = RetryPolicy.builder().attemptTimeout(Duration.ofMillis(700)).build();
    IdemOkHttp idem = idem(policy);
    OkHttpClient client = idem.install(new OkHttpClient.Builder().readTimeout(Duration.ofSeconds(10))).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    CompletableFuture<Integer> status = new CompletableFuture<>();
    long started = System.nanoTime();
    idem.callFactory(client).newCall(Fixture.order(server.url(), op)).enqueue(new Callback() {
      @Override
      public void onFailure(Call call, java.io.IOException e) {
        status.completeExceptionally(e);
      }

      @Override
      public void onResponse(Call call, Response response) {
        try (response) {
          status.complete(response.code());
        }
      }
    });
    assertEquals(200, status.get(10, TimeUnit.SECONDS));
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    assertTrue(tookMs < MUCH_LESS_THAN_THE_TRICKLE_MS, "the callback came after " + tookMs + " ms");
    assertAnsweredOnce(op.key());
  }

  @Test
  void theResumeTransportReadsTheCapturedBodyForOneReadTimeoutInAll() throws Exception {
    IdemOkHttp idem = idem(RetryPolicy.ofDefaults());
    OkHttpClient client = new OkHttpClient.Builder().readTimeout(Duration.ofMillis(400)).build();
    IdempotencyKey key = IdempotencyKey.generate();
    RequestSnapshot journaled = RequestSnapshot.builder("POST", server.url())
        .body(Fixture.ORDER.getBytes(StandardCharsets.UTF_8), "application/json").build();
    long started = System.nanoTime();
    ResponseSnapshot answer = idem.transport(client).send(journaled, key);
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    assertEquals(200, answer.status());
    assertTrue(tookMs < MUCH_LESS_THAN_THE_TRICKLE_MS, "send took " + tookMs + " ms");
    assertEquals(Optional.of(Integer.toString(LENGTH)), answer.header(ResponseSnapshot.BODY_NOT_KEPT_HEADER));
    assertEquals(List.of(Optional.of(key.value())), server.keys());
  }

  /** SUCCEEDED on its first attempt, one request with the key, the body not kept. */
  private void assertAnsweredOnce(IdempotencyKey key) throws Exception {
    List<OperationRecord> all = new java.util.ArrayList<>();
    for (OperationState state : OperationState.values()) {
      OperationId after = null;
      for (List<OperationRecord> page; !(page = journal.findByState(state, after, 10)).isEmpty(); ) {
        all.addAll(page);
        after = page.get(page.size() - 1).id();
      }
    }
    OperationRecord rec = all.stream().filter(r -> r.id().key().equals(key)).findFirst()
        .orElseThrow(() -> new AssertionError("not journaled: " + key));
    assertEquals(OperationState.SUCCEEDED, rec.state(), rec.attempts().toString());
    assertEquals(1, rec.attempts().size(), "the 200 arrived: never sent again");
    assertEquals(Optional.of(200), rec.attempts().get(0).statusCode());
    assertEquals(Optional.of(Integer.toString(LENGTH)), rec.response().header(ResponseSnapshot.BODY_NOT_KEPT_HEADER),
        "the body that did not arrive in time is not kept");
    assertEquals(List.of(Optional.of(key.value())), server.keys(), "one request, with the key");
  }
}
