package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.server.support.OrderApp;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The guard behind a real HTTP server, the same for every adapter. Effects are counted by the app. */
public abstract class AdapterContract {
  protected final OrderApp app = new OrderApp();
  protected final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  protected IdempotencyGuard guard;
  protected URI base;

  /** Starts the server on a loopback port 0, with the guard in front of {@link #app}; caller from X-Caller. */
  protected abstract URI start(IdempotencyGuard guard) throws Exception;

  protected abstract void stop() throws Exception;

  protected void start(IdempotencyGuard.Builder b) throws Exception {
    guard = b.build();
    base = start(guard);
  }

  protected void startDefault() throws Exception {
    start(IdempotencyGuard.builder(new InMemoryIdempotencyStore()));
  }

  @AfterEach
  void tearDown() throws Exception {
    stop();
    if (guard != null) {
      guard.close();
    }
  }

  protected HttpResponse<String> post(String path, String key, String caller, String mode, String body) throws Exception {
    HttpRequest.Builder r = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
    if (key != null) {
      r.header("Idempotency-Key", key);
    }
    if (caller != null) {
      r.header("X-Caller", caller);
    }
    if (mode != null) {
      r.header("X-Mode", mode);
    }
    return http.send(r.build(), HttpResponse.BodyHandlers.ofString());
  }

  protected static Optional<String> replayed(HttpResponse<?> r) {
    return r.headers().firstValue(IdempotencyGuard.REPLAYED_HEADER);
  }

  interface Call {
    HttpResponse<String> send() throws Exception;
  }

  static int statusOrDropped(Call call) throws Exception {
    try {
      return call.send().statusCode();
    } catch (java.io.IOException e) {
      return -1;
    }
  }

  @Test
  void aRepeatIsReplayedWithItsHeadersAndBody() throws Exception {
    startDefault();
    HttpResponse<String> first = post("/orders", "k1", null, null, "{\"sku\":\"A1\"}");
    HttpResponse<String> again = post("/orders", "k1", null, null, "{\"sku\":\"A1\"}");

    assertEquals(201, first.statusCode());
    assertEquals(Optional.empty(), replayed(first));
    assertEquals(201, again.statusCode());
    assertEquals(first.body(), again.body());
    assertEquals(Optional.of("true"), replayed(again));
    assertEquals(first.headers().firstValue("Location"), again.headers().firstValue("Location"));
    assertTrue(again.headers().firstValue("Content-Type").orElse("").startsWith("application/json"));
    assertEquals(1, app.effects("k1"));
  }

  @Test
  void protocolRefusalsRunNothing() throws Exception {
    startDefault();
    post("/orders", "k2", "alice", null, "{\"a\":1}");
    HttpResponse<String> reused = post("/orders", "k2", "alice", null, "{\"a\":2}");
    HttpResponse<String> missing = post("/orders", null, "alice", null, "{}");
    HttpResponse<String> tooLong = post("/orders", "k".repeat(256), "alice", null, "{}");
    HttpResponse<String> bob = post("/orders", "k2", "bob", null, "{\"a\":2}");

    assertEquals(422, reused.statusCode());
    assertEquals(400, missing.statusCode());
    assertEquals(400, tooLong.statusCode());
    assertEquals(201, bob.statusCode(), "another caller's key is another operation");
    assertEquals(2, app.effects("k2"));
    assertEquals(2, app.totalEffects());
  }

