package dev.idem.okhttp;

import dev.idem.core.http.UntaggedPolicy;
import dev.idem.core.http.KeyHeaderFormat;
import dev.idem.core.spi.AsyncTransport;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.spi.Transport;
import dev.idem.core.IdempotencyException;
import dev.idem.core.OperationId;
import dev.idem.core.spi.Journal;
import dev.idem.core.spi.adapter.AdapterSupport;
import dev.idem.okhttp.internal.ClientTransport;
import dev.idem.okhttp.internal.FollowUpGuard;
import dev.idem.okhttp.internal.IdemCallFactory;
import dev.idem.okhttp.internal.IdempotencyInterceptor;
import dev.idem.okhttp.internal.PreparedCall;
import java.io.IOException;
import java.util.Objects;
import okhttp3.Call;
import okhttp3.Interceptor;
import okhttp3.OkHttpClient;
import okhttp3.Request;

/**
 * Idem for OkHttp (and so for Retrofit): an application interceptor that runs every request tagged
 * with an {@link IdempotentOperation} as one logical operation, journaled before the first byte,
 * retried with the same key, and transports that resume journaled operations through the app's own
 * client after a restart.
 *
 * <pre>{@code
 * JdbcJournal journal = JdbcJournal.openEmbedded(dir);
 * IdemOkHttp idem = IdemOkHttp.create(journal);
 * OkHttpClient client = idem.install(new OkHttpClient.Builder())  // before the interceptor adding Authorization
 *     .addInterceptor(authInterceptor)
 *     .build();
 * Request request = new Request.Builder().url(url).post(body)
 *     .tag(IdempotentOperation.class, IdempotentOperation.of("create-order"))
 *     .build();
 * try (Response response = client.newCall(request).execute()) { ... }
 *
 * // Who delivers what a call leaves PENDING (and what a crash left behind): start one dispatcher.
 * OutboxDispatcher outbox = OutboxDispatcher.builder(idem.executor())
 *     .register("create-order", idem.transport(client))
 *     .build()
 *     .start();
 * OperationId queued = idem.enqueue(request);   // journaled now, delivered by the outbox
 *
 * // When the app stops: the dispatcher, the adapter (its executor), then the journal.
 * outbox.close();
 * idem.close();
 * journal.close();
 * }</pre>
 *
 * <p>{@link #builder(IdempotentExecutor)} gives full control (retry policy, classifier, key header
 * name and format, untagged policy); {@link #create(Journal)} is the same with every default.
 *
 * <h2>What a call returns</h2>
 * <ul>
 *   <li>SUCCEEDED: the server's response, possibly a replay; see {@link IdempotencyResult#of}.</li>
 *   <li>FAILED with a response (a permanent 4xx, or 5xx until attempts ran out with no ambiguity):
 *       that response, as OkHttp would have returned it; Retrofit maps it to an error response.
 *       {@link IdempotencyResult#fromJournal()} says whether this call sent anything.</li>
 *   <li>FAILED because the server says the key is missing (400 by default): a thrown
 *       {@link dev.idem.core.OperationFailedException}, since that is a configuration error.</li>
 *   <li>Key reused with another body (found locally, or the server's "key reused" answer, 422 by
 *       default, 417 or 409 with {@link dev.idem.core.ProtocolStatuses}): a thrown
 *       {@link dev.idem.core.IdempotencyKeyReusedException}, on this call and on every later call
 *       of the same operation.</li>
 *   <li>UNCERTAIN: a thrown {@link dev.idem.core.OperationUncertainException}; the effect may exist.</li>
 *   <li>Still PENDING (call canceled or its call timeout elapsed, thread interrupted, the host's
 *       circuit breaker open past the call's deadline, or its retry budget empty):
 *       a thrown {@link dev.idem.core.OperationPendingException} (after a call timeout, OkHttp
 *       throws its own {@code InterruptedIOException("timeout")} instead, with that exception as its
 *       cause). The operation keeps its key in the
 *       journal; an {@link dev.idem.core.outbox.OutboxDispatcher} registered with
 *       {@link #transport(OkHttpClient)} for its name delivers it (see the example below).</li>
 *   <li>A one-shot or duplex body: a thrown {@link UnreplayableBodyException}; nothing was sent.</li>
 *   <li>A body that writes fewer or more bytes than its {@code contentLength()} declares: a thrown
 *       {@link java.net.ProtocolException}, as from OkHttp alone; nothing was journaled or sent.</li>
 *   <li>An untagged POST or PATCH under {@link UntaggedPolicy#REJECT}: a thrown
 *       {@link dev.idem.core.http.UntaggedRequestException}; nothing was sent.</li>
 *   <li>A key header on the request that differs from the key given with
 *       {@link IdempotentOperation#withKey}: a thrown {@link dev.idem.core.IdempotencyException};
 *       nothing was sent. Without {@code withKey}, the header's key is the operation's key.</li>
 * </ul>
 * All of them are IOExceptions, so they take the path OkHttp callers already handle. A request
 * refused before anything is journaled or sent because it is malformed (an invalid header, a
 * credential in the URI, a body larger than {@link Builder#maxBodyBytes}) throws an
 * IllegalArgumentException instead, as a caller's bug;
 * {@link #callFactory} calls report it to {@code enqueue} callbacks as an IdempotencyException.
 *
 * <h2>Every request on the wire is a journaled attempt</h2>
 * OkHttp sends requests of its own below every application interceptor: it repeats a request whose
 * connection broke ({@code retryOnConnectionFailure}), one answered 408 or 421, or 503 with
 * {@code Retry-After: 0}; it re-sends to an {@code Authenticator}'s credentials; it follows
 * redirects. For a keyed request (tagged, or keyed by the {@link UntaggedPolicy}) none of that
 * happens: each attempt is exactly one request, and the journal has one attempt for each request
 * the server got. The rule:
 * <ul>
 *   <li>Repeats and re-sends are not made: the attempt's answer (a 408, 421 or 503, a 401) is the
 *       answer, and Idem's classifier and retry policy decide, with the same key. The
 *       {@code Authenticator} is not consulted for keyed requests: set credentials in an
 *       interceptor added after {@link #install}, which runs on every attempt.</li>
 *   <li>A redirect of a keyed request is never followed: the 3xx is the attempt's answer, and the
 *       caller gets it with its {@code Location}. 307 and 308 ask for the same request at another
 *       URL, so the server did not act on it: permanent, the operation ends FAILED (UNCERTAIN if
 *       an earlier attempt was ambiguous) and the call returns the 3xx, as OkHttp returns a
 *       redirect it does not follow. 301, 302 and 303 tell the client to GET another URL, which is
 *       how a server may answer a POST it has processed (Post/Redirect/Get): the effect may exist,
 *       so the attempt is ambiguous, retried with the same key (a server that stored its answer
 *       replays it), and the operation never ends FAILED on them. A classifier of the app's own
 *       can say otherwise for its API.</li>
 * </ul>
 * {@link #install} is required for that: it adds a network interceptor that stops every follow-up
 * of a keyed attempt before it reaches the network. {@link #callFactory} and {@link #transport}
 * add it to their copy of a client that lacks it. The interceptor alone only marks the attempt's
 * body one-shot, which OkHttp never sends twice (a logging interceptor below Idem therefore prints
 * "one-shot body omitted" for keyed requests); that does not stop a 301, 302 or 303 followed with
 * a bodyless GET, nor any follow-up once an interceptor below Idem replaces the body (signing,
 * gzip). A follow-up OkHttp sent anyway is out: Idem does not take its answer as the attempt's,
 * and counts the attempt as ambiguous, so the operation never ends SUCCEEDED or FAILED on a
 * request the journal does not know. Calls Idem passes through keep OkHttp's behaviour.
 *
 * <h2>Threads and timeouts</h2>
 * The interceptor retries synchronously on the calling thread; {@code Call.enqueue} runs application
 * interceptors on OkHttp's dispatcher threads, so asynchronous calls are covered too (a dispatcher
 * thread then waits out the backoff, holding a per-host slot; {@link #callFactory(OkHttpClient)}
 * makes calls whose {@code enqueue} waits on the executor's scheduler instead). OkHttp's
 * {@code callTimeout} and {@code Call.cancel()} end the call, whenever they come: the attempt on
 * the wire is cut, a backoff under way ends at once (a server's {@code Retry-After: 60} under a
 * 2 s call timeout is not waited out: the waiting thread is woken, and never interrupted while it
 * sends or writes the journal, nor left interrupted by Idem; an interrupt of the app's own in that
 * wait is kept, and the call ends as an interrupted one), no further attempt is sent, and the operation
 * stays PENDING with its key, so that a resume, an outbox or the app's own retry of the operation
 * sends that key again. A call that joined a concurrent call of the same operation in this process
 * (a double submit), which sends nothing itself and waits for that one, stops waiting at once; the
 * other call goes on, untouched. The cancel is the call's own: a keyed call that an interceptor
 * makes through the same client on the same thread while this call's attempt is on the wire (a
 * token fetch) is neither cancelled with it nor hurried through its own backoff. The call throws
 * what OkHttp throws for a call timeout, {@code InterruptedIOException("timeout")}, or for a cancel
 * the {@link dev.idem.core.OperationPendingException} listed above. The retry policy's
 * {@code deadline} bounds the retries of calls without a call timeout. Read, write and connect
 * timeouts apply per attempt. Once an attempt's
 * status line and headers have arrived, the attempt is answered and its outcome comes from them: a
 * small body that Idem reads for the journal is read for at most one {@code readTimeout} in all
 * (not per read), and stops before the retry policy's {@code attemptTimeout}; a body that has not
 * arrived by then is not kept in the journal, and never makes the attempt "no response" (a 2xx is
 * SUCCEEDED, and never sent again). The caller gets the response and reads the body on, as it
 * arrives; if a read was still waiting at that point, the connection was cut, and reading on fails
 * as OkHttp's own read timeout would.
 *
 * <h2>Secrets</h2>
 * The executor keeps Authorization, Proxy-Authorization, Cookie and the names given to
 * {@link IdempotentExecutor.Builder#secretHeaders} out of the journal. Live attempts send the app's
 * request with all its headers. Resumed attempts go through the client given to
 * {@link #transport(OkHttpClient)}, whose interceptors add them again.
 *
 * <h2>Closing</h2>
 * {@link #close()} closes only what this adapter made: the executor of {@link #create(Journal)}.
 * An executor given to {@link #builder(IdempotentExecutor)}, the journal, and every OkHttp client
 * stay the app's, never closed here. Close in this order: an
 * {@link dev.idem.core.outbox.OutboxDispatcher}, then the adapter (or the executor), then the journal.
 *
 * <p>Immutable and thread-safe; build one per executor and share it.
 */
