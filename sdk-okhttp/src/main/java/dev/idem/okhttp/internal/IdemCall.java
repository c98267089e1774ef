package dev.idem.okhttp.internal;

import dev.idem.core.IdempotencyException;
import dev.idem.core.OperationFailedException;
import dev.idem.core.Outcome;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.core.spi.adapter.Settlement;
import dev.idem.okhttp.IdempotencyResult;
import dev.idem.okhttp.IdempotentOperation;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import kotlin.jvm.JvmClassMappingKt;
import kotlin.jvm.functions.Function0;
import kotlin.reflect.KClass;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.EventListener;
import okhttp3.Request;
import okhttp3.Response;
import okio.AsyncTimeout;
import okio.Timeout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A call made by {@link IdemCallFactory} for a request tagged with an {@link IdempotentOperation}.
 *
 * <p>{@link #execute()} runs the request through the app's client with the idempotency interceptor,
 * exactly as a plain call would. {@link #enqueue} instead hands the operation to
 * {@code IdempotentExecutor.executeAsync}: each attempt is its own OkHttp call, and the backoff
 * between attempts is waited out on the executor's scheduler, so no dispatcher thread and no
 * per-host slot is held while the call waits. The callback runs on the client's dispatcher executor
 * service, as OkHttp's own callbacks do, once the operation's outcome is journaled. A
 * {@code RuntimeException} or {@code Error} from {@code onResponse} closes the response (its body
 * may hold the connection) and is rethrown to the dispatcher thread's uncaught exception handler,
 * where OkHttp's own calls send it too. An {@code IOException} from {@code onResponse} closes the
 * response and is logged at WARN (method and redacted URL), as OkHttp logs its own. Anything else
 * thrown while the callback's answer is made (a bug, a stored answer that cannot be rebuilt) never
 * leaves the callback unanswered: as OkHttp does with a throwable from its interceptor chain, the
 * call is canceled, {@code onFailure} gets an {@code IOException} ("canceled due to ...") that
 * carries it as a suppressed exception, and it is then rethrown on the dispatcher thread.
 *
 * <p>Call semantics: one {@code execute} or {@code enqueue} per call ({@link IllegalStateException}
 * after that), {@link #clone()} makes a fresh call for the same request (same tag, so the same
 * operation and key), {@link #cancel()} stops further attempts and leaves the operation PENDING with
 * its key, and {@link #timeout()} (default the client's call timeout) bounds the whole operation,
 * retries and backoff included: when it elapses the call is canceled. Thread-safe.
 */
final class IdemCall implements Call {
  private static final Logger LOG = LoggerFactory.getLogger(IdemCall.class);

  private final IdemCallFactory factory;
  private final Request request;
  private final IdempotentOperation operation;
  private final AtomicBoolean executed = new AtomicBoolean();
  private final Map<Class<?>, Object> tags = new ConcurrentHashMap<>();
  private final List<EventListener> listeners = new CopyOnWriteArrayList<>();
  private final AsyncTimeout timeout = new AsyncTimeout() {
    @Override
    protected void timedOut() {
      cancel();
    }
  };

  private volatile boolean canceled;
  /** The plain call that {@link #execute()} delegates to. */
  private volatile Call inner;
  private volatile LiveCallTransport transport;
  private volatile CompletableFuture<Outcome> execution;

  IdemCall(IdemCallFactory factory, Request request, IdempotentOperation operation) {
    this.factory = factory;
    this.request = request;
    this.operation = operation;
    timeout.timeout(factory.client().callTimeoutMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public Request request() {
    return request;
  }

  @Override
  public Response execute() throws IOException {
    markExecuted();
    Call call = factory.client().newCall(request);
    call.timeout().timeout(timeout.timeoutNanos(), TimeUnit.NANOSECONDS);
    listeners.forEach(call::addEventListener);
    inner = call;
    if (canceled) {
      call.cancel();
    }
    return call.execute();
  }

  @Override
  public void enqueue(Callback callback) {
    markExecuted();
    if (canceled) {
      deliver(callback, null, new IOException("Canceled"), null);
      return;
    }
    timeout.enter();
    CompletableFuture<Outcome> started;
    LiveCallTransport live;
    try {
      // The same preparation as the interceptor's: body read once, the key-header rule applied.
      PreparedCall call = PreparedCall.of(request, operation, factory.settings(), factory.maxBodyBytes());
      live = new LiveCallTransport(factory.client(), call, factory.settings(), listeners,
          call.attemptTimeout(factory.settings()));
      transport = live;
      started = factory.settings().executor().executeAsync(call.operation(), live);
    } catch (IOException e) {
      deliver(callback, null, e, null);
      return;
    } catch (RuntimeException e) {
      // Bad input or a missing reference key secret: refused before anything was journaled or sent.
      deliver(callback, null, new IdempotencyException(e.getMessage() + " (" + e.getClass().getSimpleName() + ")", e),
          null);
      return;
    }
    execution = started;
    if (canceled) {
      cancel();
    }
    started.whenComplete((outcome, error) -> {
      Response response = null;
      IOException failure = null;
      Throwable unexpected = null;
      try {
        try {
          response = settle(live, outcome, unwrap(error));
        } finally {
          // Only the response handed over keeps its body open; any other is closed, unread.
          live.last.release();
        }
      } catch (IOException e) {
        failure = e;
      } catch (RuntimeException | Error e) {
        // Thrown inside a CompletableFuture stage, it would be swallowed and the callback never
        // called: the app's call (a Retrofit enqueue, a suspend function) would wait for good. As
        // OkHttp's AsyncCall does with a throwable from its chain: the call is canceled, the
        // callback's onFailure gets an IOException carrying it, and it is rethrown on the
        // dispatcher thread after that (see deliver). The journal keeps the operation's outcome.
        if (response != null) {
          response.close();
          response = null;
        }
        unexpected = e;
        failure = new IOException("canceled due to " + e);
        failure.addSuppressed(e);
        cancel();
      }
      try {
        deliver(callback, response, failure, unexpected);
      } catch (RuntimeException | Error e) {
        // The client's dispatcher refused the callback (shut down), so it ran here, on the thread
        // that settled the operation (usually one of Idem's), inside a CompletableFuture stage that
        // would swallow what it threw. The journal already has the outcome; the exception goes
        // where a thread's uncaught exceptions go, as OkHttp's rethrow on its dispatcher thread
        // sends it, and this thread goes on serving other operations.
        Thread thread = Thread.currentThread();
        thread.getUncaughtExceptionHandler().uncaughtException(thread, e);
      }
    });
  }

  /** The response the caller gets, as the interceptor would have returned it, or the failure. */
  private Response settle(LiveCallTransport live, Outcome outcome, Throwable error) throws IOException {
    AdapterSupport support = factory.settings();
    Settlement settled = null;
    if (error == null) {
      settled = support.settle(outcome);
    } else if (error instanceof OperationFailedException e) {
      settled = support.settle(e);
    }
    if (settled != null) {
      return live.last.responseFor(settled.response(), new IdempotencyResult(settled.operationId(), settled.state(),
          settled.replayed(), settled.fromJournal(), settled.attempts()));
    }
    if (error instanceof IOException io) {
      throw io;
    }
    if (error instanceof CancellationException) {
      InterruptedIOException canceledError = new InterruptedIOException("Canceled; the operation stays PENDING with"
          + " its key and is sent again by a resume or an OutboxDispatcher");
      canceledError.initCause(error);
      throw canceledError;
    }
    throw new IOException("unexpected failure of operation " + operation + ": " + error, error);
  }

  /**
   * Calls the callback on the client's dispatcher: {@code onFailure} with {@code failure} if there
   * is one, otherwise {@code onResponse}. {@code rethrown}, the unexpected throwable behind
   * {@code failure} (or null), is thrown on that thread after {@code onFailure}, as OkHttp's
   * AsyncCall rethrows one to its dispatcher thread's uncaught exception handler.
   */
  private void deliver(Callback callback, Response response, IOException failure, Throwable rethrown) {
    timeout.exit();
    Runnable run = () -> {
      if (failure != null) {
        callback.onFailure(this, failure);
        if (rethrown instanceof RuntimeException e) {
          throw e;
        }
        if (rethrown instanceof Error e) {
          throw e;
        }
        return;
      }
      try {
        callback.onResponse(this, response);
      } catch (IOException e) {
        // As OkHttp does: a callback's own IOException from onResponse is not delivered again, but
        // logged ("Callback failure for ..."), or the app's bug would leave no trace. The URL is
        // redacted (no query, no user info) and no header is logged: either may carry a secret.
        response.close();
        LOG.warn("Callback failure for {} {} (operation {}); the response was closed, and the journal keeps"
            + " the operation's outcome", request.method(), request.url().redact(), operation, e);
      } catch (RuntimeException | Error e) {
        // OkHttp cancels a call whose onResponse throws, which frees its connection, and rethrows.
        // The body is open past the journal's captured prefix and holds the connection: closing it
        // frees that connection (reused if the rest of the body can be drained), and the callback
        // owned the response anyway. Closing twice is harmless.
        response.close();
        throw e;
      }
    };
    // Once only: a dispatcher that runs tasks on the submitting thread (an inline executor in
    // tests, a full pool with CallerRunsPolicy) throws what the callback threw out of execute, after
    // the callback ran; telling it again would answer the call twice (review rtoday2).
    AtomicBoolean ran = new AtomicBoolean();
    Runnable once = () -> {
      if (ran.compareAndSet(false, true)) {
        run.run();
      }
    };
    try {
      factory.client().dispatcher().executorService().execute(once);
    } catch (RuntimeException e) {
      if (ran.get()) {
        throw e;  // the callback's own, on this thread: it goes where the dispatcher's would
      }
      // The client was shut down (refused before the callback ran): tell the callback on this
      // thread rather than never.
      once.run();
    }
  }

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  private void markExecuted() {
    if (!executed.compareAndSet(false, true)) {
      throw new IllegalStateException("Already Executed");
    }
  }

  @Override
  public void cancel() {
    canceled = true;
    Call call = inner;
    if (call != null) {
      call.cancel();
    }
    // The execution first, so the attempt that the transport's cancel fails is seen as canceled
    // (left PENDING) rather than as a failed attempt to retry.
    CompletableFuture<Outcome> running = execution;
    if (running != null) {
      running.cancel(false);
    }
    LiveCallTransport live = transport;
    if (live != null) {
      live.cancel();
    }
  }

  @Override
  public boolean isExecuted() {
    return executed.get();
  }

  @Override
  public boolean isCanceled() {
    return canceled;
  }

  @Override
  public Timeout timeout() {
    return timeout;
  }

  @Override
  public void addEventListener(EventListener eventListener) {
    listeners.add(eventListener);
  }

  @Override
  public <T> T tag(KClass<T> type) {
    return tag(JvmClassMappingKt.getJavaClass(type));
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T> T tag(Class<? extends T> type) {
    return (T) tags.get(type);
  }

  @Override
  public <T> T tag(KClass<T> type, Function0<? extends T> computeIfAbsent) {
    return tag(JvmClassMappingKt.getJavaClass(type), computeIfAbsent);
  }

  @Override
  @SuppressWarnings("unchecked")
  public <T> T tag(Class<T> type, Function0<? extends T> computeIfAbsent) {
    return (T) tags.computeIfAbsent(type, t -> computeIfAbsent.invoke());
  }

  @Override
  public Call clone() {
    return new IdemCall(factory, request, operation);
  }

  @Override
  public String toString() {
    return "IdemCall{" + operation + ", " + request.method() + " " + request.url().redact() + "}";
  }
}
