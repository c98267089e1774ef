package dev.idem.testkit.internal;

import dev.idem.core.Fingerprint;
import dev.idem.core.Fingerprinter;
import dev.idem.core.RequestSnapshot;
import dev.idem.testkit.EffectRequest;
import dev.idem.testkit.Reply;
import java.nio.charset.StandardCharsets;
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
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.Headers;
import okio.ByteString;

/**
 * The server half of the idempotency protocol, as a MockWebServer dispatcher.
 *
 * <p>For each request: log it, take its scripted fault, then either let the fault answer instead
 * (nothing claimed, nothing stored) or process it (claim, check the fingerprint, run the effect or
 * replay, answer) and let the fault spoil the answer afterwards.
 *
 * <p>Thread-safe: MockWebServer calls {@link #dispatch} on one thread per connection.
 *
 * <p>Faults act only through the {@link MockResponse} returned (socket effects, header delay) or
 * through waits on {@link #closing}, never through {@link #peek()}: MockWebServer peeks before it
 * has read the request, so a peeked fault could not depend on the request's key.
 */
public final class IdempotencyDispatcher extends Dispatcher {
  private static final String TYPE_PREFIX = "urn:idem:problem:";

  private final ServerConfig config;
  private final RecordStore store;
  private final RequestLog log;
  private final FaultSource faults;
  private final CountDownLatch closing = new CountDownLatch(1);

  /**
   * @param config settings
   * @param store where records and effect counters live
   * @param log where received requests are appended
   * @param faults the scripted faults
   */
  public IdempotencyDispatcher(ServerConfig config, RecordStore store, RequestLog log, FaultSource faults) {
    this.config = Objects.requireNonNull(config, "config");
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
    List<String> keyValues = request.getHeaders().values(config.keyHeader());
    ParsedKey key = ParsedKey.parse(keyValues);
    ByteString rawBody = request.getBody();
    byte[] body = rawBody == null ? new byte[0] : rawBody.toByteArray();
    log.append(method, path, caller, keyValues.stream().findFirst(),
        new String(body, StandardCharsets.UTF_8), key.key(), headers(request.getHeaders()));

    FaultSpec fault = faults.take(key.key()).orElse(null);
    if (fault != null && fault.kind().preventsProcessing()) {
      return withExtraHeaders(instead(fault), fault).build();
    }
    boolean slow = fault != null && fault.kind() == FaultSpec.Kind.SLOW_PROCESSING;
    MockResponse.Builder response = process(request, method, path, caller, key, body, slow ? fault.duration() : null);
    return fault == null ? response.build() : withExtraHeaders(after(fault, response), fault).build();
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

  /** Wakes requests held by a slow-processing fault, so that the server can shut down promptly. */
  @Override
  public void close() {
    closing.countDown();
  }

  private MockResponse.Builder process(
      RecordedRequest request, String method, String path, String caller, ParsedKey key, byte[] body,
      Duration processingTime) throws InterruptedException {
    if (key.isAbsent()) {
      if (config.keyRequiredMethods().contains(method)) {
        return Responses.of(Responses.problem(400, TYPE_PREFIX + "idempotency-key-missing",
            config.keyHeader() + " is missing",
            "This operation is idempotent and requires an " + config.keyHeader() + " header."));
      }
      // A method that needs no key (GET, say) just runs: there is nothing to deduplicate.
      long n = store.countEffect(null);
      return Responses.of(runHandler(new EffectRequest(n, caller, method, path, null, body)));
    }
    if (!key.isValid()) {
      return Responses.of(Responses.problem(400, TYPE_PREFIX + "idempotency-key-malformed",
          config.keyHeader() + " is malformed",
          "The " + config.keyHeader() + " header has " + key.problem() + "."));
    }

    OperationIdentity id = new OperationIdentity(caller, method, path, key.key());
    ClaimResult claim = store.claim(id, fingerprint(request, body));
    if (claim instanceof ClaimResult.Mismatch) {
      return Responses.of(Responses.problem(422, TYPE_PREFIX + "idempotency-key-reused",
          config.keyHeader() + " reused with a different request",
          "This " + config.keyHeader() + " was already used with a different request payload;"
              + " the key was reused, use a new key for a new operation."));
    }
    if (claim instanceof ClaimResult.InFlight) {
      return Responses.of(Responses.problem(409, TYPE_PREFIX + "idempotency-key-in-flight",
              "A request with this " + config.keyHeader() + " is still being processed",
              "Retry after the first request has completed; the retry will get its result."))
          .setHeader("Retry-After", seconds(config.inFlightRetryAfter()));
    }
    if (claim instanceof ClaimResult.Replay replay) {
      return Responses.of(replay.reply()).setHeader(Responses.REPLAYED_HEADER, "true");
    }
    return Responses.of(execute(id, ((ClaimResult.Claimed) claim).claim(), body, processingTime));
  }

  private Reply execute(OperationIdentity id, IdempotencyRecord.Processing claim, byte[] body,
      Duration processingTime) throws InterruptedException {
    boolean completed = false;
    boolean ran = false;
    try {
      if (processingTime != null && closing.await(processingTime.toNanos(), TimeUnit.NANOSECONDS)) {
        return Responses.problem(503, TYPE_PREFIX + "shutting-down", "The server is shutting down",
            "The request was not processed.");
      }
      long n = store.countEffect(id.key());
      ran = true;
      Reply reply = runHandler(new EffectRequest(n, id.caller(), id.method(), id.path(), id.key(), body));
      if (reply.status() >= 500) {
        // A 5xx from the handler means it did not finish; storing it would replay a failure
        // forever to a client whose retry might have succeeded.
        return reply;
      }
      store.complete(id, claim, reply);
      completed = true;
      return reply;
    } finally {
      if (!completed) {
        store.release(id, claim);
      }
      if (ran) {
        store.settle(id.key());
      }
    }
  }

  private Reply runHandler(EffectRequest effect) {
    try {
      return Objects.requireNonNull(config.handler().execute(effect), "the effect handler returned null");
    } catch (RuntimeException e) {
      return Responses.problem(500, TYPE_PREFIX + "handler-failed", "The effect handler failed",
          e.getClass().getName());
    }
  }

  private Fingerprint fingerprint(RecordedRequest request, byte[] body) {
    RequestSnapshot snapshot = RequestSnapshot.builder(request.getMethod(), request.getUrl().uri())
        .body(body, request.getHeaders().get("Content-Type"))
        .build();
    return Fingerprinter.defaults().fingerprint(snapshot);
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
