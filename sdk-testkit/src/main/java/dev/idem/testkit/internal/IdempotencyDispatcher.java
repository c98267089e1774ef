package dev.idem.testkit.internal;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.http.KeyHeader;
import dev.idem.server.spi.Admission;
import dev.idem.server.CapturedResponse;
import dev.idem.server.spi.CompletionResult;
import dev.idem.server.GuardRequest;
import dev.idem.server.GuardResponse;
import dev.idem.server.IdempotencyGuard;
import dev.idem.testkit.EffectHandler;
import dev.idem.testkit.EffectRequest;
import dev.idem.testkit.Reply;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.Headers;
import okio.ByteString;

/**
 * The server half of the idempotency protocol, as a MockWebServer dispatcher in front of the
 * server module's {@link IdempotencyGuard}: the guard claims, checks fingerprints, stores and
 * replays; this class adds the test kit's fault script and effect counters.
 *
 * <p>For each request: log it, take its scripted fault, then either let the fault answer instead
 * (nothing claimed, nothing stored) or process it through the guard (claim, check the
 * fingerprint, run the effect or replay, answer) and let the fault spoil the answer afterwards.
 *
 * <p>Thread-safe: MockWebServer calls {@link #dispatch} on one thread per connection.
 *
 * <p>Faults act only through the {@link MockResponse} returned (socket effects, header delay) or
 * through waits on {@link #closing}, never through {@link #peek()}: MockWebServer peeks before it
 * has read the request, so a peeked fault could not depend on the request's key.
 */
public final class IdempotencyDispatcher extends Dispatcher {
  private static final String TYPE_PREFIX = "urn:idem:problem:";
  // How long close() waits for the 503s of the requests it woke to be written: on loopback that
  // takes milliseconds; the bound only keeps a client that stopped reading from stalling close().
  private static final Duration ANSWERS_BOUND = Duration.ofSeconds(5);

  private final Settings config;
  private final IdempotencyGuard guard;
  private final EffectCounters store;
  private final RequestLog log;
  private final Function<String, Optional<FaultSpec>> faults;
  private final CountDownLatch closing = new CountDownLatch(1);
  private final AtomicBoolean closed = new AtomicBoolean();
  private final ShutdownAnswers answers = new ShutdownAnswers();
  // The first Error a handler threw: a failed assertion in a test's handler, kept for close().
  private final AtomicReference<Error> handlerError = new AtomicReference<>();

  /**
   * The test kit's own settings of one server, already validated by the public builder; the
   * protocol settings are the guard's.
   *
   * @param callerHeader the name of the header that names the caller
   * @param handler the business action
   * @param clock the source of "now" for HTTP-dates
   * @param maxBodySize the largest request body taken, in bytes; a larger one is answered 413
   */
  public record Settings(String callerHeader, EffectHandler handler, Clock clock, long maxBodySize) {}

  /**
   * @param config settings
   * @param guard the idempotency guard, over its own store
   * @param store the effect counters
   * @param log where received requests are appended
   * @param faults takes (consumes) the scripted fault for a request's unquoted key (null if it had
   *     no valid one); empty for normal behaviour. Thread-safe.
   */
  public IdempotencyDispatcher(Settings config, IdempotencyGuard guard, EffectCounters store, RequestLog log,
      Function<String, Optional<FaultSpec>> faults) {
    this.config = Objects.requireNonNull(config, "config");
    this.guard = Objects.requireNonNull(guard, "guard");
    this.store = Objects.requireNonNull(store, "store");
    this.log = Objects.requireNonNull(log, "log");
    this.faults = Objects.requireNonNull(faults, "faults");
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
    String method = request.getMethod();
    String path = request.getUrl().encodedPath();
    String caller = Optional.ofNullable(request.getHeaders().get(config.callerHeader()))
        .filter(c -> !c.isBlank())
        .orElse("anonymous");
    List<String> keyValues = request.getHeaders().values(guard.keyHeader());
    // The one parser the guard and the client use: a fault planned for a key meets exactly the
    // requests the guard takes as that key.
    String key = KeyHeader.parse(keyValues).key().map(IdempotencyKey::value).orElse(null);
    ByteString rawBody = request.getBody();
    byte[] body = rawBody == null ? new byte[0] : rawBody.toByteArray();
    // A body over the limit arrives cut at maxBodySize bytes, maybe inside a character, which
    // would decode to a trailing U+FFFD: recorded up to the last whole character instead.
    int recorded = request.getBodySize() > body.length ? wholeCharacters(body) : body.length;
    log.append(method, path, caller, keyValues.stream().findFirst(),
        new String(body, 0, recorded, StandardCharsets.UTF_8), key, headers(request.getHeaders()));

    // Before the fault plan: a real API's front end refuses the upload before anything else sees
    // it, and the body here is only its first maxBodySize bytes, which must not be fingerprinted.
    if (request.getBodySize() > config.maxBodySize()) {
      return Responses.of(Responses.problem(413, TYPE_PREFIX + "content-too-large", "Request body too large",
          "The request body has " + request.getBodySize() + " bytes; this server takes at most "
              + config.maxBodySize() + ". Nothing was processed.")).build();
    }
    FaultSpec fault = faults.apply(key).orElse(null);
    if (fault != null && fault.kind().preventsProcessing()) {
      return withExtraHeaders(instead(fault), fault).build();
    }
    boolean slow = fault != null && fault.kind() == FaultSpec.Kind.SLOW_PROCESSING;
    // Taken before the claim, so that a close() that sees the claim also waits for the answer.
    ShutdownAnswers.Hold hold = slow ? answers.hold() : null;
    boolean answered = false;
    try {
      MockResponse.Builder response = process(request, caller, keyValues, body, slow ? fault.duration() : null, hold);
      MockResponse built = fault == null ? response.build() : withExtraHeaders(after(fault, response), fault).build();
      answered = true;
      return built;
    } finally {
      if (hold != null) {
        // A dispatch that threw writes no answer, whatever it had handed the hold to.
        if (answered) {
          hold.dispatched();
        } else {
          hold.release();
        }
      }
    }
  }

