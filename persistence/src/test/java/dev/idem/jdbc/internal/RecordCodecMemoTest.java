package dev.idem.jdbc.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.RequestSnapshot;
import dev.idem.core.ResponseSnapshot;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The codec's memo returns what a parse of the same text returns: a codec that encoded or appended
 * a value and a fresh codec that only parses agree, and the memo stays within its bound.
 */
class RecordCodecMemoTest {
  private static final Instant T = Instant.parse("2026-11-30T10:00:00.123456789Z");

  private static RecordCodec codec() {
    return new RecordCodec(64 * 1024, "idem-journal-body-truncated");
  }

  private static AttemptRecord attempt(int n, Integer status, String exceptionClass) {
    return new AttemptRecord(n, 7, T.plusMillis(n), T.plusMillis(n).plusNanos(999), Classification.AMBIGUOUS, status,
        exceptionClass, "reason " + n, Duration.ofMillis(250).plusNanos(n), "retry");
  }

  @Test
  void aRequestFoundByItsTextEqualsTheRequestAFreshCodecParses() throws Exception {
    RequestSnapshot request = RequestSnapshot.builder("POST", URI.create("https://api.example.test/v1/orders?x=1"))
        .header("Content-Type", "application/json").header("X-Trace", "a").header("x-trace", "b")
        .body("{\"amount\":1999}".getBytes(StandardCharsets.UTF_8), "application/json").build();
    RecordCodec writer = codec();
    String json = writer.encodeRequest(request);

    RequestSnapshot remembered = writer.decodeRequest(json);
    assertEquals(codec().decodeRequest(json), remembered, "what the memo returns is what a parse gives");
    assertSame(remembered, writer.decodeRequest(new String(json)), "found by the text, not by the instance");
  }

  @Test
  void aResponseFoundByItsTextEqualsTheStoredResponseAFreshCodecParses() throws Exception {
    RecordCodec writer = new RecordCodec(16, "idem-journal-body-truncated");
    ResponseSnapshot kept = new ResponseSnapshot(201, Map.of("Content-Type", List.of("application/json"),
        "Set-Cookie", List.of("s=1"), "X-Empty", List.of(), "X-Two", List.of("a", "b")), "{\"id\":7}".getBytes(
        StandardCharsets.UTF_8));
    ResponseSnapshot truncated = new ResponseSnapshot(200, Map.of("content-type", List.of("text/plain")),
        "a body longer than sixteen bytes".getBytes(StandardCharsets.UTF_8));
    for (ResponseSnapshot response : List.of(kept, truncated)) {
      String json = writer.encodeResponse(response, Set.of("set-cookie"));
      ResponseSnapshot remembered = writer.decodeResponse(json);
      assertEquals(new RecordCodec(16, "idem-journal-body-truncated").decodeResponse(json), remembered,
          "what the memo returns is what a parse gives: " + response);
      assertSame(remembered, writer.decodeResponse(new String(json)), "found by the text, not by the instance");
    }
    ResponseSnapshot stored = writer.decodeResponse(writer.encodeResponse(kept, Set.of("set-cookie")));
    assertEquals(Map.of("content-type", List.of("application/json"), "x-empty", List.of(), "x-two", List.of("a", "b")),
        stored.headers(), "the stored form, not the response given: no excluded header");
    ResponseSnapshot cut = writer.decodeResponse(writer.encodeResponse(truncated, Set.of()));
    assertEquals(0, cut.body().length, "the stored form: a body over the limit is dropped");
    assertEquals(List.of(Integer.toString(truncated.body().length)), cut.headers().get("idem-journal-body-truncated"));
  }

  @Test
  void attemptsAppendedOneByOneEqualWhatAFreshCodecParses() throws Exception {
    RecordCodec writer = codec();
    String json = "[]";
    for (int i = 1; i <= 4; i++) {
      json = writer.appendAttempt(json, attempt(i, i % 2 == 0 ? 503 : null, i % 2 == 0 ? null : "java.io.IOException"));
      assertEquals(codec().decodeAttempts(json), writer.decodeAttempts(json), "after " + i + " attempts");
    }
    List<AttemptRecord> decoded = writer.decodeAttempts(json);
    assertEquals(4, decoded.size());
    assertThrows(UnsupportedOperationException.class, () -> decoded.add(attempt(5, null, null)),
        "a remembered list is shared, so it cannot be changed");
  }

  @Test
  void anAppendToAListItDoesNotKnowParsesItLater() throws Exception {
    String two = codec().appendAttempt(codec().appendAttempt("[]", attempt(1, 500, null)), attempt(2, 502, null));
    RecordCodec writer = codec(); // has never seen the two-attempt text
    String three = writer.appendAttempt(two, attempt(3, 201, null));
    assertEquals(List.of(attempt(1, 500, null), attempt(2, 502, null), attempt(3, 201, null)),
        writer.decodeAttempts(three));
  }

  @Test
  void theMemoEmptiesItselfPastItsBoundAndKeepsNoLongText() {
    DecodeMemo<String> memo = new DecodeMemo<>(640);
    memo.put("x".repeat(11), "too long: over a 64th of the bound");
    assertNull(memo.get("x".repeat(11)));
    for (int i = 0; i < 64; i++) {
      memo.put(String.format("%010d", i), "v" + i); // 640 characters in all: the bound, not past it
    }
    assertEquals("v0", memo.get("0000000000"));
    memo.put("past-bound", "new");
    assertNull(memo.get("0000000000"), "emptied once past the bound");
    assertEquals("new", memo.get("past-bound"), "the value that passed it is kept");
  }
}
