package dev.idem.jdbc.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
}
