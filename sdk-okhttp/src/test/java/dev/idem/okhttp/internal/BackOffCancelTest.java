package dev.idem.okhttp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.InMemoryJournal;
import dev.idem.core.Operation;
import dev.idem.core.OperationState;
import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transport;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.core.testing.VirtualTime;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import kotlin.jvm.functions.Function0;
import kotlin.reflect.KClass;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.EventListener;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import okio.Timeout;
import org.junit.jupiter.api.Test;

/** {@link BackOffCancel#listen}: a call that refuses the listener leaves no cancel behind. */
class BackOffCancelTest {
  private final VirtualTime time = new VirtualTime();

  /**
   * A Call from another library (a tracing wrapper) hands the listener on and then fails:
   * {@code listen} throws, and the keyed call never reaches the executor. The cancel it took for
   * that call must go with it: the thread's next call to the executor (here a plain
   * {@code execute}) is not that call, and a cancel of the failed call (the app cleaning up, or
   * OkHttp's call timeout) must not cut that call's backoff short.
   */
  @Test
  void aCallWhoseAddEventListenerThrowsLeavesNoCancelForTheThreadsNextCall() throws Exception {
    Call[] failed = new Call[1];
    List<Duration> waits = new CopyOnWriteArrayList<>();
    boolean[] woken = new boolean[1];
    IdempotentExecutor executor = IdempotentExecutor.builder().journal(new InMemoryJournal()).clock(time.clock())
        .scheduler(time.scheduler()).random(() -> 0.5)
        .sleeper(d -> {
          waits.add(d);
          failed[0].cancel(); // the failed call is cancelled while the next call backs off
          if (Thread.interrupted()) {
            woken[0] = true;
            throw new InterruptedException("woken");
          }
          time.advance(d);
        }).build();
    AdapterSupport support = AdapterSupport.of(executor, AdapterSupport.DEFAULT_KEY_HEADER, KeyHeaderFormat.BARE,
        UntaggedPolicy.PASS_THROUGH);
    IllegalStateException refusal = new IllegalStateException("the tracing wrapper could not record the listener");
    Call real = new OkHttpClient().newCall(new Request.Builder().url("http://localhost/orders").build());
    failed[0] = new ForwardingCall(real) {
      @Override
      public void addEventListener(EventListener listener) {
        super.addEventListener(listener);
        throw refusal;
      }
    };

    assertSame(refusal, assertThrows(IllegalStateException.class, () -> BackOffCancel.listen(failed[0], support)));

    Operation op = Operation.builder("create-order", RequestSnapshot.builder("POST",
        URI.create("https://api.example.com/v1/orders")).body("{}".getBytes(StandardCharsets.UTF_8),
            "application/json").build()).build();
    List<IdempotencyKey> keys = new CopyOnWriteArrayList<>();
    Transport transport = (request, key) -> {
      keys.add(key);
      return new ResponseSnapshot(keys.size() == 1 ? 503 : 201, Map.of(), new byte[0]);
    };
    executor.execute(op, transport);

    assertFalse(woken[0], "the cancel of a call that never reached the executor cut another call's backoff short");
    assertFalse(Thread.currentThread().isInterrupted());
    assertEquals(1, waits.size());
    assertEquals(List.of(op.key(), op.key()), keys, "the same key on every attempt");
    assertEquals(OperationState.SUCCEEDED, executor.find(op.id()).orElseThrow().state());
  }

  /** Forwards every method to {@code delegate}. */
  private static class ForwardingCall implements Call {
    private final Call delegate;

    ForwardingCall(Call delegate) {
      this.delegate = delegate;
    }

    @Override
    public Request request() {
      return delegate.request();
    }

    @Override
    public Response execute() throws IOException {
      return delegate.execute();
    }

    @Override
    public void enqueue(Callback callback) {
      delegate.enqueue(callback);
    }

    @Override
    public void cancel() {
      delegate.cancel();
    }

    @Override
    public boolean isExecuted() {
      return delegate.isExecuted();
    }

    @Override
    public boolean isCanceled() {
      return delegate.isCanceled();
    }

    @Override
    public Timeout timeout() {
      return delegate.timeout();
    }

    @Override
    public void addEventListener(EventListener listener) {
      delegate.addEventListener(listener);
    }

    @Override
    public <T> T tag(KClass<T> type) {
      return delegate.tag(type);
    }

    @Override
    public <T> T tag(Class<? extends T> type) {
      return delegate.tag(type);
    }

    @Override
    public <T> T tag(KClass<T> type, Function0<? extends T> computeIfAbsent) {
      return delegate.tag(type, computeIfAbsent);
    }

    @Override
    public <T> T tag(Class<T> type, Function0<? extends T> computeIfAbsent) {
      return delegate.tag(type, computeIfAbsent);
    }

    @Override
    public Call clone() {
      return new ForwardingCall(delegate.clone());
    }
  }
}