  /**
   * How many of {@code bytes}, a prefix of UTF-8 text, end with a whole character: all of them, or
   * fewer by the one to three bytes of a character the cut split. Bytes that are not UTF-8 are
   * left as they are (they decode to U+FFFD, as in a body that was not cut).
   */
  static int wholeCharacters(byte[] bytes) {
    int n = bytes.length;
    int lead = n - 1;
    // Back over continuation bytes (10xxxxxx) to the byte that starts the last character.
    while (lead >= 0 && n - lead < 4 && (bytes[lead] & 0xC0) == 0x80) {
      lead--;
    }
    if (lead < 0) {
      return n;
    }
    int b = bytes[lead] & 0xFF;
    int length = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xC2 && b <= 0xDF ? 2 : 1;
    return n - lead < length ? lead : n;
  }

  private static MockResponse.Builder withExtraHeaders(MockResponse.Builder response, FaultSpec fault) {
    for (int i = 0; i < fault.headers().size(); i++) {
      response.setHeader(fault.headers().name(i), fault.headers().value(i));
    }
    return response;
  }

  // In arrival order; Headers.toMultimap() would sort the names.
  private static Map<String, List<String>> headers(Headers headers) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (int i = 0; i < headers.size(); i++) {
      out.computeIfAbsent(headers.name(i).toLowerCase(Locale.ROOT), n -> new ArrayList<>()).add(headers.value(i));
    }
    return out;
  }

  /**
   * Wakes requests held by a slow-processing fault, so that the server can shut down promptly,
   * and waits (at most 5 s) until their 503s are written, so that closing the sockets next does
   * not cut them off. From now on no handler starts: a request admitted later (a duplicate that
   * waited for the woken one's key, say) is answered the same 503. Only the first call waits;
   * MockWebServer calls this again from its own close().
   */
  @Override
  public void close() {
    closing.countDown();
    if (closed.compareAndSet(false, true)) {
      try {
        answers.awaitReleased(ANSWERS_BOUND);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  // Built per request: a MockResponse body is read once.
  private static MockResponse.Builder shuttingDown(ShutdownAnswers.Hold hold) {
    MockResponse.Builder response = Responses.of(Responses.problem(503, TYPE_PREFIX + "shutting-down",
        "The server is shutting down", "The request was not processed."));
    return hold == null ? response : hold.releasedOnceWritten(response);
  }

  private boolean closing() {
    return closing.getCount() == 0;
  }

  /**
   * @param processingTime the slow-processing fault's wait, or null
   * @param hold the request's place among the answers close() waits for (a slow request's), or null
   */
  private MockResponse.Builder process(RecordedRequest request, String caller, List<String> keyValues, byte[] body,
      Duration processingTime, ShutdownAnswers.Hold hold) throws InterruptedException {
    GuardRequest g = new GuardRequest(request.getMethod(), request.getUrl().encodedPath(),
        request.getUrl().encodedQuery(), request.getHeaders().get("Content-Type"), keyValues, caller,
        GuardRequest.BodyReader.of(body));
    Admission admission;
    try {
      admission = guard.admit(g);
    } catch (java.io.IOException e) {
      throw new IllegalStateException("an in-memory body cannot fail to read", e);
    }
    if (admission instanceof Admission.Respond respond) {
      return of(respond.response());
    }
    if (admission instanceof Admission.Unguarded) {
      if (closing()) {
        return shuttingDown(hold);
      }
      if (hold != null) {
        hold.release();
      }
      // A method that needs no key (GET, say) just runs: there is nothing to deduplicate.
      long n = store.countEffect(null);
      Reply reply = runHandler(new EffectRequest(n, caller, g.method(), g.path(), null, body));
      return Responses.of(reply == null ? handlerFailed() : reply);
    }
    Admission.Proceed proceed = (Admission.Proceed) admission;
    String key = proceed.claim().id().key();
    boolean ran = false;
    boolean finished = false;
    try {
      // Checked after the claim, not only before: closing wakes a slow request, which abandons its
      // claim, and the guard then hands the key to a duplicate that waited for it (inFlightWait).
      // An effect run then would be one that close() was meant to cut short.
      if (closing() || processingTime != null && closing.await(processingTime.toNanos(), TimeUnit.NANOSECONDS)) {
        return shuttingDown(hold);
      }
      if (hold != null) {
        // It runs its handler, which close() does not wait for.
        hold.release();
      }
      long n = store.countEffect(key);
      ran = true;
      Reply reply = runHandler(new EffectRequest(n, caller, g.method(), g.path(), key, body,
          proceed.claim().operationId()));
      if (reply == null) {
        // A handler that throws releases the claim whatever the storage policy: it did not
        // finish (the finally block abandons the claim).
        return Responses.of(handlerFailed());
      }
      Map<String, List<String>> headers = new LinkedHashMap<>(reply.headers());
      reply.contentType().ifPresent(ct -> headers.put("Content-Type", List.of(ct)));
      CompletionResult result = guard.complete(proceed.claim(), new CapturedResponse(reply.status(), headers, reply.body()));
      finished = true;
      return result == CompletionResult.REFUSED ? of(guard.refusedResponse()) : Responses.of(reply);
    } finally {
      if (!finished) {
        guard.abandon(proceed.claim());
      }
      if (ran) {
        store.settle(key);
      }
    }
  }

  private static MockResponse.Builder of(GuardResponse response) {
    MockResponse.Builder b = Responses.status(response.status());
    response.headers().forEach((name, values) -> values.forEach(v -> b.addHeader(name, v)));
    return b.body(new okio.Buffer().write(response.body()));
  }

  private static Reply handlerFailed() {
    return Responses.problem(500, TYPE_PREFIX + "handler-failed", "The effect handler failed",
        "The effect handler threw; nothing was stored.");
  }

  /**
   * Runs the handler; null if it threw (or returned null), which counts as a failed effect.
   *
   * <p>An Error is a failed effect too: most often an AssertionError from a test's assertion in its
   * handler. Left to MockWebServer, it would kill the connection's thread without an answer (the
   * client waits for its read timeout) and show only on stderr, so it answers the handler-failed
   * 500 like an exception, and the first one is kept for {@link #takeHandlerError()} to report.
   * A VirtualMachineError (out of memory, stack overflow) is left to propagate: nothing here can
   * answer reliably after one.
   */
  private Reply runHandler(EffectRequest effect) {
    try {
      return config.handler().execute(effect);
    } catch (RuntimeException e) {
      return null;
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Error e) {
      handlerError.compareAndSet(null, e);
      return null;
    }
  }

  /**
   * The first Error a handler threw since the last call, and forgets it, so that it is reported once.
   *
   * @return that Error, or null if no handler threw one
   */
  public Error takeHandlerError() {
    return handlerError.getAndSet(null);
  }

  /** The response of a fault that replaces processing. */
  private MockResponse.Builder instead(FaultSpec fault) {
    switch (fault.kind()) {
      case DROP_REQUEST:
        return new MockResponse.Builder().onResponseStart(new SocketEffect.CloseSocket());
      case REJECT:
        return Responses.of(injected(fault.status()));
      case RETRY_AFTER_SECONDS:
        return Responses.of(injected(fault.status())).setHeader("Retry-After", seconds(fault.duration()));
      case RETRY_AFTER_DATE:
        return Responses.of(injected(fault.status()))
            .setHeader("Retry-After", HttpDates.format(config.clock().instant().plus(fault.duration())));
      default:
        throw new IllegalArgumentException("not a replacing fault: " + fault);
    }
  }

  /** Spoils the response of a processed request. */
  private MockResponse.Builder after(FaultSpec fault, MockResponse.Builder response) {
    switch (fault.kind()) {
      case SLOW_PROCESSING:
        return response;
      case DROP_RESPONSE:
        return response.onResponseStart(new SocketEffect.CloseSocket());
      case DELAY_RESPONSE:
        return response.headersDelay(fault.duration().toNanos(), TimeUnit.NANOSECONDS);
      case STATUS_AFTER_PROCESSING:
        return Responses.of(injected(fault.status()));
      default:
        throw new IllegalArgumentException("not a spoiling fault: " + fault);
    }
  }

  private static Reply injected(int status) {
    return Responses.problem(status, TYPE_PREFIX + "injected-fault", "Injected fault",
        "The test's fault plan answered " + status + ".");
  }

  // Rounded up: a Retry-After of 0 for a wait of 300 ms would invite an immediate, useless retry.
  private static String seconds(Duration d) {
    long s = d.getSeconds() + (d.getNano() > 0 ? 1 : 0);
    return Long.toString(s);
  }
}
