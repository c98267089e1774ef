package dev.idem.okhttp;

import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okhttp3.HttpUrl;
import okio.ByteString;

/**
 * A small keyed server on MockWebServer for the signals the testkit's reference
 * {@code IdempotentServer} does not script: a should-retry hint header, a garbage Retry-After, and
 * full request headers (to see Authorization on a resumed attempt). Per key it stores the first
 * body and result, counts effects, replays with {@code Idempotent-Replayed: true}, answers 422 for
 * another body and 400 for a missing key. The required scenarios run against IdempotentServer.
 */
final class KeyedServer implements Closeable {
  /** What the server does with one request, in order. */
  enum Fault {
    /** Commit the effect, then drop the connection before answering. */
    COMMIT_THEN_DROP,
    /** Drop the connection without processing. */
    DROP_BEFORE_PROCESSING,
    /** Commit, then answer late (after the client's read timeout). */
    COMMIT_THEN_ANSWER_LATE,
    /** Commit, but answer 409 "in flight" with Retry-After: 2 (the commit finishes meanwhile). */
    IN_FLIGHT_409,
    /** 503 without processing. */
    UNAVAILABLE_503,
    /** 503 without processing, with a Retry-After garbage value. */
    UNAVAILABLE_503_GARBAGE_RETRY_AFTER,
    /** 429 with Retry-After: 3 (seconds). */
    TOO_MANY_429_SECONDS,
    /** 429 with Retry-After as an HTTP-date 5 seconds after the given clock instant. */
    TOO_MANY_429_DATE,
    /** 404 without processing. */
    NOT_FOUND_404,
    /** 400 with a should-retry hint of true. */
    BAD_REQUEST_400_SHOULD_RETRY,
    /** 503 with a should-retry hint of false. */
    UNAVAILABLE_503_SHOULD_NOT_RETRY
  }

  private record Stored(ByteString body, int number) {}

  private final MockWebServer server = new MockWebServer();
  private final String keyHeader;
  private final ConcurrentLinkedQueue<Fault> plan = new ConcurrentLinkedQueue<>();
  private final Map<String, Stored> results = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> effects = new ConcurrentHashMap<>();
  private final List<RecordedRequest> recorded = java.util.Collections.synchronizedList(new ArrayList<>());
  private final AtomicInteger created = new AtomicInteger();
  private volatile String retryAfterDate = "Thu, 01 Jan 2026 00:00:05 GMT";
  private volatile long answerDelayMillis = 0;

  KeyedServer() throws IOException {
    this("Idempotency-Key");
  }

  KeyedServer(String keyHeader) throws IOException {
    this.keyHeader = keyHeader;
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        recorded.add(request);
        return handle(request);
      }
    });
    server.start();
  }

  HttpUrl url(String path) {
    return server.url(path);
  }

  KeyedServer then(Fault... faults) {
    plan.addAll(List.of(faults));
    return this;
  }

  /** Delays every ordinary answer, so that concurrent callers overlap. */
  KeyedServer answerDelay(long millis) {
    this.answerDelayMillis = millis;
    return this;
  }

  KeyedServer retryAfterDate(String httpDate) {
    this.retryAfterDate = httpDate;
    return this;
  }

  int effects(String key) {
    AtomicInteger n = effects.get(key);
    return n == null ? 0 : n.get();
  }

  int totalEffects() {
    return effects.values().stream().mapToInt(AtomicInteger::get).sum();
  }

  List<RecordedRequest> requests() {
    synchronized (recorded) {
      return List.copyOf(recorded);
    }
  }

  /** The raw key header value of every recorded request (null where absent). */
  List<String> keysSent() {
    return requests().stream().map(r -> r.getHeaders().get(keyHeader)).toList();
  }

  private MockResponse handle(RecordedRequest request) {
    Fault fault = plan.poll();
    String raw = request.getHeaders().get(keyHeader);
    if ("GET".equals(request.getMethod())) {
      return new MockResponse.Builder().code(200).body("{}").build();
    }
    // Faults that come before processing apply with or without a key; only then is the key required.
    if (fault != null) {
      switch (fault) {
        case DROP_BEFORE_PROCESSING:
          return drop();
        case UNAVAILABLE_503:
          return new MockResponse.Builder().code(503).body("busy").build();
        case UNAVAILABLE_503_GARBAGE_RETRY_AFTER:
          return new MockResponse.Builder().code(503).setHeader("Retry-After", "soon-ish, maybe").body("busy").build();
        case TOO_MANY_429_SECONDS:
          return new MockResponse.Builder().code(429).setHeader("Retry-After", "3").body("slow down").build();
        case TOO_MANY_429_DATE:
          return new MockResponse.Builder().code(429).setHeader("Retry-After", retryAfterDate).body("slow down").build();
        case NOT_FOUND_404:
          return new MockResponse.Builder().code(404).body("{\"error\":\"no such account\"}").build();
        case BAD_REQUEST_400_SHOULD_RETRY:
          return new MockResponse.Builder().code(400).setHeader("X-Should-Retry", "true").body("flaky").build();
        case UNAVAILABLE_503_SHOULD_NOT_RETRY:
          return new MockResponse.Builder().code(503).setHeader("X-Should-Retry", "false").body("down").build();
        default:
          break;
      }
    }
    if (raw == null) {
      return new MockResponse.Builder().code(400).body("{\"error\":\"Idempotency-Key header is missing\"}").build();
    }
    String key = raw.startsWith("\"") && raw.endsWith("\"") && raw.length() >= 2 ? raw.substring(1, raw.length() - 1)
        : raw;
    ByteString body = request.getBody() == null ? ByteString.EMPTY : request.getBody();
    Stored existing = results.get(key);
    if (existing != null) {
      if (!existing.body().equals(body)) {
        return new MockResponse.Builder().code(422)
            .body("{\"error\":\"Idempotency-Key reused with another payload\"}").build();
      }
      return created(existing.number()).setHeader("Idempotent-Replayed", "true").build();
    }
    Stored stored = new Stored(body, created.incrementAndGet());
    results.put(key, stored);
    effects.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
    if (fault == Fault.COMMIT_THEN_DROP) {
      return drop();
    }
    if (fault == Fault.IN_FLIGHT_409) {
      return new MockResponse.Builder().code(409).setHeader("Retry-After", "2")
          .body("{\"error\":\"a request with this key is in flight\"}").build();
    }
    MockResponse.Builder ok = created(stored.number());
    if (fault == Fault.COMMIT_THEN_ANSWER_LATE) {
      ok.headersDelay(1, TimeUnit.SECONDS);
    } else if (answerDelayMillis > 0) {
      ok.headersDelay(answerDelayMillis, TimeUnit.MILLISECONDS);
    }
    return ok.build();
  }

  private static MockResponse.Builder created(int number) {
    return new MockResponse.Builder().code(201).setHeader("Content-Type", "application/json")
        .body("{\"order\":" + number + "}");
  }

  private static MockResponse drop() {
    return new MockResponse.Builder().onResponseStart(SocketEffect.ShutdownConnection.INSTANCE).build();
  }

  @Override
  public void close() {
    server.close();
  }
}