public final class IdemOkHttp implements AutoCloseable {
  private final AdapterSupport settings;
  private final IdempotencyInterceptor interceptor;
  /** Whether the executor was made here ({@link #create}), and so is closed here. */
  private final boolean ownsExecutor;

  private IdemOkHttp(AdapterSupport settings, long maxBodyBytes, boolean ownsExecutor) {
    this.settings = settings;
    this.interceptor = new IdempotencyInterceptor(settings, maxBodyBytes);
    this.ownsExecutor = ownsExecutor;
  }

  /**
   * The adapter with shippable defaults over {@code journal}: an executor with its default retry
   * policy (5 attempts within a 60 s deadline, jittered exponential backoff), classifier, protocol
   * statuses and system
   * clock; the key in {@code Idempotency-Key}, bare; untagged POST and PATCH passed through; keyed
   * request bodies up to 1 MiB.
   *
   * @param journal where operations are journaled before the first byte, such as
   *     {@code JdbcJournal.openEmbedded(dir)} from {@code idem-persistence}; it stays the app's
   * @return the adapter; add it to a client with {@link #install(OkHttpClient.Builder)}, and
   *     {@link #close()} it (which closes the executor made here, not the journal)
   * @throws NullPointerException if {@code journal} is null
   */
  public static IdemOkHttp create(Journal journal) {
    Objects.requireNonNull(journal, "journal");
    return builder(IdempotentExecutor.builder().journal(journal).build()).build(true);
  }

