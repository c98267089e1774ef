package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
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
 * An enqueued {@code IdemCall} calls its callback TWICE when the client's dispatcher runs tasks on
 * the submitting thread (an {@code ExecutorService} that runs the task inline, a common way to make
 * OkHttp's {@code enqueue} synchronous in tests, or a pool with {@code CallerRunsPolicy} once it is
 * saturated) and the app's callback throws a RuntimeException.
 *
 * <p>{@code IdemCall.deliver} hands the callback task to
 * {@code dispatcher().executorService().execute(run)} and treats ANY RuntimeException from
 * {@code execute} as "the dispatcher refused the task (shut down)", running {@code run} again on
 * this thread. With an inline executor, that RuntimeException is the callback's own, thrown after
 * the callback already ran: {@code onFailure} (or {@code onResponse}, then with a response already
 * closed) is called a second time. A Kotlin continuation resumed twice throws "Already resumed", an
 * app counting answers counts two, and a second {@code onResponse} reads a closed body. The same
 * catch also turns afadc47a's rethrow of an unexpected RuntimeException after {@code onFailure}
 * into a second {@code onFailure}. OkHttp's own {@code AsyncCall.executeOn} catches only
 * {@code RejectedExecutionException} around {@code execute}, so a plain OkHttp call on the same
 * client hears back once (the control in each case). Fix direction: catch only
 * {@code RejectedExecutionException} (or track whether the task started).
 */
class RvRtoday2CallbackCalledTwiceOnInlineDispatcherTest {
  private final Fixture f = new Fixture();
  private final MockWebServer server = new MockWebServer();

  /** Runs every task on the thread that submits it. */
  private static final class InlineExecutor extends AbstractExecutorService {
    private volatile boolean shutdown;

    @Override
    public void execute(Runnable command) {
      command.run();
    }

    @Override
    public void shutdown() {
      shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
      shutdown = true;
      return List.of();
    }

    @Override
    public boolean isShutdown() {
      return shutdown;
    }

    @Override
    public boolean isTerminated() {
      return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return true;
    }
  }

  @AfterEach
  void stop() throws IOException {
    server.close();
  }

  private Request order(IdempotentOperation op) {
    return new Request.Builder().url(server.url("/orders"))
        .post(RequestBody.create(Fixture.ORDER, Fixture.JSON)).tag(IdempotentOperation.class, op).build();
  }

  @Test
  void anOnFailureThatThrowsIsCalledOnce() throws Exception {
    server.start();
    IdemOkHttp idem = f.idem();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()
        .dispatcher(new Dispatcher(new InlineExecutor()))).build();

    // Control: OkHttp's own call, canceled before it is enqueued, on the same client and dispatcher.
    List<String> plain = new CopyOnWriteArrayList<>();
    Call plainCall = client.newCall(new Request.Builder().url(server.url("/plain")).build());
    plainCall.cancel();
    enqueue(plainCall, plain, true);
    assertEquals(List.of("failure: java.io.IOException: Canceled"), plain, "OkHttp's own call hears back once");

    List<String> answers = new CopyOnWriteArrayList<>();
    Call call = idem.callFactory(client).newCall(order(IdempotentOperation.of("create-order")));
    call.cancel();
    enqueue(call, answers, true);
    assertEquals(List.of("failure: java.io.IOException: Canceled"), answers,
        "the callback must hear back exactly once");
    assertEquals(0, server.getRequestCount());
  }

  @Test
  void anOnResponseThatThrowsIsCalledOnce() throws Exception {
    server.enqueue(new MockResponse.Builder().code(201).body("{\"id\":1}").build());
    server.enqueue(new MockResponse.Builder().code(201).body("{\"id\":2}").build());
    server.start();
    // Idem's async work on the calling thread too: the whole enqueue runs inside enqueue(), so
    // every callback has run by the time it returns (no wait, no race).
    IdemOkHttp idem = IdemOkHttp.builder(f.executorBuilder().asyncExecutor(Runnable::run).build()).build();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()
        .dispatcher(new Dispatcher(new InlineExecutor()))).build();

    // Control: OkHttp's own call on the same client and dispatcher.
    List<String> plain = new CopyOnWriteArrayList<>();
    enqueue(client.newCall(new Request.Builder().url(server.url("/plain")).build()), plain, true);
    assertEquals(List.of("response 201"), plain, "OkHttp's own call hears back once");

    List<String> answers = new CopyOnWriteArrayList<>();
    enqueue(idem.callFactory(client).newCall(order(IdempotentOperation.of("create-order"))), answers, true);
    assertEquals(List.of("response 201"), answers, "the callback must hear back exactly once");
    assertEquals(2, server.getRequestCount());
  }

  /** Enqueues {@code call}, recording each callback; both callbacks throw if {@code throwing}. */
  private static void enqueue(Call call, List<String> answers, boolean throwing) {
    try {
      call.enqueue(new Callback() {
        @Override
        public void onResponse(Call c, Response response) {
          try (response) {
            answers.add("response " + response.code());
          }
          if (throwing) {
            throw new IllegalStateException("app bug in onResponse");
          }
        }

        @Override
        public void onFailure(Call c, IOException e) {
          answers.add("failure: " + e);
          if (throwing) {
            throw new IllegalStateException("app bug in onFailure");
          }
        }
      });
    } catch (RuntimeException e) {
      // An inline dispatcher sends what the callback rethrows to enqueue's caller.
    }
  }
}
