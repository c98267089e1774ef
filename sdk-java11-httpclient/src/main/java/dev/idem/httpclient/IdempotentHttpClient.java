package dev.idem.httpclient;

import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.Operation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.http.UntaggedRequestException;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.adapter.AdapterBuilder;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.httpclient.internal.CallEngine;
import dev.idem.httpclient.internal.KeyedClient;
import dev.idem.httpclient.internal.OperationFactory;
import dev.idem.httpclient.internal.Lifecycle;
import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandler;
import java.net.http.HttpResponse.PushPromiseHandler;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * A {@link HttpClient} that sends non-idempotent calls with one durable idempotency key per
 * logical operation. It wraps a client you built and delegates everything to it; only keyed calls
 * behave differently.
 *
 * <pre>{@code
 * IdempotentHttpClient client = IdempotentHttpClient.create(JdbcJournal.openEmbedded(dir));
 * HttpResponse<String> r = client.operation("create-order").send(request, BodyHandlers.ofString());
 *
 * // Queued: journaled now, delivered by an outbox that registered client.resumeTransport().
 * OperationId id = client.operation("create-order").enqueue(request);
 * }</pre>
 *
 * <p>{@link #builder(HttpClient)} gives full control (executor, key header, untagged policy, body
 * limit); {@link #create(Journal)} is the same with every default.
 *
 * <p>A keyed call ({@link #operation(String)}, or an untagged POST/PATCH under
 * {@link UntaggedPolicy#FRESH_KEY}):
 * <ul>
 *   <li>reads the request's body publisher once, and journals the operation before the first byte
 *       is sent (a publisher that publishes fewer or more bytes than its {@code contentLength()}
 *       declares is refused first with an {@code IOException}, as the JDK client refuses it);</li>
 *   <li>sends every attempt with the same key header and the same bytes, retrying as the
 *       executor's policy and classifier decide (a refused or timed-out connect counts as not
 *       sent, so it ends FAILED, never UNCERTAIN);</li>
 *   <li>returns an {@link IdempotentHttpResponse} with the final attempt's real status, headers,
 *       request and version, the body from your handler, and {@link IdempotentHttpResponse#replayed()};</li>
 *   <li>returns the server's response for a FAILED operation too (a permanent 4xx, or 5xx after
 *       the attempts ran out with nothing ambiguous), as HttpClient does, except the server's
 *       "key reused" (422 by default: {@link dev.idem.core.IdempotencyKeyReusedException}, on this
 *       call and on every later one that finds it in the journal) and "key missing" (400 by
 *       default: a configuration error, {@link dev.idem.core.OperationFailedException}), which
 *       throw; the executor's {@link dev.idem.core.ProtocolStatuses} says which statuses those are;</li>
 *   <li>throws {@link dev.idem.core.OperationUncertainException} when it may have taken effect and
 *       no response said so; it never reports failure in that case.</li>
 * </ul>
 * Plain {@link #send} and {@link #sendAsync} pass GET, PUT, DELETE and every other method through
 * untouched; what they do with an untagged POST or PATCH is the {@link UntaggedPolicy}, by default
 * {@link UntaggedPolicy#PASS_THROUGH}. A push-promise handler is ignored for keyed calls. Under
 * {@link UntaggedPolicy#FRESH_KEY}, an untagged POST or PATCH whose form body
 * ({@code application/x-www-form-urlencoded}, read as a keyed call's body is, bounded) holds a
 * credential field ({@code client_secret=}, {@code password=}: an OAuth token call) goes out once
 * through the wrapped client, unjournaled and without a key, as under {@code PASS_THROUGH}: the
 * journal never holds the credential.
 *
 * <h2>Closing</h2>
 * {@link #close()} closes only what this client made: the executor made by {@link #create} or by a
 * builder given no {@link Builder#idempotentExecutor}, and the {@code HttpClient} made by
 * {@link #create(Journal)} and the twin keyed attempts may go through (below) (on Java 21 and
 * later, where a client can be closed). The journal, an
 * executor given to {@link Builder#idempotentExecutor}, and an {@code HttpClient} given to
 * {@link #create(HttpClient, Journal)} or {@link #builder(HttpClient)} stay the app's, never
 * closed here. Keyed calls in progress end PENDING with their keys when close ends what they go
 * through (the executor, or the twin: see {@link #close()}); they are never left to a closed
 * client that would refuse their attempts and end them FAILED. Close in this order: an
 * {@link dev.idem.core.outbox.OutboxDispatcher}, then this client, then the journal.
 *
 * <p>{@link #shutdown()} and {@link #shutdownNow()} (Java 21's {@code HttpClient} lifecycle) stop
 * the wrapped client whoever made it; they first end this client's keyed calls in progress
 * PENDING with their keys, as closing the executor does, rather than let the shut-down client's
 * refusals use up their attempts and end them FAILED. {@link #awaitTermination(Duration)} and
 * {@link #isTerminated()} then answer for this whole client: its keyed calls, the wrapped client
 * and the twin keyed attempts may go through; wait for them before closing the journal.
 *
 * <pre>{@code
 * try (JdbcJournal journal = JdbcJournal.openEmbedded(dir);
 *      IdempotentHttpClient client = IdempotentHttpClient.create(journal)) {
 *   client.operation("create-order").send(request, BodyHandlers.ofString());
 * }
 * }</pre>
 *
 * <h2>Every request on the wire is a journaled attempt</h2>
 * A keyed attempt is exactly one request: the JDK client's own follow-ups are kept off it, so the
 * journal has one attempt for each request the server got.
 * <ul>
 *   <li>A redirect of a keyed request is never followed, whatever the wrapped client's
 *       {@link HttpClient.Redirect} policy: the 3xx is the attempt's answer, and the caller gets it
 *       with its {@code Location}. 307 and 308 ask for the same request at another URL, so the
 *       server did not act on it: permanent, the operation ends FAILED (UNCERTAIN if an earlier
 *       attempt was ambiguous) and the call returns the 3xx, as HttpClient returns a redirect it
 *       does not follow. 301, 302 and 303 tell the client to GET another URL, which is how a
 *       server may answer a POST it has processed (Post/Redirect/Get): the effect may exist, so
 *       the attempt is ambiguous, retried with the same key, and the operation never ends FAILED
 *       on them. A classifier of the app's own can say otherwise for its API.</li>
 *   <li>The wrapped client's {@link Authenticator} does not answer a server's 401 for a keyed
 *       request (the 401 is the attempt's answer; set credentials as a header); it still answers
 *       a proxy's 407, which means the request did not reach the server.</li>
 * </ul>
 * A wrapped client with {@code Redirect.NEVER} (the JDK's default) and no authenticator sends
 * keyed attempts itself. One that follows redirects or has an authenticator sends only the calls
 * Idem passes through, with its policy intact; keyed attempts go through a twin built once from
 * its settings (version, connect timeout, proxy, TLS context and parameters, cookie handler,
 * executor), with {@code Redirect.NEVER} and the authenticator for proxies only. The JDK has no
 * getter for a local address or a stream priority: the twin has the defaults. A wrapped client
 * that is not the JDK's own implementation (a decorator) must then not follow redirects or
 * authenticate, or the builder refuses it.
 *
 * <h2>Timeouts</h2>
 * Before anything is journaled, Idem reads the request's body publisher whole. That read is
 * bounded by the request's {@code timeout} (which in HttpClient covers body publishing too),
 * else by the retry policy's {@code attemptTimeout}, else by its {@code deadline} (60 s by
 * default): so a keyed call never waits forever for a publisher that stalls, where HttpClient
 * without a timeout would. Past it the call fails with {@link java.net.http.HttpTimeoutException}
 * (the future of {@code sendAsync} on time; the publisher's subscription cancelled), and the
 * operation never began: nothing was journaled or sent. What the app chains on that failed
 * {@code sendAsync} future runs on the default async pool (as with HttpClient's own
 * {@code sendAsync}). The publisher's {@code Subscription.cancel} runs after the call has failed,
 * on at most {@code max(2, processors)} daemon threads per client ({@code idem-httpclient-body-*}):
 * a cancel that blocks delays only other calls' cancels, never a call. A publisher that blocks its thread as it
 * is subscribed to ({@code BodyPublishers.ofInputStream} reads the stream there) holds the calling
 * thread of {@code send} until that read returns, and fails it then.
 *
 * <p>The request's {@code timeout} bounds each attempt until its headers (as in HttpClient). Once the
 * status line and headers have arrived, the attempt is answered and its outcome comes from them:
 * the small body Idem reads for the journal is read for at most that timeout again, in all, and
 * stops before the retry policy's {@code attemptTimeout}; a body not arrived by then is not kept
 * in the journal, never makes the attempt "no response" (a 2xx is SUCCEEDED and never sent
 * again), and goes on to the caller's body handler as it arrives.
 *
 * <p>That timeout does not bound the whole call, nor cut short a backoff between attempts (a
 * server's {@code Retry-After}, up to the retry policy's {@code maxDelay}); the retry policy's
 * {@code deadline} bounds the call (a backoff that would end past it is not begun). A backoff
 * under way ends at once when the caller's thread is interrupted ({@code send} throws
 * {@link InterruptedException}, the operation PENDING with its key), when a {@code sendAsync}
 * future is cancelled (the same PENDING end), or when this client stops its keyed calls
 * ({@link #shutdown()}, {@link #shutdownNow()}, and {@link #close()} as it says; on every Java
 * version).
 *
 * <p>Thread-safe, like the client it wraps.
 */
public final class IdempotentHttpClient extends HttpClient implements AutoCloseable {
  /** The default key header name. */
  public static final String DEFAULT_KEY_HEADER = AdapterSupport.DEFAULT_KEY_HEADER;

  private final HttpClient delegate;
  private final IdempotentExecutor executor;
  private final AdapterSupport support;
  private final KeyedClient keyed;
  private final CallEngine engine;
  /** Made here, and so closed by {@link #close()}; see "Closing" in the class comment. */
  private final boolean ownsExecutor;
  private final boolean ownsDelegate;

  private IdempotentHttpClient(Builder b, IdempotentExecutor executor, AdapterSupport support, long maxBodyBytes) {
    this.delegate = b.delegate;
    this.keyed = KeyedClient.of(delegate);
    this.executor = executor;
    this.ownsExecutor = b.executor == null || b.ownsExecutor;
    this.ownsDelegate = b.ownsDelegate;
    this.support = support;
    this.engine = new CallEngine(delegate, keyed, support, maxBodyBytes);
  }

  /**
   * A ready client with shippable defaults over {@code journal}: {@code HttpClient.newHttpClient()}
   * underneath, an executor with its default retry policy (5 attempts within a 60 s deadline,
   * jittered exponential backoff), classifier and protocol statuses, the key in
   * {@code Idempotency-Key} (bare), untagged POST and PATCH passed through, bodies up to 1 MiB (and
   * up to the journal's own limit: 512 KiB for {@code JdbcJournal} by default). That client follows no redirect and has no
   * authenticator, so every request on the wire is a journaled attempt.
   *
   * @param journal where operations are journaled before the first byte, such as
   *     {@code JdbcJournal.openEmbedded(dir)} from {@code idem-persistence}; it stays the app's
   * @return the client; {@link #close()} closes its executor and its {@code HttpClient}, not the journal
   * @throws NullPointerException if {@code journal} is null
   */
  public static IdempotentHttpClient create(Journal journal) {
    Objects.requireNonNull(journal, "journal");
    Builder b = builder(HttpClient.newHttpClient()).idempotentExecutor(IdempotentExecutor.builder().journal(journal)
        .build());
    b.ownsExecutor = true;
    b.ownsDelegate = true;
    return b.build();
  }

  /**
   * {@link #create(Journal)} over a client the app configured (timeouts, proxy, TLS, executor).
   *
   * @param delegate the client that sends each attempt; it stays the app's
   * @param journal where operations are journaled; it stays the app's
   * @return the client; {@link #close()} closes the executor made here, neither argument
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code delegate} is already an {@link IdempotentHttpClient}
   */
  public static IdempotentHttpClient create(HttpClient delegate, Journal journal) {
    Objects.requireNonNull(journal, "journal");
    Builder b = builder(delegate).idempotentExecutor(IdempotentExecutor.builder().journal(journal).build());
    b.ownsExecutor = true;
    return b.build();
  }

  /**
   * Starts a decorator of {@code delegate}, which keeps its own configuration (timeouts, proxy,
   * TLS, redirects, executor); keyed attempts never follow redirects or answer a server's
   * authentication challenge (see "Every request on the wire is a journaled attempt").
   *
   * @param delegate the client that sends each attempt
   * @return a builder
   * @throws IllegalArgumentException if {@code delegate} is already an {@link IdempotentHttpClient},
   *     or is not the JDK's own implementation and follows redirects or has an authenticator
   */
  public static Builder builder(HttpClient delegate) {
    return new Builder(delegate);
  }

  /**
   * Starts one logical operation named {@code name} (such as {@code create-order}), to configure
   * and send. Build one per logical operation and send it again to retry it yourself.
   *
   * @param name the operation name, 1 to 200 characters
   * @return the operation's call, to configure and send
   */
  public OperationCall operation(String name) {
    return new OperationCall(engine, name);
  }

  /**
   * A transport for operations journaled by an earlier process, which have no secrets in their
   * snapshot: {@code headers} supplies them (for example a fresh Authorization) for each attempt.
   *
   * <p>Every attempt is bounded: by the timeout its request was sent or queued with, else by
   * {@code timeout}, else by the retry policy's {@code attemptTimeout}, else by 30 s (see
   * "Timeouts" in {@link ResumeTransport}).
   *
   * @return the transport
   * @param headers returns headers to add to a journaled request; called once per attempt
   * @param timeout the response timeout of each attempt whose request had none, or null for the
   *     retry policy's {@code attemptTimeout}, else 30 s
   */
  public ResumeTransport resumeTransport(Function<RequestSnapshot, Map<String, String>> headers, Duration timeout) {
    return newResumeTransport(headers, timeout);
  }

  /**
   * A transport that sends journaled operations as they are, for an
   * {@link dev.idem.core.outbox.OutboxDispatcher} registration: {@code register("create-order",
   * client.resumeTransport())}. Use {@link #resumeTransport(Function, Duration)} when the calls need
   * headers the journal does not keep (Authorization and other secrets).
   *
   * @return the transport, with no extra headers; each attempt is bounded by its request's timeout,
   *     else the retry policy's {@code attemptTimeout}, else 30 s (see "Timeouts" in
   *     {@link ResumeTransport})
   */
  public ResumeTransport resumeTransport() {
    return newResumeTransport(r -> Map.of(), null);
  }

  private ResumeTransport newResumeTransport(Function<RequestSnapshot, Map<String, String>> headers, Duration timeout) {
    return new ResumeTransport(keyed, executor.retryPolicy().attemptTimeout().orElse(null), support,
        Objects.requireNonNull(headers, "headers"), timeout);
  }

  /**
   * The Idem executor that journals and drives keyed calls (named so as not to clash with
   * {@link HttpClient#executor()}, the wrapped client's thread pool).
   *
   * @return the Idem executor that journals and drives keyed calls (named so as not to clash with {@link HttpClient#executor()}, the wrapped client's thread pool)
   */
  public IdempotentExecutor idempotentExecutor() {
    return executor;
  }

  /**
   * The wrapped client.
   *
   * @return the wrapped client
   */
  public HttpClient delegate() {
    return delegate;
  }

  /**
   * Sends as {@link HttpClient#send} does; an untagged POST or PATCH is handled by the
   * {@link UntaggedPolicy}, and a keyed call behaves as {@link OperationCall#send}.
   *
   * @throws UntaggedRequestException an untagged POST or PATCH under {@link UntaggedPolicy#REJECT};
   *     nothing was sent
   */
  @Override
  public <T> HttpResponse<T> send(HttpRequest request, BodyHandler<T> handler) throws IOException, InterruptedException {
    Optional<String> name = support.untaggedOperationName(request.method(), target(request));
    if (name.isEmpty()) {
      return delegate.send(request, handler);
    }
    return engine.sendUntagged(request, handler, untagged(name.get()));
  }

  /**
   * As {@link #send}, without blocking; see {@link OperationCall#sendAsync}. Under
   * {@link UntaggedPolicy#REJECT} the future fails with {@link UntaggedRequestException}.
   */
  @Override
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, BodyHandler<T> handler) {
    return sendAsync(request, handler, () -> delegate.sendAsync(request, handler), r -> delegate.sendAsync(r, handler));
  }

  /** As {@link #sendAsync(HttpRequest, BodyHandler)}; push promises reach the handler only for calls passed through. */
  @Override
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, BodyHandler<T> handler,
      PushPromiseHandler<T> pushPromiseHandler) {
    return sendAsync(request, handler, () -> delegate.sendAsync(request, handler, pushPromiseHandler),
        r -> delegate.sendAsync(r, handler, pushPromiseHandler));
  }

  /** An untagged call: journaled if its method is, else {@code passThrough}; REJECT fails the future. */
  private <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, BodyHandler<T> handler,
      Supplier<CompletableFuture<HttpResponse<T>>> passThrough,
      Function<HttpRequest, CompletableFuture<HttpResponse<T>>> unjournaled) {
    Optional<String> name;
    try {
      name = support.untaggedOperationName(request.method(), target(request));
    } catch (UntaggedRequestException e) {
      return CompletableFuture.failedFuture(e);
    }
    if (name.isEmpty()) {
      return passThrough.get();
    }
    return engine.sendAsyncUntagged(request, handler, untagged(name.get()), unjournaled);
  }

  // The path only: a query string may carry what the app considers secret.
  private static String target(HttpRequest request) {
    return request.uri().getRawPath();
  }

  private OperationFactory untagged(String name) {
    return (snapshot, keyHeaderValues) -> {
      Operation.Builder b = Operation.builder(name, snapshot);
      IdempotencyKey key = support.keyFor(keyHeaderValues, null);
      if (key != null) {
        b.key(key);
      }
      return b.build();
    };
  }

  @Override
  public Optional<CookieHandler> cookieHandler() {
    return delegate.cookieHandler();
  }

  @Override
  public Optional<Duration> connectTimeout() {
    return delegate.connectTimeout();
  }

  @Override
  public Redirect followRedirects() {
    return delegate.followRedirects();
  }

  @Override
  public Optional<ProxySelector> proxy() {
    return delegate.proxy();
  }

  @Override
  public SSLContext sslContext() {
    return delegate.sslContext();
  }

  @Override
  public SSLParameters sslParameters() {
    return delegate.sslParameters();
  }

  @Override
  public Optional<Authenticator> authenticator() {
    return delegate.authenticator();
  }

  @Override
  public Version version() {
    return delegate.version();
  }

  @Override
  public Optional<Executor> executor() {
    return delegate.executor();
  }

  @Override
  public WebSocket.Builder newWebSocketBuilder() {
    return delegate.newWebSocketBuilder();
  }

  // Java 21 added these to HttpClient; declared here (without @Override, as this compiles for 17),
  // they override on 21+ and forward to the wrapped client, and do nothing on 17.

  /**
   * Stops this client's keyed calls, then forwards {@code shutdown()} to the wrapped client (and to
   * the twin keyed calls go through, if there is one) on Java 21+; before Java 21, HttpClient has
   * no shutdown, and only the keyed calls are stopped.
   *
   * <p>A keyed call is one operation of several attempts; the wrapped client, once shut down,
   * refuses every later attempt, and an operation refused until its attempts ran out would end
   * FAILED for good although its target never refused it. So, as when the executor closes, the
   * process stopping is the caller stopping, and its calls end PENDING with their keys, for a
   * resume or an {@link dev.idem.core.outbox.OutboxDispatcher}, without using up their attempts:
   * <ul>
   *   <li>an asynchronous call not yet settled ends at once with
   *       {@link dev.idem.core.OperationPendingException}: one waiting out a backoff sends nothing
   *       more (one whose future the caller completed itself, by {@code orTimeout} say, and which
   *       went on in the background, too); an attempt on the wire runs to completion, as the wrapped client lets submitted
   *       requests do, and is recorded as ambiguous (its answer reaches no caller);</li>
   *   <li>a blocking {@code send} waiting out a backoff is woken at once (a server's
   *       {@code Retry-After: 60} is not waited out) and ends with
   *       {@link dev.idem.core.OperationPendingException}, sending nothing more; one with an
   *       attempt on the wire ends so once that attempt is over, before its next;</li>
   *   <li>a call that settled already (its body handler still reading) is left to finish;</li>
   *   <li>a keyed call made after this fails with an {@link IOException}, nothing journaled or
   *       sent, as the JDK client refuses a request after its shutdown.</li>
   * </ul>
   * Why a backoff is cut short here, and not only by {@link #shutdownNow()}: the JDK's
   * {@code shutdown()} lets the exchanges in progress finish, and a retry not yet sent is no
   * exchange in progress: it is one the shut-down client would refuse, so waiting out its backoff
   * would only hold the caller's thread, and {@link #awaitTermination(Duration)}, for the same
   * PENDING end. The thread is woken with an interrupt only while it waits out the backoff (never
   * while it sends or writes the journal), and that interrupt is cleared before {@code send}
   * returns. Calls passed through (not keyed) are the wrapped client's to finish or refuse. Resumed and
   * queued deliveries through {@link #resumeTransport} are not stopped here: stop their
   * {@link dev.idem.core.outbox.OutboxDispatcher} first. A twin built after this (by such a
   * delivery) is shut down as it is built, so it refuses as the wrapped client does. Then
   * {@link #awaitTermination(Duration)} waits for all of it.
   */
  public void shutdown() {
    engine.shutdown();
    Lifecycle.call(delegate, "shutdown");
    keyed.stop("shutdown");
  }

  /**
   * Stops this client's keyed calls as {@link #shutdown()} does, then forwards {@code shutdownNow()}
   * to the wrapped client (and to the twin keyed calls go through, if there is one) on Java 21+,
   * which also aborts the attempts on the wire (recorded as ambiguous; the operations PENDING) and
   * the bodies still being read. A twin built after this is stopped as it is built. A blocking
   * {@code send} waiting out a backoff is woken at once and ends PENDING, as after
   * {@link #shutdown()}.
   */
  public void shutdownNow() {
    engine.shutdown();
    Lifecycle.call(delegate, "shutdownNow");
    keyed.stop("shutdownNow");
  }

  /**
   * Waits until this client has terminated (see {@link #isTerminated()}) after {@link #shutdown()}
   * or {@link #shutdownNow()}, on Java 21+: until this client's keyed calls in progress have
   * ended, then the wrapped client's operations, then the twin's, within {@code duration} in all.
   * The app's client alone may be idle while a keyed exchange still runs on the twin, or a
   * blocking keyed {@code send} that the shutdown woke from its backoff is still writing its
   * PENDING end: both are this client's operations, and their ends are still to be written to
   * the journal. Before Java 21 it returns false at once, as HttpClient has no lifecycle there.
   *
   * <p>Wait here before closing the journal. Calls passed through are the wrapped client's, and
   * count as its operations do. Thread-safe.
   *
   * @param duration how long to wait at most; zero or negative does not wait
   * @return true if this client terminated; false if the time ran out first (the wrapped client
   *     never shut down, say), or before Java 21
   * @throws InterruptedException if interrupted while waiting
   * @throws NullPointerException if {@code duration} is null
   */
  public boolean awaitTermination(Duration duration) throws InterruptedException {
    Objects.requireNonNull(duration, "duration");
    if (!Lifecycle.supported()) {
      return false;
    }
    long deadline = System.nanoTime() + saturatedNanos(duration);
    return engine.awaitCalls(deadline)
        && Boolean.TRUE.equals(Lifecycle.call(delegate, "awaitTermination", Lifecycle.durationParam(), left(deadline)))
        && keyed.awaitTermination(left(deadline));
  }

  /**
   * Whether this client has terminated, on Java 21+: it was shut down ({@link #shutdown()},
   * {@link #shutdownNow()}), and no keyed call is in progress, the wrapped client has terminated
   * (as its own {@code isTerminated()} says), and so has the twin keyed attempts go through, if
   * one was built (see "Every request on the wire is a journaled attempt" in the class comment).
   * Before Java 21 it returns false, as HttpClient has no lifecycle there. Thread-safe.
   *
   * @return true once all three have ended; false before Java 21
   */
  public boolean isTerminated() {
    // The keyed calls first: after the shutdown none starts, and those in progress go through
    // the two clients, which are asked after them.
    return Lifecycle.supported() && !engine.hasCallsInProgress()
        && Boolean.TRUE.equals(Lifecycle.call(delegate, "isTerminated")) && keyed.isTerminated();
  }

  // Long.MAX_VALUE / 2 nanoseconds is 146 years: a deadline that never comes, with no overflow
  // in nanoTime arithmetic.
  private static long saturatedNanos(Duration d) {
    if (d.isNegative()) {
      return 0;
    }
    return d.compareTo(Duration.ofNanos(Long.MAX_VALUE / 2)) > 0 ? Long.MAX_VALUE / 2 : d.toNanos();
  }

  private static Duration left(long deadline) {
    return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
  }

  /**
   * Closes what this client made, and nothing else (see "Closing" in the class comment): the
   * executor it made, as {@link IdempotentExecutor#close()} does (asynchronous calls in progress end
   * PENDING with their keys; later keyed calls fail with {@link IllegalStateException}), then the
   * twin keyed attempts go through, if there is one, and the {@code HttpClient} made by
   * {@link #create(Journal)}, on Java 21 and later. An executor or an {@code HttpClient} the app
   * passed in, and the journal, are left open. Idempotent. (Unlike {@link #shutdown()} and
   * {@link #shutdownNow()}, which forward to the wrapped client whoever made it, as an explicit
   * request to stop it.)
   *
   * <p>With a twin (the wrapped client follows redirects or has an authenticator) and an executor
   * the app passed in, which stays open, this first stops the keyed calls as {@link #shutdown()}
   * does, on every Java version: the closed twin would refuse the remaining attempts of a call
   * waiting out a backoff and end it FAILED for good. So an asynchronous call not yet settled
   * fails at once with {@link dev.idem.core.OperationPendingException}, a blocking {@code send}
   * ends with it where it would send its next attempt (woken from a backoff it is waiting out, as
   * by {@link #shutdown()}), both PENDING with their keys, and a keyed
   * call made after this fails with an {@link IOException}, nothing journaled or sent. A twin
   * built after this (by a resume through {@link #resumeTransport}) is closed as it is built, so
   * nothing goes out through it. Without a twin, a client over the app's executor and
   * {@code HttpClient} closes nothing its keyed calls use, and they go on.
   *
   * <p>This wakes a blocking keyed {@code send} waiting out a backoff whenever it stops the keyed
   * calls (closing the executor it made does the same), but does not wait for that call to
   * return, unless it closes the executor, which waits for it; nor for the app's
   * {@code HttpClient}, which it leaves open. After {@link #shutdown()},
   * {@link #awaitTermination(Duration)} waits for both.
   */
  @Override
  public void close() {
    if (ownsExecutor) {
      executor.close(); // ends the keyed calls PENDING itself, and refuses later ones
    } else if (keyed.usesTwin()) {
      // The twin closed below would refuse every remaining attempt of a call waiting out a
      // backoff, counted as not sent until the attempts ran out: FAILED for good, although the
      // target only asked for a retry. The app's executor stays open, so stop the calls here.
      engine.shutdown();
    }
    // The twin that keyed attempts go through is always this client's own: it made it. One
    // built later (by a resume) is closed as it is built.
    keyed.stop("close");
    if (ownsDelegate) {
      Lifecycle.call(delegate, "close");
    }
  }

  /**
   * Builds an {@link IdempotentHttpClient}. The untagged policy applies to plain {@code send} and
   * {@code sendAsync}; its default is {@link UntaggedPolicy#PASS_THROUGH}, and under
   * {@code FRESH_KEY} register resume transports under {@code untagged-post} and
   * {@code untagged-patch}. Not thread-safe.
   */
  public static final class Builder extends AdapterBuilder<Builder> {
    private final HttpClient delegate;
    private IdempotentExecutor executor;
    private boolean ownsExecutor;  // set by create(): the executor given was made there
    private boolean ownsDelegate;  // set by create(Journal): the HttpClient was made there

    private Builder(HttpClient delegate) {
      super(UntaggedPolicy.PASS_THROUGH);
      this.delegate = Objects.requireNonNull(delegate, "delegate");
      if (delegate instanceof IdempotentHttpClient) {
        throw new IllegalArgumentException("the delegate is already an IdempotentHttpClient; wrapping it twice"
            + " would send two keys");
      }
      KeyedClient.check(delegate);
    }

    /**
     * The executor (journal, retry policy, classifier, clocks); default
     * {@code IdempotentExecutor.builder().build()}, whose in-memory journal does not survive a
     * restart, made here and closed by {@link IdempotentHttpClient#close()}.
     *
     * @param executor the executor; it stays the app's, and {@link IdempotentHttpClient#close()}
     *     leaves it open
     * @return this builder
     */
    public Builder idempotentExecutor(IdempotentExecutor executor) {
      this.executor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * Builds the decorator.
     *
     * @return the decorator
     */
    public IdempotentHttpClient build() {
      IdempotentExecutor made = executor != null ? executor : IdempotentExecutor.builder().build();
      return new IdempotentHttpClient(this, made, support(made), bodyCap());
    }
  }
}
