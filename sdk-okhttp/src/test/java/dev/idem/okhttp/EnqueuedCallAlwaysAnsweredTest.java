package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.OperationState;
import dev.idem.core.ProtocolStatuses;
import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Dispatcher;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A call of {@link IdemOkHttp#callFactory} that is enqueued always hears back, whatever is thrown
 * while its answer is made after the operation settled. Such a throwable used to be swallowed by
 * the CompletableFuture stage that makes the answer (it caught only IOException): neither
 * {@code onResponse} nor {@code onFailure} ran, and a Retrofit {@code enqueue} or {@code suspend}
 * call waited for good. OkHttp's own AsyncCall, on a throwable from its chain, cancels the call,
 * calls {@code onFailure} with {@code IOException("canceled due to ...")} carrying it as suppressed,
 * and rethrows it on the dispatcher thread; Idem's call does the same.
 *
 * <p>The throwable here is an {@code Error} from the app's key-missing predicate (a
 * {@code NoSuchMethodError}, as from a library built against another version), which the adapter
 * consults when it settles a FAILED operation's answer; the predicate throws only once armed, after
 * the operation was journaled, so the executor's own use of it is untouched.
 */
class EnqueuedCallAlwaysAnsweredTest {
  private final Fixture f = new Fixture();
  private final MockWebServer server = new MockWebServer();
  private final BlockingQueue<Throwable> uncaught = new LinkedBlockingQueue<>();
  private final ExecutorService dispatcherThreads = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "test-dispatcher");
    t.setDaemon(true);
    t.setUncaughtExceptionHandler((thread, e) -> uncaught.add(e));
    return t;
  });

  @AfterEach
  void stop() throws IOException {
    server.close();
    dispatcherThreads.shutdownNow();
  }

  @Test
  void aThrowableWhileTheAnswerIsMadeReachesOnFailureAndTheDispatcherThread() throws Exception {
    server.enqueue(new MockResponse.Builder().code(400).body("{\"error\":\"qty\"}").build());
    server.start();
    AtomicBoolean armed = new AtomicBoolean();
    NoSuchMethodError linkage = new NoSuchMethodError("'void io.metrics.Binder.bind()'");
    ProtocolStatuses protocol = ProtocolStatuses.builder().keyMissing(400, r -> {
      if (armed.get()) {
        throw linkage;
      }
      return false;
    }).build();
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().protocol(protocol).build()).build();
    OkHttpClient client = idem.install(new OkHttpClient.Builder().dispatcher(new Dispatcher(dispatcherThreads))).build();
    Call.Factory calls = idem.callFactory(client);
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request request = new Request.Builder().url(server.url("/orders"))
        .post(RequestBody.create(Fixture.ORDER, Fixture.JSON)).tag(IdempotentOperation.class, op).build();

    assertEquals("400", enqueue(calls.newCall(request)).get(10, TimeUnit.SECONDS));
    assertEquals(OperationState.FAILED, f.record(op).state());

    armed.set(true);
    Call again = calls.newCall(request);
    String answer;
    try {
      answer = enqueue(again).get(10, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      answer = "no callback at all within 10 s (neither onResponse nor onFailure)";
    }
    assertEquals("failure: java.io.IOException: canceled due to " + linkage + ", suppressed [" + linkage + "]",
        answer);
    assertTrue(again.isCanceled(), "canceled, as OkHttp cancels a call whose chain threw");
    assertEquals(linkage, uncaught.poll(10, TimeUnit.SECONDS), "rethrown on the dispatcher thread");
    assertEquals(1, server.getRequestCount(), "nothing sent again");
    assertEquals(OperationState.FAILED, f.record(op).state(), "the journal keeps the outcome");
  }

  /**
   * Enqueues a call; the future completes with the status, or "failure: ..." (and what the failure
   * carries as suppressed) from onFailure.
   */
  private CompletableFuture<String> enqueue(Call call) {
    CompletableFuture<String> result = new CompletableFuture<>();
    call.enqueue(new Callback() {
      @Override
      public void onResponse(Call c, Response response) {
        try (response) {
          result.complete(String.valueOf(response.code()));
        }
      }

      @Override
      public void onFailure(Call c, IOException e) {
        // The throwable itself travels with the failure, for the app's logs.
        result.complete("failure: " + e + (e.getSuppressed().length == 0 ? "" : ", suppressed "
            + Arrays.asList(e.getSuppressed())));
      }
    });
    return result;
  }
}