  /**
   * Installs the adapter into a client builder: adds {@link #interceptor()} as an application
   * interceptor, and Idem's follow-up guard as the first network interceptor (each once, however
   * often this is called). Together they make every keyed request on the wire a journaled attempt
   * (see "Every request on the wire is a journaled attempt" above): OkHttp's own silent retry,
   * repeats, authenticator re-sends and redirects are kept off keyed attempts, and Idem's own
   * retry (same key, bounded backoff) takes their place. The client's settings are not changed:
   * calls Idem passes through (untagged requests) keep OkHttp's normal behaviour, redirects and
   * {@code retryOnConnectionFailure} included. Interceptors added after this call run below
   * Idem's, on every attempt: add the one that sets Authorization after it. Interceptors added
   * before it run above Idem's: once per call through the interceptor, but once per attempt for
   * {@link #callFactory} and {@link #transport} calls, whose attempts are OkHttp calls of their
   * own. They must not retry: a second {@code proceed} of one attempt is refused with an
   * IOException before it reaches the network, and the attempt counts as ambiguous.
   *
   * <p>An {@code Expect: 100-continue} header on an attempt, wherever it was added (the request,
   * an interceptor below Idem's, a network interceptor added before or after this call), makes
   * the attempt count as sent once it may have reached the network: Idem judges the request
   * OkHttp finally writes (through an event listener it adds to each keyed call), because OkHttp
   * sends such a request's headers, key included, before its body. An interceptor below Idem's that
   * builds a new request instead of {@code newBuilder()} drops Idem's tag, and Idem cannot tell
   * that request's attempt (nor stop its follow-ups).
   *
   * @param builder the app's client builder
   * @return the same builder, for chaining
   * @throws NullPointerException if {@code builder} is null
   */
  public OkHttpClient.Builder install(OkHttpClient.Builder builder) {
    Objects.requireNonNull(builder, "builder");
    if (!builder.interceptors().contains(interceptor)) {
      builder.addInterceptor(interceptor);
    }
    if (!builder.networkInterceptors().contains(FollowUpGuard.INSTANCE)) {
      builder.networkInterceptors().add(0, FollowUpGuard.INSTANCE);
    }
    return builder;
  }