  @Test
  void thirtyTwoConcurrentRequestsWithOneKeyRunTheHandlerOnce() throws Exception {
    startDefault();
    app.holdHandlers();
    int n = 32;
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<HttpResponse<String>>> answers = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        answers.add(pool.submit(() -> {
          go.await();
          return post("/orders", "k-burst", null, null, "{\"sku\":\"A1\"}");
        }));
      }
      go.countDown();
      assertTrue(app.awaitEntered(), "one request reached the handler");
      // The winner is held inside the handler: every other request must be answered meanwhile.
      int conflicts = 0;
      int replays = 0;
      int fresh = 0;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
      List<Future<HttpResponse<String>>> pending = new ArrayList<>(answers);
      while (pending.size() > 1 && System.nanoTime() < deadline) {
        for (var it = pending.iterator(); it.hasNext(); ) {
          Future<HttpResponse<String>> f = it.next();
          if (f.isDone()) {
            HttpResponse<String> r = f.get();
            assertEquals(409, r.statusCode(), r.body());
            assertEquals(Optional.of("1"), r.headers().firstValue("Retry-After"));
            conflicts++;
            it.remove();
          }
        }
        Thread.onSpinWait();
      }
      app.release();
      for (Future<HttpResponse<String>> f : pending) {
        HttpResponse<String> r = f.get(20, TimeUnit.SECONDS);
        assertEquals(201, r.statusCode());
        if (replayed(r).isPresent()) {
          replays++;
        } else {
          fresh++;
        }
      }
      assertEquals(1, fresh);
      assertEquals(n - 1, conflicts + replays);
      assertEquals(1, app.effects("k-burst"));
      assertEquals(Optional.of("true"), replayed(post("/orders", "k-burst", null, null, "{\"sku\":\"A1\"}")));
      assertEquals(1, app.effects("k-burst"));
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aThrowingHandlerOrA5xxReleasesTheKeySoTheRetryRunsAgain() throws Exception {
    startDefault();
    // A servlet container answers 500; the JDK HttpServer drops the connection: either way, no result.
    int thrown = statusOrDropped(() -> post("/orders", "k-t", null, "throw", "{}"));
    HttpResponse<String> busy = post("/orders", "k-t", null, "503", "{}");
    HttpResponse<String> ok = post("/orders", "k-t", null, null, "{}");
    HttpResponse<String> replay = post("/orders", "k-t", null, "throw", "{}");

    assertTrue(thrown == 500 || thrown == -1, "status " + thrown);
    assertEquals(503, busy.statusCode());
    assertEquals(201, ok.statusCode());
    assertEquals(Optional.empty(), replayed(ok));
    assertEquals(Optional.of("true"), replayed(replay), "stored now: the handler does not run again");
    assertEquals(3, app.effects("k-t"));
  }

  /**
   * Issue 27: a handler that committed its effect and then answered 500 ran again on the retry (2
   * effects), because a 5xx released the claim. The default now stores every status but 503.
   */
  @Test
  void aHandlerThatCommittedItsEffectThenAnswered500DoesNotRunAgainOnTheRetry() throws Exception {
    startDefault();
    HttpResponse<String> failed = post("/orders", "k-500", null, "500", "{}");
    HttpResponse<String> retry = post("/orders", "k-500", null, null, "{}");

    assertEquals(500, failed.statusCode());
    assertEquals(500, retry.statusCode(), "the stored answer");
    assertEquals(Optional.of("true"), replayed(retry));
    assertEquals(1, app.effects("k-500"), "one effect");
  }

  @Test
  void anOverCapResponseReachesTheFirstCallerInFullAndItsReplayIsMarkedOmitted() throws Exception {
    start(IdempotencyGuard.builder(new InMemoryIdempotencyStore()).maxCapturedBody(1024));
    HttpResponse<String> first = post("/orders", "k-big", null, "big", "{}");
    HttpResponse<String> replay = post("/orders", "k-big", null, "big", "{}");

    assertEquals(201, first.statusCode());
    assertEquals(100_000, first.body().length());
    assertEquals(201, replay.statusCode());
    assertEquals("", replay.body());
    assertEquals(Optional.of("omitted"), replay.headers().firstValue(IdempotencyGuard.REPLAY_BODY_HEADER));
    assertEquals(first.headers().firstValue("Location"), replay.headers().firstValue("Location"));
    assertFalse(replay.headers().firstValue("Content-Type").isPresent());
    assertEquals(1, app.effects("k-big"));
  }
}
