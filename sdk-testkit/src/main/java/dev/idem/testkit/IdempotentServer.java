package dev.idem.testkit;

import dev.idem.core.http.ProtocolHeaders;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.server.FingerprintMode;
import dev.idem.server.GuardRenderer;
import dev.idem.server.IdempotencyGuard;
import dev.idem.server.InMemoryIdempotencyStore;
import dev.idem.server.StoragePolicy;
import dev.idem.testkit.internal.DefaultEffectHandler;
import dev.idem.testkit.internal.EffectCounters;
import dev.idem.testkit.internal.IdempotencyDispatcher;
import dev.idem.testkit.internal.RequestLog;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import mockwebserver3.MockWebServer;
import okhttp3.HttpUrl;

/**
 * A reference idempotent HTTP server for tests: the server half of Idem's protocol, on
 * MockWebServer, listening on a random loopback port. The protocol itself is the server module's
 * {@link IdempotencyGuard} over an in-memory store, the same engine services run in production;
 * this class adds fault scripts and effect counters.
 *
 * <p>Every request with a key belongs to one operation, identified by caller (the
 * {@linkplain Builder#callerHeader caller header}, {@code "anonymous"} when absent), method and
 * path, and key. The first request of an operation claims it atomically and runs the
 * {@link EffectHandler} once; its reply is stored. Then:
 *
 * <ul>
 *   <li>a repeat with the same fingerprint (method, path and query, body; JSON bodies in RFC 8785
 *       canonical form) gets the stored reply again, with {@code Idempotent-Replayed: true};
 *   <li>a repeat while the first is still being processed gets 409 with {@code Retry-After};
 *   <li>a repeat with a different fingerprint gets 422, a problem body saying the key was reused;
 *   <li>a request without a key gets 400 if its method requires one (POST and PATCH by default),
 *       and simply runs the handler otherwise; a malformed key always gets 400;
 *   <li>a body larger than {@link Builder#maxBodySize} (1 MiB by default) gets 413 before anything
 *       else, as from a real API's front end: nothing claimed, no effect, and never more than the
 *       limit held in memory.
 * </ul>
 *
 * <p>It does not answer {@code Expect: 100-continue} (MockWebServer reads the body before the
 * dispatcher sees the head, so a {@code 100 Continue} could only go to every request): a client
 * that waits for one times out (see docs/testkit.md).
 *
 * <p>Real servers differ, and the builder can make this one behave like them (the flavours): the
 * status for a reused key ({@link Builder#mismatchStatus}), a 409 with or without
 * {@code Retry-After} ({@link Builder#sendInFlightRetryAfter}), the replay marker on or off
 * ({@link Builder#replayMarker}), 5xx stored and replayed or not ({@link Builder#storeServerErrors}),
 * the fingerprint over canonical JSON or raw bytes ({@link Builder#fingerprintMode}), the shape of
 * refusals ({@link Builder#renderer}, such as Stripe's), and whether a repeat waits for the first
 * request instead of answering 409 at once ({@link Builder#inFlightWait}).
 *
 * <p>Error bodies are RFC 9457 problem documents ({@code application/problem+json}). The key header
 * accepts a bare value or an RFC 8941 quoted string; both spell the same key. Scripted
 * {@link Fault faults} from {@link #plan()} reproduce lost responses, timeouts, 5xx and 429.
 *
 * <pre>{@code
 * try (IdempotentServer server = IdempotentServer.start()) {
 *   server.plan().next(Fault.commitThenDropResponse());
 *   // ... let the client under test POST to server.url("/orders") and retry ...
 *   assertEquals(1, server.effectCount(key));
 * }
 * }</pre>
 *
 * <h2>Outside JUnit</h2>
 * The server needs no test framework: start it from any program (a demo, a manual test, a local
 * stand-in for a payment API) and close it when done. A fixed port lets other programs, in any
 * language, find it:
 * <pre>{@code
 * try (IdempotentServer server = IdempotentServer.builder().port(8080).start()) {
 *   System.out.println("POST to " + server.url("/orders"));   // http://127.0.0.1:8080/orders
 *   // ... run the client, by hand or from a script ...
 *   System.out.println(server.requestCount() + " requests, " + server.totalEffects() + " effects");
 * }
 * }</pre>
 * {@link IdempotentServerMain} is that program, with a flag per flavour, for clients that are not
 * written in Java.
 *
 * <p>Thread-safe. Requests are handled concurrently, one thread per connection. Every request
 * costs about 44 ms on loopback (Nagle's algorithm against delayed ACKs in MockWebServer), so this
 * server is for behaviour tests with few requests, not for load. It listens on the loopback
 * address only.
 */