  /**
   * Journals a request tagged with an {@link IdempotentOperation} for queued delivery, without
   * sending it: an {@link dev.idem.core.outbox.OutboxDispatcher} that registered
   * {@link #transport(OkHttpClient)} (or {@link #asyncTransport}) for the operation's name delivers
   * it, now or after a restart, with the same key. Wait for it with
   * {@code outbox.await(id)}. The body is read once here; secrets stay out of the journal, and
   * the transport's client adds them again on delivery.
   *
   * @param request a tagged request with a replayable body
   * @return the operation's identity (an existing one if the same operation was journaled before)
   * @throws IllegalArgumentException if the request has no {@link IdempotentOperation} tag, its body
   *     is larger than {@link Builder#maxBodyBytes}, or it cannot be journaled faithfully (see
   *     {@link IdempotentExecutor})
   * @throws UnreplayableBodyException if the body is one-shot or duplex
   * @throws dev.idem.core.IdempotencyKeyReusedException if the key is journaled with another request
   * @throws IdempotencyException if the request's key header breaks the key-header rule, or the
   *     journal fails
   * @throws java.net.ProtocolException if the body writes fewer or more bytes than its
   *     {@code contentLength()} declares
   * @throws IOException if the body cannot be read
   */
  public OperationId enqueue(Request request) throws IOException {
    IdempotentOperation op = Objects.requireNonNull(request, "request").tag(IdempotentOperation.class);
    if (op == null) {
      throw new IllegalArgumentException("the request has no IdempotentOperation tag; use enqueue(name, request)");
    }
    return settings.executor().enqueue(PreparedCall.of(request, op, settings, interceptor.maxBodyBytes()).operation()).id();
  }

  /**
   * {@link #enqueue(Request)} for a request without a tag, as a new operation named {@code name}
   * with a fresh key (or the key in the request's key header).
   *
   * @param name the operation name; the outbox delivers it through the transport registered for it
   * @param request the request, with a replayable body
   * @return the operation's identity
   * @throws IllegalArgumentException as for {@link #enqueue(Request)}, or if the name is invalid
   * @throws IOException as for {@link #enqueue(Request)}
   */
  public OperationId enqueue(String name, Request request) throws IOException {
    Objects.requireNonNull(request, "request");
    return settings.executor().enqueue(PreparedCall.of(request, IdempotentOperation.of(name), settings,
        interceptor.maxBodyBytes()).operation())
        .id();
  }

