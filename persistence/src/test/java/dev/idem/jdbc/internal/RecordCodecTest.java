package dev.idem.jdbc.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The journal appends an attempt to {@code attempts_json} as text, in SQL
 * ({@code OperationTable.appendAttemptAndTransition}, issue 28): the result must be the list the
 * codec's own append writes, and decode to the same attempts.
 */
class RecordCodecTest {
  private final RecordCodec codec = new RecordCodec(16, "idem-journal-body-truncated");

  @Test
  void anAttemptAppendedAsTextIsTheListTheTreeAppendWrites() throws Exception {
    AttemptRecord first = new AttemptRecord(1, 1, Instant.parse("2026-12-02T01:00:00Z"),
        Instant.parse("2026-12-02T01:00:00.005Z"), Classification.AMBIGUOUS, null, "java.net.SocketTimeoutException",
        "read \"timeout\"", Duration.ofMillis(250), "retry after backoff");
    AttemptRecord second = new AttemptRecord(2, 2, Instant.parse("2026-12-02T01:00:01Z"),
        Instant.parse("2026-12-02T01:00:01.5Z"), Classification.SUCCESS, 201, null, "HTTP 201", Duration.ZERO,
        "success");

    String one = codec.appendAttempt("[]", first);
    String two = codec.appendAttempt(one, second);

    // What OperationTable.appendAttemptAndTransition does in SQL, on the same strings.
    assertEquals(one, "[" + codec.encodeAttempt(first) + "]");
    assertEquals(two, one.substring(0, one.length() - 1) + "," + codec.encodeAttempt(second) + "]");
    assertEquals(List.of(first, second), codec.decodeAttempts(two));
  }

  /**
   * The text written to the columns, pinned: rows written by earlier versions (and their
   * checksums) must read the same, so the encoders keep writing exactly this.
   */
  @Test
  void theColumnsKeepTheirText() throws Exception {
    RequestSnapshot request = RequestSnapshot.builder("POST", URI.create("https://api.example/orders?x=1"))
        .header("Accept", "application/json").header("X-Trace", "a\"b").header("X-Trace", "c")
        .body("{\"amount\":100}".getBytes(StandardCharsets.UTF_8), "application/json").build();
    assertEquals("{\"v\":1,\"method\":\"POST\",\"uri\":\"https://api.example/orders?x=1\",\"headers\":"
        + "{\"accept\":[\"application/json\"],\"x-trace\":[\"a\\\"b\",\"c\"]},\"contentType\":\"application/json\","
        + "\"body\":\"eyJhbW91bnQiOjEwMH0=\"}", codec.encodeRequest(request));

    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("Location", List.of("/orders/7"));
    headers.put("Set-Cookie", List.of("s=1"));
    headers.put("Empty", List.of());
    ResponseSnapshot small = new ResponseSnapshot(201, headers, "{\"id\":7}".getBytes(StandardCharsets.UTF_8));
    ResponseSnapshot large = new ResponseSnapshot(200, Map.of(), new byte[17]);
    assertEquals("{\"v\":1,\"status\":201,\"headers\":{\"empty\":[],\"location\":[\"/orders/7\"]},"
        + "\"body\":\"eyJpZCI6N30=\",\"sum\":\"d1f76250e78f62a1f4eb8ec9c0ee6c30109b54a1584f52679cd443440df3237c\"}",
        codec.encodeResponse(small, Set.of("set-cookie")));
    assertEquals("{\"v\":1,\"status\":200,\"headers\":{},\"bodyTruncated\":true,\"bodyLength\":17,"
        + "\"sum\":\"cb83e0b50ed1e7361e45dde51ef45d706b4524fbdc142717629dcd8d844f2da1\"}",
        codec.encodeResponse(large, Set.of()));
    assertEquals(codec.decodeResponse(codec.encodeResponse(small, Set.of("set-cookie"))).headers().keySet(),
        Set.of("location", "empty"));
  }

