package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationState;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import dev.idem.testkit.Reply;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.ConnectionPool;
import okhttp3.Dispatcher;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An app's {@code enqueue} callback that throws, on a call of {@link IdemOkHttp#callFactory}. Plain
 * OkHttp 5 cancels a call whose {@code onResponse} throws a RuntimeException (which releases its
 * connection) and rethrows it on the dispatcher thread, where the thread's uncaught exception
 * handler gets it. Idem's calls used to rethrow it without closing the response: its body, still
 * open past the journal's captured prefix, held the connection for good (OkHttp's "A connection to
 * ... was leaked"). The journal keeps the server's outcome whatever the callback does.
 *
 * <p>The bodies here are larger than the journal's capture, so the connection stays in use until
 * somebody closes the response. Every thread the callbacks can run on records its uncaught
 * exceptions, as an app's thread factory might log them.
 */
class ThrowingCallbackTest {
  /** More than {@code ResponseSnapshot.MAX_CAPTURED_BODY}: the rest stays on the connection. */
  private static final byte[] LARGE = new byte[200 * 1024];

  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension(() -> IdempotentServer.builder()
      .handler(request -> Reply.of(201, "application/octet-stream", LARGE)).start());

  final Fixture f = new Fixture();
  final BlockingQueue<Uncaught> uncaught = new LinkedBlockingQueue<>();
  final ThreadPoolExecutor dispatcherThreads = pool("test-dispatcher-");
  final ThreadPoolExecutor idemThreads = pool("test-idem-async-");
  IdempotentServer server;

  @BeforeEach
  void setUp() {
    server = serverExtension.server();
  }

  @AfterEach
  void tearDown() {
    dispatcherThreads.shutdownNow();
    idemThreads.shutdownNow();
  }

