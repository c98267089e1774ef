package dev.idem.testkit;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import okhttp3.ConnectionPool;
import okhttp3.Headers;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * A plain OkHttp client for driving the server in tests, with OkHttp's own safety nets off so that
 * every request the test makes is exactly one request the server sees.
 */
final class TestClient {
  private static final MediaType JSON = MediaType.get("application/json");

  private final OkHttpClient http;

  TestClient() {
    this(Duration.ofSeconds(5));
  }

  TestClient(Duration readTimeout) {
    this.http = new OkHttpClient.Builder()
        // OkHttp repeats a request once on a broken connection; the fault tests need to see the break.
        .retryOnConnectionFailure(false)
        // No pooling: each request gets its own connection, so a fault that breaks one connection
        // cannot leave a dead pooled connection for the next request.
        .connectionPool(new ConnectionPool(0, 1, TimeUnit.SECONDS))
        .readTimeout(readTimeout)
        .build();
  }

  /** POSTs JSON with a key header (omitted when {@code key} is null) and reads the whole answer. */
  Answer post(URI url, String key, String json) throws IOException {
    return post(url, key, null, json);
  }

  Answer post(URI url, String key, String caller, String json) throws IOException {
    return post(url, key, caller, json, Headers.EMPTY);
  }

  /** As {@link #post(URI, String, String, String)}, with more request headers. */
  Answer post(URI url, String key, String caller, String json, Headers extra) throws IOException {
    Request.Builder request = new Request.Builder().url(url.toString()).post(RequestBody.create(json, JSON))
        .headers(extra);
    if (key != null) {
      request.header("Idempotency-Key", key);
    }
    if (caller != null) {
      request.header("X-Caller", caller);
    }
    try (Response response = http.newCall(request.build()).execute()) {
      return new Answer(response.code(), response.body().string(),
          response.header("Idempotent-Replayed"), response.header("Retry-After"),
          response.header("Content-Type"), response.headers());
    }
  }

  /**
   * What came back: status, body, the headers the protocol cares about (null if absent), and all
   * of the headers.
   */
  record Answer(int status, String body, String replayed, String retryAfter, String contentType, Headers headers) {
    boolean isReplay() {
      return "true".equals(replayed);
    }

    /** A response header's value, or null if absent. */
    String header(String name) {
      return headers.get(name);
    }
  }
}
