package dev.idem.jdbc.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
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
}