public final class IdempotentServer implements AutoCloseable {
  /** The default name of the idempotency key header. */
  public static final String DEFAULT_KEY_HEADER = ProtocolHeaders.KEY;
  /** The default name of the header that names the caller. */
  public static final String DEFAULT_CALLER_HEADER = "X-Caller";
  /**
   * The default {@linkplain Builder#maxBodySize largest request body} the server takes: 1 MiB, the
   * default of nginx's {@code client_max_body_size}, a common front of real APIs.
   */
  public static final long DEFAULT_MAX_BODY_SIZE = 1L << 20;

  private final MockWebServer server = new MockWebServer();
  private final EffectCounters store = new EffectCounters();
  private final IdempotencyGuard guard;
  private final RequestLog log = new RequestLog();
  private final FaultPlan plan = new FaultPlan();
  private final IdempotencyDispatcher dispatcher;
  private final HttpUrl base;

  private IdempotentServer(IdempotencyGuard guard, IdempotencyDispatcher.Settings settings, int port) {
    this.guard = guard;
    this.dispatcher = new IdempotencyDispatcher(settings, guard, store, log, key -> plan.take(key).map(Fault::spec));
    server.setDispatcher(dispatcher);
    // MockWebServer keeps the whole body by default; past the limit it reads and discards, so that
    // a huge upload costs the limit in memory, not its size (the dispatcher answers it 413).
    server.setBodyLimit(settings.maxBodySize());
    InetAddress loopback = InetAddress.getLoopbackAddress();
    try {
      server.start(loopback, port);
    } catch (IOException e) {
      guard.close();
      throw new UncheckedIOException("could not start the server on " + (port == 0 ? "a loopback port"
          : "loopback port " + port + " (is another program using it?)"), e);
    }
    // A literal address, not MockWebServer's host name: "localhost" may resolve to ::1 first
    // while the server listens on 127.0.0.1, which costs every new connection a failed attempt.
    this.base = new HttpUrl.Builder().scheme("http").host(loopback.getHostAddress()).port(server.getPort()).build();
  }

  /**
   * Starts a server with the defaults: {@value #DEFAULT_KEY_HEADER}, {@value #DEFAULT_CALLER_HEADER},
   * {@code Retry-After: 1} on 409, keys required for POST and PATCH, and the default handler.
   *
   * @return the started server
   * @throws UncheckedIOException if no loopback port can be bound
   * @see Builder
   */
  public static IdempotentServer start() {
    return builder().start();
  }

  /**
   * A builder for a server with non-default settings.
   *
   * @return a builder for a server with non-default settings
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The absolute URL of {@code path} on this server, such as {@code http://127.0.0.1:38123/orders}.
   *
   * @return the absolute URL of {@code path} on this server, such as {@code http://127.0.0.1:38123/orders}
   * @param path a path, optionally with a query, resolved against the server root
   * @throws IllegalArgumentException if {@code path} does not form a valid URL
   */
  public URI url(String path) {
    Objects.requireNonNull(path, "path");
    HttpUrl url = base.resolve(path);
    if (url == null) {
      throw new IllegalArgumentException("not a valid path: " + path);
    }
    return url.uri();
  }

  /**
   * The fault script of this server; empty at start, which means normal behaviour.
   *
   * @return the fault script of this server
   */
  public FaultPlan plan() {
    return plan;
  }

  /**
   * How many times the effect ran under {@code key} (unquoted), across callers and operations.
   * This is the number a test asserts to prove "exactly once".
   *
   * @param key the key, unquoted
   * @return how many times the effect ran under {@code key} (unquoted), across callers and operations
   */
  public long effectCount(String key) {
    return store.effectCount(Objects.requireNonNull(key, "key"));
  }

  /**
   * Waits until at least {@code count} effects under {@code key} have finished, their results
   * stored (or discarded, if the handler failed). Use it where a client gives up before the server
   * is done, as with {@link Fault#commitThenDelayResponse}: a client timeout does not prove that
   * the server has even read the request, and a retry sent too early would get 409, not the replay.
   *
   * @param key the unquoted key
   * @param count the number of effects to wait for
   * @param timeout the longest wait
   * @return true once that many have finished; false if the timeout elapsed first
   * @throws InterruptedException if interrupted while waiting
   */
  public boolean awaitEffects(String key, long count, Duration timeout) throws InterruptedException {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(timeout, "timeout");
    return store.awaitSettled(key, count, timeout);
  }

