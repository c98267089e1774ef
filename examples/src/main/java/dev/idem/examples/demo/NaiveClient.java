package dev.idem.examples.demo;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;

/**
 * The "without Idem" side of each scenario: what an app commonly writes, a retry loop around a
 * request it builds afresh on each attempt, so that each attempt carries a new random key (or a
 * key the app did not keep). The server then sees a new operation each time.
 */
final class NaiveClient {
  /** What the naive loop sent and how it ended. */
  record Run(List<String> keys, int lastStatus, String lastError) {
    long attempts() {
      return keys.size();
    }

    String ending() {
      return lastStatus > 0 ? "HTTP " + lastStatus : lastError;
    }
  }

  private NaiveClient() {}

  static OkHttpClient http(Duration readTimeout) {
    return new OkHttpClient.Builder().retryOnConnectionFailure(false).readTimeout(readTimeout).build();
  }

  /**
   * Posts {@code json} up to {@code maxAttempts} times, with a new key per attempt, retrying on an
   * I/O error, and on any non-2xx status too if {@code retryErrors}.
   */
  static Run post(OkHttpClient client, String url, String json, int maxAttempts, boolean retryErrors) {
    List<String> keys = new ArrayList<>();
    int status = -1;
    String error = null;
    for (int i = 0; i < maxAttempts; i++) {
      String key = UUID.randomUUID().toString();
      keys.add(key);
      Send s = send(client, url, json, key);
      status = s.status;
      error = s.error;
      if (status >= 200 && status < 300 || status > 0 && !retryErrors) {
        break;
      }
    }
    return new Run(List.copyOf(keys), status, error);
  }

  /** One request with the given key; no retry. */
  static Run postOnce(OkHttpClient client, String url, String json, String key) {
    Send s = send(client, url, json, key);
    return new Run(List.of(key), s.status, s.error);
  }

  private record Send(int status, String error) {}

  private static Send send(OkHttpClient client, String url, String json, String key) {
    Request request = new Request.Builder().url(url).header("Idempotency-Key", key)
        .post(RequestBody.create(json, DemoEnvironment.JSON)).build();
    try (Response r = client.newCall(request).execute()) {
      r.body().string();
      return new Send(r.code(), null);
    } catch (IOException e) {
      return new Send(-1, e.getClass().getSimpleName());
    }
  }
}