  /**
   * A request's own timeout is kept (a queued delivery is bounded by it), as an optional field, so
   * rows written before it read as they were (no timeout) and keep their text.
   */
  @Test
  void aRequestsTimeoutIsKeptAndOldRowsReadWithoutOne() throws Exception {
    RequestSnapshot request = RequestSnapshot.builder("POST", URI.create("https://api.example/orders"))
        .body("{}".getBytes(StandardCharsets.UTF_8), "application/json").timeout(Duration.ofMillis(500)).build();
    String text = codec.encodeRequest(request);
    assertEquals("{\"v\":1,\"method\":\"POST\",\"uri\":\"https://api.example/orders\",\"headers\":{},"
        + "\"contentType\":\"application/json\",\"timeout\":\"PT0.5S\",\"body\":\"e30=\"}", text);
    assertEquals(request, codec.decodeRequest(text));

    RequestSnapshot old = codec.decodeRequest("{\"v\":1,\"method\":\"POST\",\"uri\":\"https://api.example/orders\","
        + "\"headers\":{},\"contentType\":\"application/json\",\"body\":\"e30=\"}");
    assertEquals(java.util.Optional.empty(), old.timeout());
    assertEquals(request.toBuilder().timeout(null).build(), old);
  }

  /**
   * The columns are written with the streaming generator (issue 28); before, with a tree whose
   * {@code toString} was the text. The tree encoders, as they were, are kept here as the reference:
   * for random values (quotes, control and non-ASCII characters, surrogates, empty and null parts)
   * the text must be the same, but for surrogates, now written as escapes (an unpaired one was
   * stored as '?'), and so must the response's checksum.
   */
  @Test
  void theStreamedTextIsTheTextTheTreeEncodersWrote() throws Exception {
    Random random = new Random(28);
    RecordCodec codec = new RecordCodec(64, "idem-journal-body-truncated");
    for (int i = 0; i < 3_000; i++) {
      RequestSnapshot.Builder b = RequestSnapshot.builder(i % 7 == 0 ? "PATCH" : "POST",
          URI.create("https://api.example/o/" + i + "?q=" + (i % 3 == 0 ? "%C3%A9%22" : "x")));
      Map<String, List<String>> headers = new LinkedHashMap<>();
      for (int h = random.nextInt(4); h > 0; h--) {
        String name = "x-" + h + (char) ('a' + random.nextInt(26));
        for (int v = random.nextInt(3) + 1; v > 0; v--) {
          String value = text(random);
          b.header(name, value);
          headers.computeIfAbsent(name, x -> new ArrayList<>()).add(value);
        }
      }
      if (i % 5 == 0) {
        headers.put("x-empty", List.of());
      }
      byte[] body = new byte[random.nextInt(100)];
      random.nextBytes(body);
      RequestSnapshot request = b.body(body, i % 2 == 0 ? "application/json; " + text(random) : null).build();
      assertEquals(escapeSurrogates(treeRequest(request)), codec.encodeRequest(request));

      ResponseSnapshot response = new ResponseSnapshot(100 + random.nextInt(500), headers, body);
      Set<String> excluded = i % 4 == 0 ? headers.keySet().stream().limit(1).collect(Collectors.toSet()) : Set.of();
      String streamed = codec.encodeResponse(response, excluded);
      assertEquals(escapeSurrogates(treeResponse(response, excluded, 64)), streamed);
      assertEquals(response.status(), codec.decodeResponse(streamed).status());

      Instant start = Instant.ofEpochSecond(random.nextLong(0, 4_000_000_000L), i % 3 == 0 ? 0 : random.nextInt(1_000_000_000));
      AttemptRecord attempt = new AttemptRecord(random.nextInt(10) + 1, random.nextLong(1, Long.MAX_VALUE), start,
          start.plusNanos(random.nextInt(1_000_000_000)), Classification.values()[i % Classification.values().length],
          i % 2 == 0 ? null : 200 + random.nextInt(300), i % 3 == 0 ? null : "java.io." + text(random), text(random),
          Duration.ofNanos(random.nextLong(0, 100_000_000_000L)), text(random));
      assertEquals(escapeSurrogates(treeAttempt(attempt).toString()), codec.encodeAttempt(attempt));
      assertEquals(List.of(attempt), codec.decodeAttempts(codec.appendAttempt("[]", attempt)));
    }
  }

