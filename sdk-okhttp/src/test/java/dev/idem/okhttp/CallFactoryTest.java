package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationState;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Dispatcher;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link IdemOkHttp#callFactory}: enqueued calls wait out backoff on the executor's scheduler, not
 * on an OkHttp dispatcher thread (issue 14: "Call.enqueue holds an OkHttp dispatcher thread through
 * every backoff, and so holds a per-host slot"). Virtual time: no real sleeps.
 */
class CallFactoryTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();
  IdempotentServer server;
  final Dispatcher dispatcher = new Dispatcher();
  final CountDownLatch retryScheduled = new CountDownLatch(1);

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
    dispatcher.setMaxRequestsPerHost(1);
  }

  private IdemOkHttp idem() {
    return IdemOkHttp.builder(f.executorBuilder().scheduler(scheduledOn(f, retryScheduled)).build()).build();
  }

  /** The fixture's virtual scheduler, counting {@code latch} down once a wait has been scheduled. */
  static dev.idem.core.spi.Scheduler scheduledOn(Fixture f, CountDownLatch latch) {
    dev.idem.core.spi.Scheduler virtual = f.time.scheduler();
    return (task, delay) -> {
      java.util.concurrent.Future<?> scheduled = virtual.schedule(task, delay);
      latch.countDown();
      return scheduled;
    };
  }

  private OkHttpClient client(IdemOkHttp idem) {
    return new OkHttpClient.Builder().dispatcher(dispatcher).addInterceptor(idem.interceptor())
        .retryOnConnectionFailure(false).build();
  }

  /** Completes with "status body" or the failure. */
  static final class Result implements Callback {
    final CompletableFuture<String> body = new CompletableFuture<>();

    @Override
    public void onFailure(Call call, IOException e) {
      body.completeExceptionally(e);
    }

    @Override
    public void onResponse(Call call, Response response) throws IOException {
      try (response) {
        body.complete(response.code() + " " + response.body().string());
      }
    }

    String get() throws Exception {
      return body.get(10, TimeUnit.SECONDS);
    }
  }

  private Request otherCallToTheSameHost() {
    return new Request.Builder().url(server.url("/health").toString()).build();
  }

  @Test
  void anEnqueuedCallInBackoffHoldsNoDispatcherThread() throws Exception {
    IdemOkHttp idem = idem();
    OkHttpClient client = client(idem);
    Call.Factory calls = idem.callFactory(client);
    server.plan().next(Fault.status(503));
    IdempotentOperation op = IdempotentOperation.of("create-order");

    Result a = new Result();
    calls.newCall(order(server.url("/orders"), op)).enqueue(a);
    assertTrue(retryScheduled.await(10, TimeUnit.SECONDS), "first attempt answered 503, retry scheduled");

    // maxRequestsPerHost is 1: this call runs only because the operation in backoff holds no slot.
    Result b = new Result();
    client.newCall(otherCallToTheSameHost()).enqueue(b);
    assertTrue(b.get().startsWith("201"), "the other call completed during the backoff");
    assertFalse(a.body.isDone(), "the operation is still waiting out its backoff");

    f.time.advance(Duration.ofSeconds(1));
    String answer = a.get();
    assertTrue(answer.startsWith("201 ") && answer.contains(op.key().value()), answer);
    assertEquals(1, server.effectCount(op.key().value()));
    assertEquals(2, server.recordedRequests().stream()
        .filter(r -> r.keyHeader().equals(java.util.Optional.of(op.key().value()))).count(), "same key twice");
    assertEquals(OperationState.SUCCEEDED, f.record(op).state());
  }

  @Test
  void theBareInterceptorsEnqueueHoldsTheSlotThroughItsBackoff() throws Exception {
    // What the call factory fixes, kept as documentation: the interceptor sleeps on a dispatcher thread.
    CountDownLatch sleeping = new CountDownLatch(1);
    CountDownLatch wake = new CountDownLatch(1);
    IdempotentExecutor executor = f.executorBuilder().sleeper(d -> {
      sleeping.countDown();
      wake.await();
    }).build();
    OkHttpClient client = client(IdemOkHttp.builder(executor).build());
    server.plan().next(Fault.status(503));
    Result a = new Result();
    client.newCall(order(server.url("/orders"), IdempotentOperation.of("create-order"))).enqueue(a);
    assertTrue(sleeping.await(10, TimeUnit.SECONDS));

    Result b = new Result();
    client.newCall(otherCallToTheSameHost()).enqueue(b);
    assertEquals(1, dispatcher.runningCallsCount(), "the sleeping call holds the host's only slot");
    assertEquals(1, dispatcher.queuedCallsCount(), "the other call waits behind it");

    wake.countDown();
    assertTrue(a.get().startsWith("201"));
    assertTrue(b.get().startsWith("201"));
  }

  @Test
  void cancelingDuringBackoffLeavesThePendingOperationAndSendsNothingMore() throws Exception {
    IdemOkHttp idem = idem();
    Call.Factory calls = idem.callFactory(client(idem));
    server.plan().next(Fault.status(503));
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Call call = calls.newCall(order(server.url("/orders"), op));
    Result a = new Result();
    call.enqueue(a);
    assertTrue(retryScheduled.await(10, TimeUnit.SECONDS));

    call.cancel();
    assertTrue(call.isCanceled());
    Exception e = assertThrows(Exception.class, a::get);
    assertInstanceOf(InterruptedIOException.class, e.getCause(), e.toString());
    f.time.advance(Duration.ofMinutes(1));
    assertEquals(1, server.requestCount(), "nothing sent after the cancel");
    assertEquals(OperationState.PENDING, f.record(op).state());
  }

  @Test
  void callSemantics() throws Exception {
    IdemOkHttp idem = idem();
    OkHttpClient client = new OkHttpClient.Builder().dispatcher(dispatcher).retryOnConnectionFailure(false)
        .callTimeout(Duration.ofSeconds(30)).build();
    Call.Factory calls = idem.callFactory(client);
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Call call = calls.newCall(order(server.url("/orders"), op));

    assertFalse(call.isExecuted());
    assertEquals(TimeUnit.SECONDS.toNanos(30), call.timeout().timeoutNanos(), "the client's call timeout");
    Result a = new Result();
    call.enqueue(a);
    assertTrue(call.isExecuted());
    assertThrows(IllegalStateException.class, () -> call.enqueue(new Result()));
    assertThrows(IllegalStateException.class, call::execute);
    assertTrue(a.get().startsWith("201"));

    // A clone is a new call for the same tagged request: the same operation, answered from the journal.
    Call clone = call.clone();
    assertNotSame(call, clone);
    assertFalse(clone.isExecuted());
    try (Response r = clone.execute()) {
      assertEquals(201, r.code());
      assertTrue(IdempotencyResult.of(r).orElseThrow().fromJournal());
    }
    assertEquals(1, server.requestCount());
    assertEquals("tag", call.tag(String.class, () -> "tag"));
    assertEquals("tag", call.tag(String.class));
  }

  @Test
  void executeBehavesLikeTheInterceptorPathEvenOnAClientWithoutIt() throws Exception {
    IdemOkHttp idem = idem();
    OkHttpClient bare = new OkHttpClient.Builder().retryOnConnectionFailure(false).build();
    server.plan().next(Fault.commitThenDropResponse());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    try (Response r = idem.callFactory(bare).newCall(order(server.url("/orders"), op)).execute()) {
      assertEquals(201, r.code());
      assertTrue(IdempotencyResult.of(r).orElseThrow().replayed());
    }
    Fixture.assertKeyOnEveryRequest(server, op.key().value(), 2);
    assertEquals(1, server.effectCount(op.key().value()));
    AttemptRecord first = f.record(op).attempts().get(0);
    assertEquals(dev.idem.core.Classification.AMBIGUOUS, first.classification());
  }

  @Test
  void aReferenceOperationWithoutASecretFailsTheCallbackAndNothingIsJournaledOrSent() throws Exception {
    IdemOkHttp idem = idem();
    Result a = new Result();
    idem.callFactory(client(idem)).newCall(order(server.url("/orders"),
        IdempotentOperation.forReference("create-order", "cart-42"))).enqueue(a);
    Exception e = assertThrows(Exception.class, a::get);
    assertInstanceOf(dev.idem.core.IdempotencyException.class, e.getCause());
    assertInstanceOf(IllegalStateException.class, e.getCause().getCause());
    assertEquals(0, server.requestCount());
    assertTrue(f.allRecords().isEmpty());
  }

  @Test
  void aFailedOperationWithAResponseIsDeliveredAsThatResponse() throws Exception {
    IdemOkHttp idem = idem();
    server.plan().next(Fault.status(400));
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Result a = new Result();
    idem.callFactory(client(idem)).newCall(order(server.url("/orders"), op)).enqueue(a);
    assertTrue(a.get().startsWith("400"), "as OkHttp would have delivered it");
    assertEquals(OperationState.FAILED, f.record(op).state());
  }
}
