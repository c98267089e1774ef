package dev.idem.httpclient.internal;

import dev.idem.core.IdempotencyException;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.core.spi.adapter.CallCancel;
import dev.idem.core.spi.adapter.Settlement;
import dev.idem.core.spi.adapter.Settling;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationId;
import dev.idem.core.OperationPendingException;
import dev.idem.core.Operation;
import dev.idem.core.Outcome;
import dev.idem.core.RetryPolicy;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.httpclient.IdempotentHttpResponse;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandler;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Runs one keyed call, sync or async: capture the body once, snapshot the request, hand the
 * operation to the executor with a {@link LiveTransport}, and turn how it ended into what
 * java.net.http callers expect: a response for SUCCEEDED and for a FAILED operation that ended
 * with a server response, an {@link IOException} for everything else.
 *
 * <p>Thread-safe: what calls share (the shutdown flag, the calls in progress) is guarded by one
 * monitor; the rest is per call.
 */
public final class CallEngine {
  private final HttpClient delegate;
  private final KeyedClient keyed;
  private final AdapterSupport support;
  private final long maxBodyBytes;
  private final CaptureThreads captureThreads = new CaptureThreads();

  /**
   * Guards {@link #shutDown} and {@link #running}; notified as an asynchronous call ends, and as
   * the last blocking one does after the shutdown.
   */
  private final Object calls = new Object();
  /** Set by {@link #shutdown()}: no keyed call starts, and no attempt is sent, after it. */
  private volatile boolean shutDown;
  /**
   * The asynchronous calls whose execution has not ended (settled or stopped), which
   * {@link #shutdown()} stops, whether or not their caller still waits.
   */
  private final Set<AsyncCall> running = new HashSet<>();
  /**
   * The blocking calls in progress, from their begin to their return, for {@link #awaitCalls} and
   * for {@link #shutdown()} to wake. Not under {@link #calls}: every blocking call adds itself, and
   * only after the shutdown does anyone wait for them.
   */
  private final Set<CallCancel> blocking = ConcurrentHashMap.newKeySet();

  /**
   * @param delegate the app's client: its version is the default of a rebuilt response
   * @param keyed the client keyed attempts go through
   */
  public CallEngine(HttpClient delegate, KeyedClient keyed, AdapterSupport support, long maxBodyBytes) {
    this.delegate = delegate;
    this.keyed = keyed;
    this.support = support;
    this.maxBodyBytes = maxBodyBytes;
  }

  /** The adapter layer's rules this engine applies. */
  public AdapterSupport support() {
    return support;
  }

  /**
   * Journals one operation for queued delivery without sending it: the body is captured (bounded),
   * the operation made as for a live call, and handed to {@link IdempotentExecutor#enqueue}.
   */
  public OperationId enqueue(HttpRequest request, OperationFactory operation) throws IOException, InterruptedException {
    byte[] body = awaitCapture(capture(request, operation));
    return support.executor().enqueue(make(operation, request, body)).id();
  }

  private Operation make(OperationFactory operation, HttpRequest request, byte[] body) throws IdempotencyException {
    return operation.make(snapshot(request, body), request.headers().allValues(support.headerName()));
  }

  /** Sends one operation on the calling thread; see the decorator's Javadoc for what it throws. */
  public <T> IdempotentHttpResponse<T> send(HttpRequest request, BodyHandler<T> handler,
      OperationFactory operation) throws IOException, InterruptedException {
    // Checked before anything is journaled or sent, as HttpClient checks it: found null only once
    // the response came, it failed a call the server had already acted on.
    Objects.requireNonNull(handler, "handler");
    return send(request, handler, operation, awaitCapture(capture(request, operation)));
  }

  /**
   * Sends an untagged call the untagged policy keyed: as {@link #send}, unless its captured form
   * body holds a credential ({@link AdapterSupport#passesUntaggedUnjournaled}); that call goes out
   * once through the app's client, unjournaled and without a key, as under {@code PASS_THROUGH}.
   */
  public <T> HttpResponse<T> sendUntagged(HttpRequest request, BodyHandler<T> handler, OperationFactory operation)
      throws IOException, InterruptedException {
    Objects.requireNonNull(handler, "handler");
    byte[] body = awaitCapture(capture(request, operation));
    if (passesUnjournaled(request, body)) {
      return delegate.send(withBody(request, body), handler);
    }
    return send(request, handler, operation, body);
  }

