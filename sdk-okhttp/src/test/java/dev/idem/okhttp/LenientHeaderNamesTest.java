package dev.idem.okhttp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.okhttp.internal.OkHttpSnapshots;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Response header names that OkHttp reads leniently from the wire ({@code X-Trace-Id : abc} keeps
 * the space; a line without a colon gets the empty name) and refuses when a response is built. The
 * capture stores the name trimmed, as RFC 9112 section 5.1 has a proxy forward it, and leaves out a
 * header whose name is still unusable, so the journal holds only names a replay can build; the
 * replay does the same for a journal written before (which may hold such names), instead of
 * throwing on every later call of an operation that succeeded.
 */
class LenientHeaderNamesTest {
  private final Fixture f = new Fixture();
  private final MockWebServer server = new MockWebServer();

  @AfterEach
  void stop() throws IOException {
    server.close();
  }

  @Test
  void theJournalKeepsTrimmedNamesAndNoUnusableOne() throws Exception {
    server.enqueue(new MockResponse.Builder().code(201)
        .addHeaderLenient("X-Trace-Id ", "abc")
        .addHeaderLenient("", "a line without a colon")
        .addHeader("X-Plain", "1")
        .body("{\"id\":\"ord_1\"}").build());
    server.start();
    OkHttpClient client = f.idem().install(new OkHttpClient.Builder()).build();
    IdempotentOperation op = IdempotentOperation.of("create-order");
    Request request = new Request.Builder().url(server.url("/orders"))
        .post(RequestBody.create(Fixture.ORDER, Fixture.JSON)).tag(IdempotentOperation.class, op).build();

    try (Response first = client.newCall(request).execute()) {
      assertEquals(201, first.code());
    }

    ResponseSnapshot stored = f.record(op).storedResponse().orElseThrow();
    assertEquals(List.of("abc"), stored.headers().get("x-trace-id"), "trimmed: " + stored.headers().keySet());
    assertEquals(Set.of(), names(stored.headers().keySet(), "x-trace-id "), "the untrimmed name is not stored");
    assertEquals(Set.of(), names(stored.headers().keySet(), ""), "the empty name is not stored");
    assertEquals(List.of("1"), stored.headers().get("x-plain"));
  }

  @Test
  void aReplayOfAnOlderJournalsAnswerTrimsOrLeavesOutTheNamesOkHttpRefuses() {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("x-trace-id ", List.of("abc"));
    headers.put("\tx-lead", List.of("1"));
    headers.put("", List.of("a line without a colon"));
    headers.put("x-in ner", List.of("2"));
    headers.put("x-gr\u00f6\u00dfe", List.of("3"));
    headers.put("x-plain", List.of("gr\u00f6\u00dfe"));
    ResponseSnapshot old = new ResponseSnapshot(201, headers, "{}".getBytes());

    Response replay = OkHttpSnapshots.toResponse(old, new Request.Builder().url("http://localhost/orders").build());

    assertEquals(201, replay.code());
    assertEquals(new TreeSet<>(Set.of("x-lead", "x-plain", "x-trace-id")), new TreeSet<>(replay.headers().names()));
    assertEquals("abc", replay.header("X-Trace-Id"));
    assertEquals("1", replay.header("X-Lead"));
    assertEquals("gr\u00f6\u00dfe", replay.header("X-Plain"), "a non-ASCII value is kept, as before");
  }

  @Test
  void aReplayOfAnOlderJournalsAnswerTakesItsMediaTypeFromTheTrimmedName() throws IOException {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Content-Type ", List.of("application/json; charset=utf-8"));
    ResponseSnapshot old = new ResponseSnapshot(201, headers, "{\"id\":\"ord_1\"}".getBytes());

    Response replay = OkHttpSnapshots.toResponse(old, new Request.Builder().url("http://localhost/orders").build());

    assertEquals("application/json; charset=utf-8", replay.header("Content-Type"));
    assertEquals(MediaType.get("application/json; charset=utf-8"), replay.body().contentType(),
        "the body's media type, as the replayed header says");
    assertEquals("{\"id\":\"ord_1\"}", replay.body().string());
  }

  private static Set<String> names(Set<String> all, String name) {
    return all.contains(name) ? Set.of(name) : Set.of();
  }
}