  /**
   * Starts a builder with the defaults listed on each setter.
   *
   * @return a builder
   * @param executor runs the operations; its journal, retry policy and classifier apply
   */
  public static Builder builder(IdempotentExecutor executor) {
    return new Builder(executor);
  }

  /**
   * The application interceptor; add it with {@code OkHttpClient.Builder.addInterceptor}, not as a
   * network interceptor (it calls {@code proceed} once per attempt). The same instance serves any
   * number of clients. Use {@link #install} instead, which also adds the network interceptor that
   * keeps every follow-up off keyed attempts. This interceptor alone does not stop a 301, 302 or
   * 303 followed with a GET, nor any follow-up once an interceptor below it replaces the request
   * body; such an attempt counts as ambiguous (see "Every request on the wire is a journaled
   * attempt" above). An {@code Expect: 100-continue} header that an interceptor below it adds is
   * honoured as with {@link #install}: the attempt counts as sent once it may have reached the
   * network (Idem sees the request OkHttp writes through an event listener of the call, not through
   * the guard).
   *
   * @return the application interceptor
   */
  public Interceptor interceptor() {
    return interceptor;
  }

  /**
   * A transport that sends journaled operations through {@code client}, for
   * {@link IdempotentExecutor#resumePending} (in a {@link dev.idem.core.resume.ResumeHandler}) and for
   * re-driven operations. Give it the app's client, with the interceptors that add Authorization:
   * the journal holds no secrets. Its attempts pass through the idempotency interceptor, each as
   * one request on the wire; a client without the interceptor or the follow-up guard of
   * {@link #install} is used through a copy that has them (sharing its connection pool).
   *
   * @param client the app's client, with its own interceptors
   * @return the transport
   */
  public Transport transport(OkHttpClient client) {
    return new ClientTransport(Objects.requireNonNull(client, "client"), settings, interceptor);
  }

  /**
   * Like {@link #transport(OkHttpClient)}, for {@link IdempotentExecutor#executeAsync}, with {@code enqueue}.
   *
   * @param client the app's client, with its own interceptors
   * @return the asynchronous transport
   */
  public AsyncTransport asyncTransport(OkHttpClient client) {
    return new ClientTransport(Objects.requireNonNull(client, "client"), settings, interceptor);
  }

  /**
   * A {@link Call.Factory} over {@code client} whose calls for requests tagged with an
   * {@link IdempotentOperation} run, on {@code enqueue}, through
   * {@link IdempotentExecutor#executeAsync}: each attempt is its own OkHttp call, and the backoff
   * between attempts is waited out on the executor's {@link dev.idem.core.spi.Scheduler}, so an
   * enqueued call in backoff holds no dispatcher thread and no per-host slot. (The bare
   * {@link #interceptor()} cannot do that: OkHttp runs application interceptors on a dispatcher
   * thread, which then sleeps through every backoff.) {@code execute} behaves as a plain call
   * through the interceptor. Untagged requests get plain calls through the interceptor. The
   * client's interceptors added before {@link #install} run on every attempt of an enqueued call,
   * and must not retry (see {@link #install}).
   *
   * <p>Retrofit takes it with {@code new Retrofit.Builder().callFactory(idem.callFactory(client))}.
   * Calls honour {@code cancel()} (the operation stays PENDING with its key), {@code timeout()}
   * (default the client's call timeout; it bounds the whole operation, backoff included),
   * {@code isExecuted()}, {@code isCanceled()}, one execution per call, and {@code clone()} (same
   * tag, so same operation and key). Callbacks run on the client's dispatcher executor service,
   * once the outcome is journaled. {@code onResponse} owns the response and closes it; if it throws
   * a {@code RuntimeException} or an {@code Error}, the response is closed (freeing its connection)
   * and the exception rethrown on the dispatcher thread, to its uncaught exception handler, as
   * OkHttp does; an {@code IOException} it throws is not delivered to {@code onFailure}.
   * Outcomes reach the callback as they would through the interceptor; an operation refused before
   * anything was journaled or sent (bad input, or {@link IdempotentOperation#forReference} without
   * a reference key secret) reaches {@code onFailure} as an
   * {@link dev.idem.core.IdempotencyException} whose cause is the
   * {@code IllegalArgumentException} or {@code IllegalStateException}.
   *
   * @param client the app's client; the interceptor is added to a copy of it unless it already has
   *     it (the copy shares the connection pool and dispatcher)
   * @return the call factory; thread-safe
   */
  public Call.Factory callFactory(OkHttpClient client) {
    return new IdemCallFactory(Objects.requireNonNull(client, "client"), settings, interceptor);
  }