  private <T> IdempotentHttpResponse<T> send(HttpRequest request, BodyHandler<T> handler, OperationFactory operation,
      byte[] body) throws IOException, InterruptedException {
    // Taken on this thread right before the executor call it names, for shutdown() to cancel.
    CallCancel call = support.callCancel();
    // Added before the flag is read: a shutdown either sees this call, or this call sees it.
    blocking.add(call);
    try {
      if (shutDown) {
        throw refused();
      }
      return sendBlocking(request, handler, operation, body);
    } finally {
      call.close();
      blocking.remove(call);
      if (blocking.isEmpty() && shutDown) {
        synchronized (calls) {
          calls.notifyAll(); // the last one, which awaitCalls may be waiting for
        }
      }
    }
  }

  private <T> IdempotentHttpResponse<T> sendBlocking(HttpRequest request, BodyHandler<T> handler,
      OperationFactory operation, byte[] body) throws IOException, InterruptedException {
    Operation op = make(operation, request, body);
    LiveTransport transport = new LiveTransport(sender(op), request, body, support, this::isShutDown);
    Settlement settled;
    try {
      settled = Settling.execute(support, op, transport, transport::releaseUnclaimed);
    } catch (OperationPendingException e) {
      // HttpClient.send reports interrupts as InterruptedException; the operation stays PENDING.
      if (Thread.interrupted()) {
        InterruptedException ie = new InterruptedException("interrupted; " + e.getMessage());
        ie.initCause(e);
        throw ie;
      }
      throw e;
    }
    CompletableFuture<IdempotentHttpResponse<T>> responded = respond(settled, handler, transport, request);
    try {
      return responded.get();
    } catch (ExecutionException e) {
      throw Settling.asIOException(e);
    } catch (InterruptedException e) {
      // Nobody will use what the handler makes of the rest of the body: stop it, as the JDK's
      // send does when interrupted, rather than let it stream into the handler for as long as
      // the server sends.
      transport.cancel();
      // The journal has the operation's end already: the caller must not take this interrupt for
      // the PENDING one an interrupt before the answer leaves.
      InterruptedException told = new InterruptedException("interrupted while the response body was read; operation "
          + settled.operationId() + " is " + settled.state() + " in the journal (HTTP " + settled.response().status()
          + "), so it is not sent again: resume or find it by its key for the stored outcome");
      told.initCause(e);
      throw told;
    }
  }

  /**
   * Sends one operation without blocking; cancelling the result cancels the attempt on the wire and
   * stops further attempts, leaving the operation PENDING, or, once the operation settled, stops
   * the body the caller's handler reads.
   */
  public <T> CompletableFuture<IdempotentHttpResponse<T>> sendAsync(HttpRequest request, BodyHandler<T> handler,
      OperationFactory operation) {
    Objects.requireNonNull(handler, "handler"); // as in send
    CompletableFuture<IdempotentHttpResponse<T>> result = new CompletableFuture<>();
    // On the caller's thread, so that the operation is journaled before this returns (a body
    // publisher that completes as it is subscribed to, as the JDK's own do): a shutdown() or
    // close() right after, or a main that returns, then finds it in the journal, PENDING with
    // its key, where a hand-over to another thread left it unjournaled and lost. The price: a
    // publisher that reads a stream as it is subscribed to (BodyPublishers.ofInputStream) holds
    // the caller for that read (documented on OperationCall.sendAsync).
    try {
      begin(request, handler, operation, result, null);
    } catch (RuntimeException | Error e) {
      result.completeExceptionally(e);
    }
    return result;
  }

