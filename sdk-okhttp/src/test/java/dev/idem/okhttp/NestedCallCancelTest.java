package dev.idem.okhttp;

import static dev.idem.okhttp.Fixture.order;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationState;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.Sleeper;
import dev.idem.testkit.Fault;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.IdempotentServerExtension;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import okhttp3.Call;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A keyed call made on the thread of another keyed call, while that one is on the wire (an app
 * interceptor or authenticator fetching a token through the same client, as many apps do). The
 * outer call's cancel or call timeout must end the outer call only: the inner call was not
 * canceled, and must still wait out the server's Retry-After before its next attempt.
 */
class NestedCallCancelTest {
  private static final Duration RETRY_AFTER = Duration.ofSeconds(60);

  @RegisterExtension
  final IdempotentServerExtension serverExtension = new IdempotentServerExtension();

  final Fixture f = new Fixture();

  @Test
  void cancelingTheOuterCallDoesNotCutTheInnerCallsRetryAfter() throws Exception {
    IdempotentServer server = serverExtension.server();
    List<Duration> requested = new CopyOnWriteArrayList<>();
    AtomicReference<Runnable> onEnter = new AtomicReference<>(() -> { });
    boolean[] woken = new boolean[1];
    // Waits as Thread.sleep does: a pending interrupt ends it at once; otherwise the wait passes on
    // the virtual clock.
    Sleeper sleeper = d -> {
      requested.add(d);
      onEnter.getAndSet(() -> { }).run();
      if (Thread.interrupted()) {
        woken[0] = true;
        throw new InterruptedException("woken");
      }
      f.time.advance(d);
    };
    IdempotentExecutor executor = f.executorBuilder().sleeper(sleeper)
        .retryPolicy(RetryPolicy.builder().maxDelay(Duration.ofMinutes(2)).deadline(Duration.ofMinutes(10)).build())
        .build();
    IdemOkHttp idem = IdemOkHttp.builder(executor).build();
    IdempotentOperation outer = IdempotentOperation.of("create-order");
    IdempotentOperation inner = IdempotentOperation.of("create-token");
    AtomicReference<OkHttpClient> client = new AtomicReference<>();
    AtomicReference<Call> outerCall = new AtomicReference<>();
    // The outer call's attempt first makes a keyed call of its own through the same client.
    Interceptor tokenFirst = chain -> {
      if (chain.request().url().encodedPath().equals("/orders")) {
        try (Response token = client.get().newCall(order(server.url("/tokens"), inner)).execute()) {
          assertEquals(201, token.code());
        }
      }
      return chain.proceed(chain.request());
    };
    client.set(new OkHttpClient.Builder().addInterceptor(idem.interceptor()).addInterceptor(tokenFirst)
        .retryOnConnectionFailure(false).build());
    // The inner call's first attempt is told to come back in 60 s; while it waits, the outer call
    // is canceled (its call timeout, say).
    server.plan().next(Fault.status(503).withHeader("Retry-After", String.valueOf(RETRY_AFTER.toSeconds())));
    onEnter.set(() -> outerCall.get().cancel());
    Instant start = f.time.now();
    outerCall.set(client.get().newCall(order(server.url("/orders"), outer)));

    assertThrows(IOException.class, () -> outerCall.get().execute().close());

    assertEquals(List.of(RETRY_AFTER), requested, "the inner call's backoff was the server's Retry-After");
    assertFalse(woken[0], "the outer call's cancel woke the inner call's backoff: the inner call (never"
        + " canceled) sent its next attempt at once, ignoring the server's Retry-After");
    assertEquals(start.plus(RETRY_AFTER), f.time.now(), "the inner call waited out the Retry-After");
    assertEquals(OperationState.SUCCEEDED, f.record(inner).state());
    assertEquals(OperationState.PENDING, f.record(outer).state());
  }
}