  /**
   * How many times the effect ran in total, including requests without a key.
   *
   * @return how many times the effect ran in total, including requests without a key
   */
  public long totalEffects() {
    return store.totalEffects();
  }

  /**
   * Every request received so far, in arrival order, including those that a fault dropped or
   * rejected, each with all of its headers (so a test can check, say, that every attempt carried
   * its {@code Authorization}); a snapshot, unmodifiable.
   *
   * @return every request received so far, in arrival order, including those that a fault dropped or rejected, each with all of its headers (so a test can check, say, that every attempt carried its {@code Authorization})
   */
  public List<ReceivedRequest> recordedRequests() {
    return log.requests();
  }

  /**
   * The distinct valid keys received so far, unquoted, in first-seen order; a snapshot.
   *
   * @return the distinct valid keys received so far, unquoted, in first-seen order
   */
  public Set<String> keysSeen() {
    return log.keys();
  }

  /**
   * How many requests the server has received so far.
   *
   * @return how many requests the server has received so far
   */
  public int requestCount() {
    return log.size();
  }

  /**
   * Stops the server and frees its port. Counters and recorded requests stay readable. Idempotent.
   *
   * <p>A request held by a {@linkplain Fault#slowProcessing slow-processing} fault is cut short
   * and answered 503 ({@code urn:idem:problem:shutting-down}) without an effect; close() waits,
   * at most 5 s, for those answers to be written before it closes the connections. Once close()
   * has begun no handler starts: a request admitted meanwhile (a duplicate that waited for the
   * slow one's key with {@link Builder#inFlightWait}, say) gets the same 503, or, if it is
   * admitted only after the connections closed, its connection cut. A handler already running is
   * not waited for, and a response held by a delayed-response fault has its connection cut.
   *
   * <p>If an {@link EffectHandler} threw an {@link Error} (a failed assertion in a test's handler,
   * say), the first such Error is rethrown here, once the server is stopped, so that the test
   * fails with the handler's own message rather than only with whatever the client made of its
   * 500. It is rethrown once: a second close returns normally. Exceptions are not rethrown: a
   * handler that throws one plays an effect that failed part-way, which a test may well intend.
   *
   * @throws Error the first Error an effect handler threw, if any (not yet reported)
   */
  @Override
  public void close() {
    try {
      dispatcher.close();
      server.close();
    } finally {
      guard.close();
    }
    Error handlerError = dispatcher.takeHandlerError();
    if (handlerError != null) {
      throw handlerError;
    }
  }

  // For this package's tests: the guard's store shows when a request has claimed its key.
  IdempotencyGuard guard() {
    return guard;
  }

  @Override
  public String toString() {
    return "IdempotentServer{" + base + "}";
  }

  /**
   * Settings for an {@link IdempotentServer}. Not thread-safe; build on one thread. The protocol
   * settings are the {@link IdempotencyGuard.Builder}'s, checked by it as they are set.
   */
  public static final class Builder {
    // Checks each protocol setting with the guard's own rules as it is set; start() replays the
    // settings on a guard over a fresh store, so that a reused builder never shares records.
    private final IdempotencyGuard.Builder check = guardBuilder();
    private final Map<String, Consumer<IdempotencyGuard.Builder>> guardSettings = new LinkedHashMap<>();
    private String callerHeader = DEFAULT_CALLER_HEADER;
    private Duration inFlightRetryAfter = Duration.ofSeconds(1);
    private boolean sendInFlightRetryAfter = true;
    private EffectHandler handler = new DefaultEffectHandler();
    private Clock clock = Clock.systemUTC();
    private long maxBodySize = DEFAULT_MAX_BODY_SIZE;
    private int port;

    private Builder() {}

    private static IdempotencyGuard.Builder guardBuilder() {
      // The guard's defaults but one: a 5xx releases the key, as the IETF draft says.
      return IdempotencyGuard.builder(new InMemoryIdempotencyStore()).storagePolicy(StoragePolicy.STORE_BELOW_500);
    }

    private Builder guard(String setting, Consumer<IdempotencyGuard.Builder> apply) {
      apply.accept(check);
      guardSettings.put(setting, apply);
      return this;
    }