  private static String text(Random random) {
    StringBuilder s = new StringBuilder();
    for (int n = random.nextInt(12); n > 0; n--) {
      switch (random.nextInt(8)) {
        case 0 -> s.append((char) random.nextInt(0x20)); // control characters, escaped
        case 1 -> s.append("\"\\/");
        case 2 -> s.append((char) (0x80 + random.nextInt(0x700))); // two-byte UTF-8
        case 3 -> s.append("\uD83D\uDE00"); // a surrogate pair
        case 4 -> s.append((char) (0xD800 + random.nextInt(0x800))); // a lone surrogate
        default -> s.append((char) (0x20 + random.nextInt(0x5F)));
      }
    }
    return s.toString();
  }

  // ---- the tree encoders as they were before issue 28's streaming, verbatim

  private static final ObjectMapper MAPPER = new ObjectMapper();

  /**
   * The tree's text with each surrogate as a JSON escape: outside strings JSON text is ASCII, so
   * every surrogate in it is inside a string.
   */
  private static String escapeSurrogates(String json) {
    StringBuilder b = new StringBuilder(json.length());
    json.chars().forEach(c -> b.append(Character.isSurrogate((char) c) ? String.format("\\u%04X", c)
        : String.valueOf((char) c)));
    return b.toString();
  }

  private static String treeRequest(RequestSnapshot r) {
    ObjectNode n = MAPPER.createObjectNode();
    n.put("v", 1);
    n.put("method", r.method());
    n.put("uri", r.uri().toString());
    n.set("headers", treeHeaders(r.headers(), Set.of()));
    r.contentType().ifPresent(ct -> n.put("contentType", ct));
    n.put("body", Base64.getEncoder().encodeToString(r.body()));
    return n.toString();
  }

  private static String treeResponse(ResponseSnapshot r, Set<String> excluded, int maxStoredResponseBody) {
    ObjectNode n = MAPPER.createObjectNode();
    n.put("v", 1);
    n.put("status", r.status());
    n.set("headers", treeHeaders(r.headers(), excluded));
    byte[] body = r.body();
    if (body.length > maxStoredResponseBody) {
      n.put("bodyTruncated", true);
      n.put("bodyLength", body.length);
    } else {
      n.put("body", Base64.getEncoder().encodeToString(body));
    }
    n.put(ResponseCheck.FIELD, ResponseCheck.of(n));
    return n.toString();
  }

  private static ObjectNode treeAttempt(AttemptRecord r) {
    ObjectNode n = MAPPER.createObjectNode();
    n.put("number", r.number());
    n.put("generation", r.generation());
    n.put("startedAt", r.startedAt().toString());
    n.put("endedAt", r.endedAt().toString());
    n.put("classification", r.classification().name());
    if (r.status() != null) {
      n.put("status", r.status());
    }
    if (r.exceptionClass() != null) {
      n.put("exceptionClass", r.exceptionClass());
    }
    n.put("reason", r.reason());
    n.put("delay", r.delay().toString());
    n.put("decision", r.decision());
    return n;
  }

  private static ObjectNode treeHeaders(Map<String, List<String>> headers, Set<String> excluded) {
    ObjectNode h = MAPPER.createObjectNode();
    headers.forEach((k, v) -> {
      if (!excluded.contains(k)) {
        ArrayNode values = h.putArray(k);
        v.forEach(values::add);
      }
    });
    return h;
  }
}
