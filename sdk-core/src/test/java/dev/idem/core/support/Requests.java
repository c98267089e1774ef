package dev.idem.core.support;

import dev.idem.core.spi.RequestSnapshot;
import java.net.URI;
import java.nio.charset.StandardCharsets;

/** Small request builders for tests. */
public final class Requests {
  private Requests() {}

  public static RequestSnapshot postJson(String uri, String json) {
    return RequestSnapshot.builder("POST", URI.create(uri))
        .body(json.getBytes(StandardCharsets.UTF_8), "application/json")
        .build();
  }

  public static RequestSnapshot order(String json) {
    return postJson("https://api.example.com/v1/orders", json);
  }
}