    /**
     * The loopback port to listen on. Default 0: any free port, which tests should keep (read the
     * address from {@link IdempotentServer#url}); a fixed port is for manual tests, demos and
     * programs in other languages that must know where the server is.
     *
     * @param port 0 for any free port, or 1..65535
     * @return this builder
     * @throws IllegalArgumentException if out of range
     */
    public Builder port(int port) {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("port must be 0 (any free port) or 1..65535, not " + port);
      }
      this.port = port;
      return this;
    }

    /**
     * The largest request body, in bytes, the server takes. A request with a larger body is answered
     * 413 (a problem document, {@code urn:idem:problem:content-too-large}) before any fault or
     * processing, as a real API or the proxy in front of it would: no effect, nothing claimed, so
     * a retry with the same key and a smaller body is a first attempt. Such a request is still
     * recorded, its {@linkplain ReceivedRequest#body() body} cut to its first {@code bytes} bytes
     * (or the one to three fewer that end a whole character): the server reads the rest and
     * discards it, so that it never holds more than this much of one body in memory however large
     * the upload. Default {@value #DEFAULT_MAX_BODY_SIZE} (1 MiB); a
     * test that uploads more raises it (the idempotency guard's own cap on the body it
     * fingerprints is set to the same value). A body taken is held in one byte array, hence the
     * upper bound.
     *
     * @param bytes the largest body taken; from 1 to {@code Integer.MAX_VALUE - 1}
     * @return this builder
     * @throws IllegalArgumentException if zero, negative or over {@code Integer.MAX_VALUE - 1}
     */
    public Builder maxBodySize(long bytes) {
      if (bytes <= 0 || bytes >= Integer.MAX_VALUE) {
        throw new IllegalArgumentException("maxBodySize must be from 1 to " + (Integer.MAX_VALUE - 1) + ", not " + bytes);
      }
      this.maxBodySize = bytes;
      return this;
    }

    /**
     * The name of the idempotency key header. Default {@value IdempotentServer#DEFAULT_KEY_HEADER}.
     *
     * @param name a header name, matched case-insensitively
     * @return this builder
     * @throws IllegalArgumentException if blank
     */
    public Builder keyHeader(String name) {
      return guard("keyHeader", g -> g.keyHeader(name));
    }

    /**
     * The name of the header whose value scopes keys to a caller, standing in for the
     * authenticated account of a real API. Default {@value IdempotentServer#DEFAULT_CALLER_HEADER};
     * requests without it belong to {@code "anonymous"}.
     *
     * @param name a header name, matched case-insensitively
     * @return this builder
     * @throws IllegalArgumentException if blank, or if Idem's secret rule names the header a
     *     credential ({@link RequestSnapshot#isSecretByDefault}: {@code Authorization},
     *     {@code Cookie}, {@code X-Api-Key}...), as the Spring starter's
     *     {@code idem.server.caller-header} is refused
     */
    public Builder callerHeader(String name) {
      Objects.requireNonNull(name, "callerHeader");
      if (name.isBlank()) {
        throw new IllegalArgumentException("callerHeader must not be blank");
      }
      // The caller is kept in clear in every record of the server's store, as a real guard's is:
      // a test suite that scopes keys by its API key would teach the pattern the starter refuses.
      if (RequestSnapshot.isSecretByDefault(name)) {
        throw new IllegalArgumentException("callerHeader is " + name + ", a header Idem's secret rule names a"
            + " credential: its value would be kept in clear as the caller of every stored answer. Name a header"
            + " that holds an account or tenant id");
      }
      this.callerHeader = name;
      return this;
    }

    /**
     * The {@code Retry-After} sent with a 409 for a key still in flight, rounded up to whole
     * seconds. Default 1 second.
     *
     * @param retryAfter zero or positive
     * @return this builder
     * @throws IllegalArgumentException if negative
     */
    public Builder inFlightRetryAfter(Duration retryAfter) {
      check.inFlightRetryAfter(Objects.requireNonNull(retryAfter, "retryAfter"));
      this.inFlightRetryAfter = retryAfter;
      return this;
    }

    /**
     * The methods that get 400 without a key. Default POST and PATCH. Requests of other methods
     * without a key run the handler with no deduplication; with a key, any method is deduplicated.
     *
     * @param methods method names, case-insensitive; may be empty
     * @return this builder
     */
    public Builder keyRequiredMethods(Set<String> methods) {
      Objects.requireNonNull(methods, "methods").forEach(m -> Objects.requireNonNull(m, "method"));
      Set<String> copy = Set.copyOf(methods);
      return guard("keyRequiredMethods", g -> g.keyRequiredMethods(copy));
    }

