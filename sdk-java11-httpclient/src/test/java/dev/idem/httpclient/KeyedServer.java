package dev.idem.httpclient;

import java.io.Closeable;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import okio.ByteString;

/**
 * A small idempotent server on MockWebServer, standing in for the testkit's IdempotentServer
 * until that lands: an atomic claim per key, the first body kept as the fingerprint (422 for
 * another body under the same key), the result stored and replayed with
 * {@code Idempotent-Replayed: true}, 409 with Retry-After while a key is in flight, 400 for a
 * missing key, and an effect counter per key. A fault plan scripts the next requests, in order.
 */
final class KeyedServer implements Closeable {
  enum Fault {
    /** Commit the effect, then drop the connection before answering. */
    COMMIT_THEN_DROP,
    /** Drop the connection without processing. */
    DROP_BEFORE_PROCESSING,
    /** Commit at once, answer one second later (after a short client timeout). */
    COMMIT_THEN_ANSWER_LATE,
    /** Claim the key and hold it in flight until {@link #finishSlowCommit()}, then commit and answer. */
    SLOW_COMMIT,
    /** 503 without processing. */
    UNAVAILABLE_503,
    /** 503 without processing, Retry-After garbage. */
    UNAVAILABLE_503_GARBAGE_RETRY_AFTER,
    /** 429, Retry-After: 3 (seconds). */
    TOO_MANY_429_SECONDS,
    /** 429, Retry-After as the HTTP-date set by {@link #retryAfterDate}. */
    TOO_MANY_429_DATE,
    /** 404 without processing. */
    NOT_FOUND_404,
    /** 400 with X-Should-Retry: true. */
    BAD_REQUEST_400_SHOULD_RETRY,
    /** 503 with X-Should-Retry: false. */
    UNAVAILABLE_503_SHOULD_NOT_RETRY
  }

  private record Stored(ByteString body, int number) {}

  private final MockWebServer server = new MockWebServer();
  private final String keyHeader;
  private final ConcurrentLinkedQueue<Fault> plan = new ConcurrentLinkedQueue<>();
  private final Map<String, Stored> results = new HashMap<>();
  private final Map<String, ByteString> inFlight = new HashMap<>();
  private final Map<String, AtomicInteger> effects = new HashMap<>();
  private final List<RecordedRequest> recorded = Collections.synchronizedList(new ArrayList<>());
  private final AtomicInteger created = new AtomicInteger();
  private final AtomicInteger inFlightAnswers = new AtomicInteger();
  private final CountDownLatch slowRelease = new CountDownLatch(1);
  private final CountDownLatch slowCommitted = new CountDownLatch(1);
  private volatile String retryAfterDate = "Thu, 01 Jan 2026 00:00:05 GMT";

  KeyedServer() throws IOException {
    this("Idempotency-Key");
  }

  KeyedServer(String keyHeader) throws IOException {
    this.keyHeader = keyHeader;
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
        recorded.add(request);
        return handle(request);
      }
    });
    server.start();
  }

  URI uri(String path) {
    return server.url(path).uri();
  }

  KeyedServer then(Fault... faults) {
    plan.addAll(List.of(faults));
    return this;
  }

  KeyedServer retryAfterDate(String httpDate) {
    this.retryAfterDate = httpDate;
    return this;
  }

  synchronized int effects(String key) {
    AtomicInteger n = effects.get(key);
    return n == null ? 0 : n.get();
  }

  synchronized int totalEffects() {
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

  /** How many 409 "in flight" answers were given. */
  int inFlightAnswers() {
    return inFlightAnswers.get();
  }

  /** Lets a {@link Fault#SLOW_COMMIT} finish, and waits (bounded) until it has committed. */
  void finishSlowCommit() throws InterruptedException {
    slowRelease.countDown();
    if (!slowCommitted.await(10, TimeUnit.SECONDS)) {
      throw new AssertionError("the slow commit did not finish");
    }
  }

  private MockResponse handle(RecordedRequest request) throws InterruptedException {
    Fault fault = plan.poll();
    String raw = request.getHeaders().get(keyHeader);
    if (raw == null) {
      return new MockResponse.Builder().code(400)
          .body("{\"error\":\"" + keyHeader + " header is missing; this endpoint needs an idempotency key\"}").build();
    }
    String key = raw.length() >= 2 && raw.startsWith("\"") && raw.endsWith("\"") ? raw.substring(1, raw.length() - 1)
        : raw;
    ByteString body = request.getBody() == null ? ByteString.EMPTY : request.getBody();
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
          return new MockResponse.Builder().code(429).setHeader("Retry-After", retryAfterDate).body("slow down")
              .build();
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
    Stored stored;
    synchronized (this) {
      // The atomic claim: a stored result is replayed, a key in flight gets 409, else claim it.
      Stored existing = results.get(key);
      ByteString pending = existing != null ? existing.body() : inFlight.get(key);
      if (pending != null && !pending.equals(body)) {
        return new MockResponse.Builder().code(422)
            .body("{\"error\":\"Idempotency-Key reused with another payload\"}").build();
      }
      if (existing != null) {
        return created(existing.number()).setHeader("Idempotent-Replayed", "true").build();
      }
      if (pending != null) {
        inFlightAnswers.incrementAndGet();
        return new MockResponse.Builder().code(409).setHeader("Retry-After", "2")
            .body("{\"error\":\"a request with this key is in flight\"}").build();
      }
      if (fault != Fault.SLOW_COMMIT) {
        stored = commit(key, body);
      } else {
        inFlight.put(key, body);
        stored = null;
      }
    }
    if (fault == Fault.SLOW_COMMIT) {
      // The client times out meanwhile; its retry finds the key in flight.
      if (!slowRelease.await(10, TimeUnit.SECONDS)) {
        throw new AssertionError("the slow commit was never released");
      }
      synchronized (this) {
        inFlight.remove(key);
        stored = commit(key, body);
      }
      slowCommitted.countDown();
      return created(stored.number()).build();
    }
    if (fault == Fault.COMMIT_THEN_DROP) {
      return drop();
    }
    MockResponse.Builder ok = created(stored.number());
    if (fault == Fault.COMMIT_THEN_ANSWER_LATE) {
      ok.headersDelay(1, TimeUnit.SECONDS);
    }
    return ok.build();
  }

  private Stored commit(String key, ByteString body) {
    Stored stored = new Stored(body, created.incrementAndGet());
    results.put(key, stored);
    effects.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
    return stored;
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
    slowRelease.countDown();
    server.close();
  }
}