  /**
   * As {@link #sendAsync}, for an untagged call the untagged policy keyed; if its captured form
   * body holds a credential, the call goes out once through {@code passThrough} instead (the app's
   * client, given the request with the captured bytes as its body), unjournaled and without a key,
   * as under {@code PASS_THROUGH}; cancelling the result then cancels that exchange.
   */
  public <T> CompletableFuture<HttpResponse<T>> sendAsyncUntagged(HttpRequest request, BodyHandler<T> handler,
      OperationFactory operation, Function<HttpRequest, CompletableFuture<HttpResponse<T>>> passThrough) {
    Objects.requireNonNull(handler, "handler");
    CompletableFuture<IdempotentHttpResponse<T>> keyed = new CompletableFuture<>();
    CompletableFuture<HttpResponse<T>> result = widen(keyed);
    Predicate<byte[]> passed = body -> {
      if (!passesUnjournaled(request, body)) {
        return false;
      }
      // The keyed future is left incomplete: nothing was journaled, and result is completed here.
      CompletableFuture<HttpResponse<T>> sent;
      try {
        sent = passThrough.apply(withBody(request, body));
      } catch (RuntimeException | Error e) {
        result.completeExceptionally(e);
        return true;
      }
      result.whenComplete((r, e) -> {
        if (result.isCancelled()) {
          sent.cancel(true);
        }
      });
      sent.whenComplete((r, e) -> {
        if (e != null) {
          result.completeExceptionally(Settling.unwrap(e));
        } else {
          result.complete(r);
        }
      });
      return true;
    };
    try {
      begin(request, handler, operation, keyed, passed);
    } catch (RuntimeException | Error e) {
      keyed.completeExceptionally(e);
    }
    return result;
  }

  private boolean passesUnjournaled(HttpRequest request, byte[] body) {
    return support.passesUntaggedUnjournaled(request.headers().firstValue("Content-Type").orElse(null), body);
  }

  /** The request with the captured bytes as its body: its own publisher may be spent by the capture. */
  private static HttpRequest withBody(HttpRequest request, byte[] body) {
    return HttpRequest.newBuilder(request, (name, value) -> true)
        .method(request.method(), HttpRequest.BodyPublishers.ofByteArray(body)).build();
  }

  /** Captures the body, then begins the operation and sends it; on the caller's thread. */
  private <T> void begin(HttpRequest request, BodyHandler<T> handler, OperationFactory operation,
      CompletableFuture<IdempotentHttpResponse<T>> result, Predicate<byte[]> passed) {
    if (result.isDone()) {
      return; // cancelled before its body was read: nothing read, journaled or sent
    }
    // Attached before the publisher is subscribed to, which may block this thread past the bound.
    Thread caller = Thread.currentThread();
    BodyCapture.capture(request, maxBodyBytes, captureBound(request, operation), captureThreads.cancels(),
        f -> f.whenComplete((body, captureError) -> {
          if (captureError != null && Thread.currentThread() != caller) {
            // Failed on another thread: a timeout on the JDK's shared timer thread, or a publisher's
            // own. The app's dependents of the result must not run there, where app code that
            // blocks would hold every other timeout of the JVM (or the publisher); they run on the
            // default async pool, as those of the JDK's sendAsync do.
            try {
              result.defaultExecutor().execute(() -> afterCapture(null, captureError, request, handler, operation,
                  result, passed));
            } catch (Throwable noThread) {
              // Better here than never: the call must end with its failure.
              Throwable e = Settling.unwrap(captureError);
              e.addSuppressed(noThread);
              result.completeExceptionally(e);
            }
          } else {
            afterCapture(body, captureError, request, handler, operation, result, passed);
          }
        }));
  }