  /**
   * The executor, for looking operations up ({@code find}, {@code findByReference}) or re-driving them.
   *
   * @return the executor, for looking operations up ({@code find}, {@code findByReference}) or re-driving them
   */
  public IdempotentExecutor executor() {
    return settings.executor();
  }

  /**
   * Closes the executor this adapter made ({@link #create(Journal)}), as
   * {@link IdempotentExecutor#close()} does: calls in progress end PENDING with their keys, later
   * calls through the interceptor fail. An adapter from {@link #builder(IdempotentExecutor)} closes
   * nothing: its executor is the app's. The journal and the OkHttp clients are never closed here.
   * Idempotent.
   */
  @Override
  public void close() {
    if (ownsExecutor) {
      settings.executor().close();
    }
  }

  /** Builds an {@link IdemOkHttp}. Not thread-safe. */
  public static final class Builder {
    private final IdempotentExecutor executor;
    private String headerName = AdapterSupport.DEFAULT_KEY_HEADER;
    private KeyHeaderFormat format = KeyHeaderFormat.BARE;
    private UntaggedPolicy untagged = UntaggedPolicy.PASS_THROUGH;
    private long maxBodyBytes = 1 << 20;

    private Builder(IdempotentExecutor executor) {
      this.executor = Objects.requireNonNull(executor, "executor");
    }

    /**
     * The key header's name; default {@code Idempotency-Key}.
     *
     * @param headerName the header name
     * @return this builder
     * @throws IllegalArgumentException if blank or not a valid header name
     */
    public Builder headerName(String headerName) {
      this.headerName = AdapterSupport.checkHeaderName(headerName);
      return this;
    }

    /**
     * How the key is written; default {@link KeyHeaderFormat#BARE}.
     *
     * @param format the format
     * @return this builder
     */
    public Builder keyFormat(KeyHeaderFormat format) {
      this.format = Objects.requireNonNull(format, "format");
      return this;
    }

    /**
     * What happens to a POST or PATCH without a tag; default {@link UntaggedPolicy#PASS_THROUGH}.
     * Under {@code FRESH_KEY} the operation is named {@code untagged-post} or {@code untagged-patch}
     * (register resume transports under those names); under {@code REJECT} the call fails with
     * {@link dev.idem.core.http.UntaggedRequestException}, as in every adapter.
     *
     * @param policy the policy
     * @return this builder
     */
    public Builder untaggedPolicy(UntaggedPolicy policy) {
      this.untagged = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * The largest request body a keyed call accepts, in bytes; default 1 MiB (1048576), as in the
     * other adapters. The whole body is read into memory and journaled before the first attempt, so
     * a larger one is refused with an {@link IllegalArgumentException} before anything is journaled
     * or sent: at once if its {@code contentLength()} says so, else as soon as more than this many
     * bytes were read (a body of unknown length is never read to its end). {@link #callFactory}
     * calls report it to {@code enqueue} callbacks as an {@link IdempotencyException} whose cause
     * it is. The journal has its own cap ({@code JdbcJournal}: 512 KiB by default).
     *
     * @param bytes the limit, 0 or more
     * @return this builder
     * @throws IllegalArgumentException if negative
     */
    public Builder maxBodyBytes(long bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("maxBodyBytes must not be negative: " + bytes);
      }
      this.maxBodyBytes = bytes;
      return this;
    }

    /**
     * Builds it.
     *
     * @return the facade; its {@link IdemOkHttp#close()} leaves the executor given to
     *     {@link IdemOkHttp#builder} open (the app closes it)
     */
    public IdemOkHttp build() {
      return build(false);
    }

    private IdemOkHttp build(boolean ownsExecutor) {
      return new IdemOkHttp(AdapterSupport.of(executor, headerName, format, untagged), maxBodyBytes, ownsExecutor);
    }
  }
}
