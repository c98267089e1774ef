package dev.idem.okhttp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.idem.core.spi.RequestSnapshot;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import okhttp3.HttpUrl;
import okhttp3.MediaType;
import okhttp3.Request;
import org.junit.jupiter.api.Test;

/**
 * A resumed request goes out to the journaled URL with the journaled media type, whatever the
 * thread rebuilt before it: {@link OkHttpSnapshots#toRequest} keeps the last URL and type it parsed
 * on each thread, and must never hand one request another's.
 */
class OkHttpSnapshotsToRequestTest {
  private static final String[] URLS = {"http://127.0.0.1:40123/orders", "https://api.example.com/v1/charges?limit=3",
      "http://h/p%2bq", "http://h/p%2Bq", "http://H/p%2Bq", "http://caf\u00e9.example/p", "http://[::1]:8080/p"};
  private static final String[] TYPES = {"application/json", "text/plain; charset=utf-8", "not a type",
      "application/json; charset=UTF-8"};

  @Test
  void eachRequestGetsItsOwnUrlAndTypeInAnyOrder() {
    for (int round = 0; round < 3; round++) {
      for (int i = 0; i < URLS.length; i++) {
        for (String type : new String[] {TYPES[i % TYPES.length], TYPES[(i + round) % TYPES.length]}) {
          // A URI object of its own each time, as each journal row decodes one.
          RequestSnapshot snapshot = RequestSnapshot.builder("POST", URI.create(URLS[i]))
              .body("{}".getBytes(StandardCharsets.UTF_8), type).build();
          Request request = OkHttpSnapshots.toRequest(snapshot);
          assertEquals(HttpUrl.get(URLS[i]), request.url(), URLS[i]);
          assertEquals(HttpUrl.get(URLS[i]).toString(), request.url().toString(), URLS[i]);
          assertEquals(MediaType.parse(type), request.body().contentType(), type);
        }
      }
    }
  }

  @Test
  void percentEscapesGoOutAsJournaled() {
    // URI.equals takes these for one URI; the request must still carry the escape it was given.
    Request lower = OkHttpSnapshots.toRequest(RequestSnapshot.builder("GET", URI.create("http://h/p%2bq")).build());
    Request upper = OkHttpSnapshots.toRequest(RequestSnapshot.builder("GET", URI.create("http://h/p%2Bq")).build());
    assertEquals("/p%2bq", lower.url().encodedPath());
    assertEquals("/p%2Bq", upper.url().encodedPath());
  }

  @Test
  void anUnreadableTypeSendsNoContentType() {
    RequestSnapshot snapshot = RequestSnapshot.builder("POST", URI.create("http://h/p"))
        .body("x".getBytes(StandardCharsets.UTF_8), "not a type").build();
    assertNull(OkHttpSnapshots.toRequest(snapshot).body().contentType());
    assertNull(OkHttpSnapshots.toRequest(snapshot).body().contentType());
  }
}