  /** Begins the operation once its body is in, and sends it; on the thread that completed the capture. */
  private <T> void afterCapture(byte[] body, Throwable captureError, HttpRequest request, BodyHandler<T> handler,
      OperationFactory operation, CompletableFuture<IdempotentHttpResponse<T>> result, Predicate<byte[]> passed) {
    if (captureError != null) {
      result.completeExceptionally(Settling.unwrap(captureError));
      return;
    }
    if (result.isDone()) {
      return; // cancelled before begin: nothing journaled, nothing sent
    }
    try {
      if (passed != null && passed.test(body)) {
        return; // sent unjournaled: an untagged form body with a credential
      }
    } catch (RuntimeException | Error e) {
      // In a completion callback a throw is swallowed, and the caller's future never completes.
      result.completeExceptionally(e);
      return;
    }
    Operation op;
    LiveTransport transport;
    try {
      op = make(operation, request, body);
      transport = new LiveTransport(sender(op), request, body, support, this::isShutDown);
    } catch (IdempotencyException | RuntimeException e) {
      result.completeExceptionally(e);
      return;
    }
    AsyncCall call = new AsyncCall(op, transport);
    if (!register(call)) {
      result.completeExceptionally(refused()); // nothing journaled, nothing sent
      return;
    }
    // Before the execution starts: a cancel while the journal writes the begin and first claim
    // (a body publisher completing on another thread has already returned the caller's future)
    // must keep the first attempt from being handed to the client. The execution itself is
    // cancelled below, once it exists.
    result.whenComplete((r, e) -> {
      if (result.isCancelled()) {
        transport.cancel();
      }
    });
    CompletableFuture<Outcome> execution;
    try {
      execution = support.executor().executeAsync(op, transport);
    } catch (RuntimeException e) {
      unregister(call);
      result.completeExceptionally(e);
      return;
    }
    // Tracked until the execution ends, not the caller's future: a caller's future completed
    // otherwise than by a cancel (orTimeout, completeExceptionally) leaves the execution going
    // on in the background, and shutdown() must still find it and end it PENDING; left
    // untracked, its remaining attempts would be refused by the shut-down client and end it
    // FAILED, and awaitTermination would not wait for its journal writes.
    execution.whenComplete((o, e) -> unregister(call));
    call.started(execution);
    result.whenComplete((r, e) -> {
      if (result.isCancelled()) {
        // The execution first, so that it records the attempt the transport's cancel stops as
        // the cancelled call's (ambiguous; the operation PENDING), not as a failure to retry.
        execution.cancel(false);
        transport.cancel();
      }
    });
    Settling.settleAsync(support, execution, transport::abandon).whenComplete((settled, error) -> {
      if (error != null) {
        result.completeExceptionally(call.told(error));
        return;
      }
      if (result.isDone()) {
        transport.abandon(); // cancelled as it settled: no handler to feed
        return;
      }
      CompletableFuture<IdempotentHttpResponse<T>> responded;
      try {
        responded = respond(settled, handler, transport, request);
      } catch (RuntimeException | Error e) {
        // The caller's body subscriber threw as it was handed the body: thrown here, in a
        // completion callback, it would be swallowed and the caller's future never completed.
        result.completeExceptionally(e);
        return;
      }
      responded.whenComplete((response, e) -> {
        if (e != null) {
          result.completeExceptionally(Settling.unwrap(e)); // a failing body handler
        } else {
          result.complete(response);
        }
      });
    });
  }

  /**
   * Stops this engine's keyed calls, before the client they go through is shut down or closed
   * (the Idem client's {@code shutdown}, {@code shutdownNow}, and {@code close} of its twin): no keyed call
   * starts after this ({@link #refused}), no attempt is sent, and every asynchronous call not yet
   * settled ends now, PENDING with its key, as when its executor closes; that includes an
   * execution whose caller stopped waiting (its future completed by {@code orTimeout}), which
   * goes on in the background until then. An attempt the transport refuses since the shutdown
   * is recorded as the stopped call's, never as one not sent to retry
   * ({@link LiveTransport#stopped}). A call that settled already (its handler still reading the
   * body) is left alone. A blocking {@code send} ends
   * PENDING where it would send its next attempt, which is now if it is waiting out a backoff
   * ({@link CallCancel#cancel}): that wait would only delay the same end. Idempotent; any thread.
   *
   * <p>Why: a shut-down or closed {@code HttpClient} refuses every request, before a byte is sent. Left to
   * the executor, each refusal is an attempt "not sent", retried until the attempts run out, and
   * the operation ends FAILED: terminal, never sent again by a resume or an outbox, although the
   * target only asked for a retry (or never answered) and the refusal was this process stopping.
   */
  public void shutdown() {
    List<AsyncCall> stopping;
    synchronized (calls) {
      shutDown = true;
      stopping = List.copyOf(running);
    }
    stopping.forEach(AsyncCall::stop);
    // After the flag: a blocking call added later reads it and is refused, or, if it read it
    // before, is in the set now.
    // The executor alone knows when the thread is in its backoff: the cancel interrupts that wait
    // only, never a send or a journal write, and the mark is taken back as the call returns, so the
    // thread's later calls (through another client on the same executor) back off again.
    blocking.forEach(CallCancel::cancel);
  }

  private boolean isShutDown() {
    return shutDown;
  }