    /**
     * The business action. Default: answers 201 with {@code {"id":"ord_<n>","effect":<n>,"key":"<key>"}},
     * where {@code n} is the server-wide effect number.
     *
     * @param handler the action; must be thread-safe
     * @return this builder
     */
    public Builder handler(EffectHandler handler) {
      this.handler = Objects.requireNonNull(handler, "handler");
      return this;
    }

    /**
     * The clock for HTTP-dates in {@code Retry-After}. Default the system clock in UTC; a fixed
     * clock makes the header exact in assertions.
     *
     * @param clock the clock
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * The status for a key reused with another payload: a flavour. Default 422, as the IETF draft
     * says; some servers answer 417 or 409.
     *
     * @param status 400..499
     * @return this builder
     * @throws IllegalArgumentException if not a 4xx
     */
    public Builder mismatchStatus(int status) {
      return guard("mismatchStatus", g -> g.mismatchStatus(status));
    }

    /**
     * Whether a 409 for a key in flight carries {@code Retry-After}: a flavour. Default true;
     * some servers send a bare 409.
     *
     * @param send false for a 409 without {@code Retry-After}
     * @return this builder
     */
    public Builder sendInFlightRetryAfter(boolean send) {
      this.sendInFlightRetryAfter = send;
      return this;
    }

    /**
     * Whether replays carry {@code Idempotent-Replayed: true}: a flavour. Default true; some
     * servers replay unmarked.
     *
     * @param on false for unmarked replays
     * @return this builder
     */
    public Builder replayMarker(boolean on) {
      return guard("replayMarker", g -> g.replayMarker(on));
    }

    /**
     * Whether a handler's 5xx reply is stored and replayed like any other: a flavour. Default
     * false (the IETF draft: a 5xx releases the key and a retry runs the handler again); some
     * servers store it. A handler that throws is never stored.
     *
     * @param store true to store and replay 5xx replies
     * @return this builder
     */
    public Builder storeServerErrors(boolean store) {
      return guard("storagePolicy", g -> g.storagePolicy(store ? StoragePolicy.STORE_ALL : StoragePolicy.STORE_BELOW_500));
    }

    /**
     * How request bodies are fingerprinted: a flavour. Default {@link FingerprintMode#CANONICAL_JSON}
     * (RFC 8785, the same as Idem's client); {@link FingerprintMode#RAW_BYTES} makes reordered JSON
     * another payload, as servers that hash the bytes do.
     *
     * @param mode the mode
     * @return this builder
     */
    public Builder fingerprintMode(FingerprintMode mode) {
      return guard("fingerprintMode", g -> g.fingerprintMode(mode));
    }

    /**
     * How refusals (400, 409, 422...) and replays are shaped: a flavour. Default
     * {@link GuardRenderer#problemJson()} (RFC 9457, as the IETF draft); {@link GuardRenderer#stripe()}
     * plays a Stripe-like API, whose refusals carry an {@code error} member.
     *
     * @param renderer the renderer
     * @return this builder
     */
    public Builder renderer(GuardRenderer renderer) {
      return guard("renderer", g -> g.renderer(renderer));
    }

    /**
     * How long a repeat that finds its key in flight waits for the first request's result before
     * it gets 409: a flavour (seed 000's "wait briefly"). Default zero: 409 at once.
     *
     * @param wait zero to 5 minutes
     * @return this builder
     * @throws IllegalArgumentException if negative or over 5 minutes
     */
    public Builder inFlightWait(Duration wait) {
      return guard("inFlightWait", g -> g.inFlightWait(wait));
    }

    /**
     * Starts a server with these settings on a loopback port (a random one unless {@link #port}
     * says otherwise). The builder may be reused.
     *
     * @return the started server
     * @throws UncheckedIOException if the port cannot be bound
     */
    public IdempotentServer start() {
      // The guard refuses bodies over its own cap (1 MiB by default) with a 413 of its own: without
      // this, a maxBodySize above 1 MiB would let a body past the front end only to be refused there.
      IdempotencyGuard.Builder g = guardBuilder().inFlightRetryAfter(sendInFlightRetryAfter ? inFlightRetryAfter : null)
          .maxRequestBody((int) maxBodySize);
      guardSettings.values().forEach(setting -> setting.accept(g));
      return new IdempotentServer(g.build(), new IdempotencyDispatcher.Settings(callerHeader, handler, clock, maxBodySize), port);
    }
  }
}