  /** Like OkHttp's default dispatcher pool, on threads that record what they do not catch. */
  private ThreadPoolExecutor pool(String name) {
    AtomicInteger n = new AtomicInteger();
    ThreadFactory threads = r -> {
      Thread t = new Thread(r, name + n.incrementAndGet());
      t.setDaemon(true);
      t.setUncaughtExceptionHandler((thread, e) -> uncaught.add(new Uncaught(thread, e)));
      return t;
    };
    return new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(), threads);
  }

  private IdemOkHttp idem() {
    return IdemOkHttp.builder(f.executorBuilder().asyncExecutor(idemThreads).build()).build();
  }

  private OkHttpClient.Builder clientBuilder(IdemOkHttp idem) {
    return new OkHttpClient.Builder().dispatcher(new Dispatcher(dispatcherThreads))
        .addInterceptor(idem.interceptor()).retryOnConnectionFailure(false);
  }

  /** Connections a call holds: a leaked response body keeps one here for good. */
  private static int inUse(ConnectionPool pool) {
    return pool.connectionCount() - pool.idleConnectionCount();
  }

  /** An exception that reached a thread's uncaught exception handler. */
  record Uncaught(Thread thread, Throwable exception) {}

  private Uncaught awaitUncaught() throws InterruptedException {
    Uncaught e = uncaught.poll(10, TimeUnit.SECONDS);
    assertNotNull(e, "the callback's exception reached no uncaught exception handler");
    return e;
  }

  private void assertOneKeyedRequestAndOneEffect(IdempotentOperation op) {
    String key = op.key().value();
    assertEquals(1, server.effectCount(key), "effects");
    assertEquals(1, server.recordedRequests().stream().filter(r -> r.keyHeader().equals(Optional.of(key))).count(),
        "requests with the key");
  }

  /** A callback whose {@code onResponse} fails as an app's bug would, without closing the response. */
  static final class Throwing implements Callback {
    final IllegalStateException bug = new IllegalStateException("bug in the app's onResponse");
    volatile Response received;

    @Override
    public void onFailure(Call call, IOException e) {
      throw new AssertionError("unexpected failure", e);
    }

    @Override
    public void onResponse(Call call, Response response) {
      received = response;
      throw bug;
    }
  }

  @Test
  void onResponseThrowingReleasesTheConnectionAndTheExceptionReachesTheDispatcherThreadsHandler() throws Exception {
    IdemOkHttp idem = idem();
    OkHttpClient client = clientBuilder(idem).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Throwing callback = new Throwing();

    idem.callFactory(client).newCall(order(server.url("/orders"), op)).enqueue(callback);

    // Rethrown on the dispatcher's thread, as OkHttp does: the thread's handler sees it.
    Uncaught seen = awaitUncaught();
    assertSame(callback.bug, seen.exception());
    assertTrue(seen.thread().getName().startsWith("test-dispatcher-"), seen.thread().getName());
    assertEquals(201, callback.received.code());
    assertEquals(0, inUse(client.connectionPool()), "the response was closed: no connection held");
    assertEquals(OperationState.SUCCEEDED, f.record(op).state());
    assertEquals(201, f.record(op).response().status());
    assertOneKeyedRequestAndOneEffect(op);
  }

  @Test
  void onResponseThrowingAfterTheDispatcherShutDownIsNotSwallowedOnIdemsThread() throws Exception {
    IdemOkHttp idem = idem();
    // The app shuts its client down while the attempt is answered: the callback then runs on the
    // thread that settled the operation, one of Idem's, inside a CompletableFuture stage that
    // would swallow what it throws.
    OkHttpClient client = clientBuilder(idem).addNetworkInterceptor(chain -> {
      Response response = chain.proceed(chain.request());
      dispatcherThreads.shutdown();
      return response;
    }).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Throwing callback = new Throwing();

    // The thread that settles the operation runs the callback: one of Idem's, or this one when the
    // operation settled before enqueue returned (a descheduled test thread on a loaded machine,
    // seen in CI). Its handler records too, as an app's would log.
    Thread self = Thread.currentThread();
    Thread.UncaughtExceptionHandler before = self.getUncaughtExceptionHandler();
    self.setUncaughtExceptionHandler((thread, e) -> uncaught.add(new Uncaught(thread, e)));
    try {
      idem.callFactory(client).newCall(order(server.url("/orders"), op)).enqueue(callback);
    } finally {
      self.setUncaughtExceptionHandler(before);
    }

    Uncaught seen = awaitUncaught();
    assertSame(callback.bug, seen.exception());
    // Handed to the handler of the thread that ran the callback, not swallowed in the future's stage.
    assertTrue(seen.thread().getName().startsWith("test-idem-async-") || seen.thread() == self,
        seen.thread().getName());
    assertEquals(201, callback.received.code());
    assertEquals(0, inUse(client.connectionPool()), "the response was closed: no connection held");
    assertEquals(OperationState.SUCCEEDED, f.record(op).state());
    assertOneKeyedRequestAndOneEffect(op);
  }

  @Test
  void onFailureThrowingReachesTheDispatcherThreadsHandlerAndHoldsNothing() throws Exception {
    CountDownLatch retryScheduled = new CountDownLatch(1);
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().asyncExecutor(idemThreads)
        .scheduler(CallFactoryTest.scheduledOn(f, retryScheduled)).build()).build();
    OkHttpClient client = clientBuilder(idem).build();
    server.plan().next(Fault.status(503));
    IdempotentOperation op = IdempotentOperation.of("create-order");
    IllegalStateException bug = new IllegalStateException("bug in the app's onFailure");
    Call call = idem.callFactory(client).newCall(order(server.url("/orders"), op));
    call.enqueue(new Callback() {
      @Override
      public void onFailure(Call c, IOException e) {
        bug.addSuppressed(e);
        throw bug;
      }

      @Override
      public void onResponse(Call c, Response response) {
        throw new AssertionError("unexpected response " + response);
      }
    });
    assertTrue(retryScheduled.await(10, TimeUnit.SECONDS), "first attempt answered 503, retry scheduled");

    call.cancel();

    assertSame(bug, awaitUncaught().exception());
    assertInstanceOf(InterruptedIOException.class, bug.getSuppressed()[0]);
    assertEquals(0, inUse(client.connectionPool()), "the 503's response was closed by Idem");
    assertEquals(OperationState.PENDING, f.record(op).state(), "canceled: PENDING with its key");
    assertEquals(1, server.recordedRequests().stream()
        .filter(r -> r.keyHeader().equals(Optional.of(op.key().value()))).count(), "requests with the key");
    assertEquals(0, server.effectCount(op.key().value()), "the 503 had no effect");
  }
}