  /**
   * Whether a keyed call is in progress: a blocking {@code send} that has not returned (one
   * woken from its backoff by {@link #shutdown()} included, until it has written its PENDING end
   * to the journal and returned), or an asynchronous call whose execution has not ended (settled
   * or stopped), even if its caller's future completed (by {@code orTimeout}).
   *
   * @return true while one is
   */
  public boolean hasCallsInProgress() {
    synchronized (calls) {
      return !blocking.isEmpty() || !running.isEmpty();
    }
  }

  /**
   * Waits until no keyed call is in progress ({@link #hasCallsInProgress}). Meant for after
   * {@link #shutdown()}: before it, the end of the last blocking call does not wake the wait (to
   * keep a monitor off every call), and the deadline does.
   *
   * @param deadline a {@link System#nanoTime()} instant
   * @return true if none is, false if the deadline passed first
   * @throws InterruptedException if interrupted while waiting
   */
  public boolean awaitCalls(long deadline) throws InterruptedException {
    synchronized (calls) {
      while (!blocking.isEmpty() || !running.isEmpty()) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(calls, left);
      }
      return true;
    }
  }

  private boolean register(AsyncCall call) {
    synchronized (calls) {
      return !shutDown && running.add(call);
    }
  }

  private void unregister(AsyncCall call) {
    synchronized (calls) {
      running.remove(call);
      calls.notifyAll();
    }
  }

  private static IOException refused() {
    // As the JDK client refuses a request after its shutdown; here before anything is journaled.
    return new IOException("the IdempotentHttpClient was shut down or closed; the keyed call was neither journaled nor sent");
  }

  /**
   * One asynchronous call, for {@link #shutdown()}: its execution, once started, and whether the
   * shutdown stopped it, which turns the execution's cancellation into what the caller is told.
   */
  private static final class AsyncCall {
    private final Operation op;
    private final LiveTransport transport;
    private CompletableFuture<Outcome> execution; // guarded by this
    private boolean stopped; // guarded by this

    AsyncCall(Operation op, LiveTransport transport) {
      this.op = op;
      this.transport = transport;
    }

    /** The executor began the operation; a shutdown that came meanwhile stops it now. */
    void started(CompletableFuture<Outcome> execution) {
      boolean stop;
      synchronized (this) {
        this.execution = execution;
        stop = stopped;
      }
      if (stop) {
        execution.cancel(false);
        transport.stopped();
      }
    }

    /**
     * Ends the call PENDING unless it settled: cancelling the execution stops its backoff (the
     * journal says PENDING since the wait began) or, for an attempt on the wire, has the executor
     * record that attempt as ambiguous when it ends. The attempt itself is left to the client:
     * {@code shutdown()} lets it run to completion, {@code shutdownNow()} aborts it.
     */
    void stop() {
      CompletableFuture<Outcome> e;
      synchronized (this) {
        stopped = true;
        e = execution;
      }
      if (e != null) {
        e.cancel(false);
        // After the cancel: an attempt the transport refused since the shutdown is then recorded
        // as the stopped call's (not sent, the operation PENDING), never as a failure to retry.
        transport.stopped();
      }
    }

    /** What the caller is told of {@code error}: a cancellation by the shutdown means PENDING. */
    Throwable told(Throwable error) {
      boolean byShutdown;
      synchronized (this) {
        byShutdown = stopped;
      }
      if (!byShutdown || !(Settling.unwrap(error) instanceof CancellationException)) {
        return error;
      }
      OperationId id = transport.operationId(op);
      String what = id != null ? "operation " + id : "operation '" + op.name() + "'";
      String message = "the IdempotentHttpClient was shut down or closed while " + what + " was in progress; it stays in"
          + " the journal PENDING with its key (an attempt that was on the wire is recorded as ambiguous), and a"
          + " resume or an OutboxDispatcher sends it again with the same key";
      return id != null ? new OperationPendingException(message, error, id, List.of(), null)
          : new IOException(message, error);
    }
  }

  /** A sender for one operation's attempts, whose captured bodies are read before its attempt timeout. */
  private AttemptSender sender(Operation op) {
    return new AttemptSender(keyed, op.policy().orElse(support.executor().retryPolicy()).attemptTimeout().orElse(null));
  }

  /**
   * The snapshot of a live request: everything the caller set, secrets included (the executor
   * keeps them out of the journal), except a key header, which Idem sets itself on each attempt.
   */
  RequestSnapshot snapshot(HttpRequest request, byte[] body) {
    RequestSnapshot.Builder b = RequestSnapshot.builder(request.method(), request.uri())
        .body(body, request.headers().firstValue("Content-Type").orElse(null))
        // Kept so that a queued delivery or a resume after a restart bounds its attempts as this
        // call does (HttpRequest.Builder refuses a timeout that is not positive, as the snapshot does).
        .timeout(request.timeout().orElse(null));
    request.headers().map().forEach((name, values) -> {
      if (!name.equalsIgnoreCase(support.headerName())) {
        values.forEach(v -> b.header(name, v));
      }
    });
    return b.build();
  }

  private <T> CompletableFuture<IdempotentHttpResponse<T>> respond(Settlement s, BodyHandler<T> handler,
      LiveTransport transport, HttpRequest original) {
    AttemptSender.Result sent = transport.resultFor(s.response());
    HttpHeaders headers = sent != null ? sent.raw().headers() : HttpHeaders.of(s.response().headers(), (a, b) -> true);
    HttpClient.Version version = sent != null ? sent.raw().version() : original.version().orElse(delegate.version());
    HttpRequest request = sent != null ? sent.raw().request() : original;
    BodyHandlers.Info info = new BodyHandlers.Info(s.response().status(), headers, version);
    // The response this call received streams its live body to the caller's handler; one from the
    // journal (or another caller) is fed from its stored bytes.
    if (sent == null) {
      transport.releaseUnclaimed();
    }
    CompletableFuture<T> handled = sent != null ? BodyHandlers.attach(handler, info, sent)
        : BodyHandlers.apply(handler, info, s.response().body());
    return handled.thenApply(body -> new BufferedResponse<>(
        s.response().status(), headers, body, request, sent != null ? sent.raw().uri() : original.uri(), version,
        sent != null ? sent.raw().sslSession() : Optional.empty(), s.operationId(), s.state(), s.replayed(), s.fromJournal(),
        s.attempts()));
  }

  private CompletableFuture<byte[]> capture(HttpRequest request, OperationFactory operation) {
    return BodyCapture.capture(request, maxBodyBytes, captureBound(request, operation), captureThreads.cancels());
  }

  /**
   * How long the body publisher may take: the request's {@code timeout}, which bounds body
   * publishing in the JDK client too; else the retry policy's per-attempt {@code attemptTimeout},
   * the same bound in Idem's terms; else its {@code deadline}, which bounds the whole call. The
   * call's own policy, if it has one, else the executor's. The deadline always exists, so a keyed
   * call never waits for a stalled publisher forever, where the JDK client without a timeout
   * would.
   */
  private BodyCapture.Bound captureBound(HttpRequest request, OperationFactory operation) {
    Optional<Duration> timeout = request.timeout();
    if (timeout.isPresent()) {
      return new BodyCapture.Bound(timeout.get(), "the request's timeout");
    }
    RetryPolicy policy = operation.policy().orElse(support.executor().retryPolicy());
    Optional<Duration> attempt = policy.attemptTimeout();
    if (attempt.isPresent()) {
      return new BodyCapture.Bound(attempt.get(), "the retry policy's attemptTimeout");
    }
    return new BodyCapture.Bound(policy.deadline(), "the retry policy's deadline");
  }

  private static byte[] awaitCapture(CompletableFuture<byte[]> capture) throws IOException, InterruptedException {
    try {
      return capture.get();
    } catch (ExecutionException e) {
      throw Settling.asIOException(e);
    }
  }

  /** Widens a future of a subtype, passing cancellation back to the source. */
  public static <T> CompletableFuture<HttpResponse<T>> widen(CompletableFuture<IdempotentHttpResponse<T>> source) {
    CompletableFuture<HttpResponse<T>> out = new CompletableFuture<>();
    source.whenComplete((r, e) -> {
      if (e != null) {
        out.completeExceptionally(Settling.unwrap(e));
      } else {
        out.complete(r);
      }
    });
    out.whenComplete((r, e) -> {
      if (out.isCancelled()) {
        source.cancel(false);
      }
    });
    return out;
  }
}
