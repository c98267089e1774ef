package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.Classification;
import dev.idem.core.IdempotencyException;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * An interceptor added after install (the place for the one that sets Authorization) fails before
 * it proceeds, say because its token refresh failed: nothing of the attempt was written, so the
 * attempt is not ambiguous, and the operation ends FAILED, not UNCERTAIN. Before: an IOException
 * there (the only checked exception an interceptor may throw) was recorded as an ambiguous attempt
 * on every path, and through the call factory a RuntimeException was too.
 *
 * <p>Found by a review on 2026-12-04; failed before the fix.
 */
class InterceptorFailingBeforeSendingTest {
  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();

  @Test
  void anAuthInterceptorThrowingIOExceptionBeforeProceedingEndsFailedNotUncertain() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdemOkHttp idem = f.idem();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).addInterceptor(chain -> {
      throw new IOException("token refresh failed: auth server answered 503");
    }).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    IOException e = assertThrows(IOException.class,
        () -> client.newCall(order(server.url("/orders"), op)).execute().close());
    OperationRecord rec = f.record(op);
    assertEquals(0, server.requestCount(), "nothing reached the server");
    assertEquals(OperationState.FAILED, rec.state(), e.toString());
    assertEquals(Classification.SAFE, rec.attempts().get(0).classification(), rec.attempts().get(0).toString());
  }

  /** A resumed attempt (the outbox's, say) whose interceptor above Idem fails sent nothing either. */
  @Test
  void aResumedAttemptWhoseInterceptorFailsBeforeProceedingIsNotAmbiguous() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdemOkHttp idem = f.idem();
    OkHttpClient client = new OkHttpClient.Builder().addInterceptor(chain -> {
      throw new IOException("token refresh failed: auth server answered 503");
    }).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    OperationId id = idem.enqueue(order(server.url("/orders"), op));
    assertThrows(IdempotencyException.class, () -> idem.executor().resume(id, idem.transport(client)));
    assertEquals(0, server.requestCount(), "nothing reached the server");
    OperationRecord rec = f.record(op);
    assertEquals(Classification.SAFE, rec.attempts().get(0).classification(), rec.attempts().get(0).toString());
  }

  /** A failure after the request went out stays ambiguous: the server may have acted on it. */
  @Test
  void anInterceptorThrowingAfterTheRequestWentOutLeavesTheAttemptAmbiguous() throws Exception {
    IdempotentServer server = serverExtension.server();
    IdemOkHttp idem = f.idem();
    OkHttpClient client = idem.install(new OkHttpClient.Builder()).addInterceptor(chain -> {
      chain.proceed(chain.request()).close();
      throw new IOException("response signature check failed");
    }).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    assertThrows(IOException.class, () -> client.newCall(order(server.url("/orders"), op)).execute().close());
    OperationRecord rec = f.record(op);
    assertTrue(server.requestCount() > 0, "the request reached the server");
    assertEquals(OperationState.UNCERTAIN, rec.state());
    assertEquals(Classification.AMBIGUOUS, rec.attempts().get(0).classification(), rec.attempts().get(0).toString());
  }

  /**
   * The same through the call factory's enqueue, for an IOException and a RuntimeException, from
   * an interceptor below Idem's or above it (added before install; it runs on every attempt too).
   */
  @ParameterizedTest
  @CsvSource({"true,true", "false,true", "true,false", "false,false"})
  void throughTheCallFactoryAnInterceptorFailingBeforeProceedingEndsFailedNotUncertain(boolean io, boolean below)
      throws Exception {
    IdempotentServer server = serverExtension.server();
    IdemOkHttp idem = f.idem();
    Interceptor failing = chain -> {
      if (io) {
        throw new IOException("token refresh failed: auth server answered 503");
      }
      throw new IllegalStateException("token cache not ready");
    };
    OkHttpClient client = below ? idem.install(new OkHttpClient.Builder()).addInterceptor(failing).build()
        : idem.install(new OkHttpClient.Builder().addInterceptor(failing)).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    CompletableFuture<Object> done = new CompletableFuture<>();
    idem.callFactory(client).newCall(order(server.url("/orders"), op)).enqueue(new Callback() {
      @Override
      public void onFailure(Call call, IOException e) {
        done.complete(e);
      }

      @Override
      public void onResponse(Call call, Response response) {
        response.close();
        done.complete(response.code());
      }
    });
    for (int i = 0; i < 100 && !done.isDone(); i++) {
      f.time.advance(Duration.ofSeconds(1));
      try {
        done.get(50, TimeUnit.MILLISECONDS);
      } catch (TimeoutException backoffUnderWay) {
        // the next attempt is due after more virtual time
      }
    }
    Object outcome = done.get(10, TimeUnit.SECONDS);
    assertEquals(0, server.requestCount(), "nothing reached the server");
    assertEquals(OperationState.FAILED, f.record(op).state(), String.valueOf(outcome));
  }
}
