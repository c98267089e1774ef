package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A response header whose name OkHttp read leniently from the wire (a server writing
 * {@code X-Trace-Id : abc}, with a space before the colon, which OkHttp's parser keeps as part of
 * the name) is journaled as it was received, but the replay of that stored answer cannot be built:
 * {@code OkHttpSnapshots.toResponse} adds each stored header with
 * {@code Headers.Builder.addUnsafeNonAscii}, which still checks the NAME and refuses a space (or an
 * empty name, which OkHttp gives a header line without a colon) with an
 * {@code IllegalArgumentException}.
 *
 * <p>So the first call gets its 201, the journal says SUCCEEDED, and every later call of the same
 * operation (a double submit, {@code Call.clone()}, the app's own retry after a read timeout on the
 * body, a call after a restart) throws {@code IllegalArgumentException} out of
 * {@code Call.execute()} instead of the replayed 201 that the docs promise ("SUCCEEDED: the
 * server's response, possibly a replay"). An app that retries on exceptions cannot get the outcome
 * of an operation that did succeed.
 *
 * <p>Through {@code IdemOkHttp.callFactory} (Retrofit's {@code enqueue}) it is worse: the exception
 * is thrown inside {@code IdemCall.enqueue}'s {@code whenComplete} stage, which catches only
 * {@code IOException}, so the callback is never called, neither {@code onResponse} nor
 * {@code onFailure}: the app's asynchronous call hangs for good (Retrofit's {@code enqueue}, a
 * {@code suspend} function, never resumes).
 */
class RvRhttpLenientHeaderNameReplayTest {
  private final Fixture f = new Fixture();
  private final MockWebServer server = new MockWebServer();

  @AfterEach
  void stop() throws IOException {
    server.close();
  }

  @Test
  void aStoredAnswerWithALenientlyReadHeaderNameIsReplayed() throws Exception {
    server.enqueue(new MockResponse.Builder().code(201).addHeaderLenient("X-Trace-Id ", "abc")
        .body("{\"id\":\"ord_1\"}").build());
    server.start();
    IdemOkHttp idem = f.idem();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request request = new Request.Builder().url(server.url("/orders"))
        .post(RequestBody.create(Fixture.ORDER, Fixture.JSON)).tag(IdempotentOperation.class, op).build();

    try (Response first = client.newCall(request).execute()) {
      assertEquals(201, first.code());
      assertEquals("{\"id\":\"ord_1\"}", first.body().string());
    }
    OperationRecord record = f.record(op);
    assertEquals(OperationState.SUCCEEDED, record.state(), record.toString());

    // The same operation again (a double submit, a clone, a retry by the app): answered from the journal.
    Throwable thrown = null;
    int code = -1;
    try (Response again = client.newCall(request).execute()) {
      code = again.code();
    } catch (IOException | RuntimeException e) {
      thrown = e;
    }
    assertEquals(1, server.getRequestCount(), "nothing sent again");
    assertEquals(201, code, "the stored 201 is replayed; the call threw " + thrown);
  }

  @Test
  void anEnqueuedReplayOfSuchAnAnswerReachesTheCallback() throws Exception {
    server.enqueue(new MockResponse.Builder().code(201).addHeaderLenient("X-Trace-Id ", "abc")
        .body("{\"id\":\"ord_1\"}").build());
    server.start();
    IdemOkHttp idem = f.idem();
    Call.Factory calls = idem.callFactory(idem.install(new OkHttpClient.Builder()).build());
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request request = new Request.Builder().url(server.url("/orders"))
        .post(RequestBody.create(Fixture.ORDER, Fixture.JSON)).tag(IdempotentOperation.class, op).build();

    assertEquals("201", enqueue(calls, request).get(10, TimeUnit.SECONDS));
    assertEquals(OperationState.SUCCEEDED, f.record(op).state());

    // The same operation enqueued again is answered from the journal: the callback must hear of it.
    CompletableFuture<String> again = enqueue(calls, request);
    String answer;
    try {
      answer = again.get(10, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      answer = "no callback at all within 10 s (neither onResponse nor onFailure)";
    }
    assertEquals(1, server.getRequestCount(), "nothing sent again");
    assertEquals("201", answer, "the stored 201 is replayed to onResponse");
  }

  /** Enqueues a call; the future completes with the status, or "failure: ..." from onFailure. */
  private static CompletableFuture<String> enqueue(Call.Factory calls, Request request) {
    CompletableFuture<String> result = new CompletableFuture<>();
    calls.newCall(request).enqueue(new Callback() {
      @Override
      public void onResponse(Call call, Response response) {
        try (response) {
          result.complete(String.valueOf(response.code()));
        }
      }

      @Override
      public void onFailure(Call call, IOException e) {
        result.complete("failure: " + e);
      }
    });
    return result;
  }
}
