package dev.idem.core.internal;

import static dev.idem.core.support.Props.qt;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.generators.SourceDSL.longs;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link PackedRecord} gives back every record it packed, equal in every component. */
class PackedRecordProperties {
  private static final List<String> TEXTS = List.of("", "a", "create-order", "é à ü", "日本語", "emoji \uD83D\uDE00",
      "quote \" and \\ and \n newline", "x".repeat(300),
      "an unpaired surrogate \uD83D in a message", "\uDE00", "é".repeat(200));
  private static final List<String> ASCII_TEXTS = List.of("", "a", "create-order", "quote \" and \\ and \n newline",
      "x".repeat(300), "y".repeat(127), "z".repeat(128), "w".repeat(16_383), "v".repeat(16_384));
  private static final List<String> NAMES = List.of("content-type", "x-request-id", "idempotency-key", "retry-after",
      "x-ü");
  private static final List<String> URIS = List.of("https://api.example.com/v1/orders",
      "http://localhost:8080/", "https://h.example/p%20q?a=1&b=%C3%A9#frag", "https://[::1]:9443/x?empty=",
      "https://user@h.example/caf%C3%A9");

  @Test
  void unpackGivesBackWhatWasPacked() {
    qt(3000).forAll(longs().all()).checkAssert(seed -> {
      OperationRecord r = record(new Random(seed), TEXTS, NAMES);
      byte[] packed = PackedRecord.pack(r);
      OperationRecord back = PackedRecord.unpack(r.id(), packed);
      assertEquals(r, back, "seed " + seed);
      assertEquals(r.request().contentType(), back.request().contentType(), "seed " + seed);
      // A second unpack of the same array is as good: reading does not consume it.
      OperationRecord again = PackedRecord.unpack(r.id(), packed);
      assertEquals(r, again, "seed " + seed);
      assertNotSame(back, again);
    });
  }

  /**
   * The size computed before packing is the packed length exactly when every string is ASCII (one
   * array, none grown or trimmed), lengths at the varint boundaries included; and never more.
   */
  @Test
  void sizeIsThePackedLengthOfAsciiRecords() {
    qt(1000).forAll(longs().all()).checkAssert(seed -> {
      OperationRecord ascii = record(new Random(seed), ASCII_TEXTS, NAMES.subList(0, 4));
      assertEquals(PackedRecord.pack(ascii).length, PackedRecord.size(ascii), "seed " + seed);
      OperationRecord any = record(new Random(seed), TEXTS, NAMES);
      assertTrue(PackedRecord.size(any) <= PackedRecord.pack(any).length, "seed " + seed);
    });
  }

  private static OperationRecord record(Random rnd, List<String> texts, List<String> names) {
    OperationId id = new OperationId("scope", "op", IdempotencyKey.generate(rnd));
    byte[] digest = new byte[32];
    rnd.nextBytes(digest);
    RequestSnapshot.Builder b = RequestSnapshot.builder(pick(rnd, List.of("POST", "PUT", "PATCH", "DELETE")),
        URI.create(pick(rnd, URIS)));
    headers(rnd, texts, names).forEach((k, v) -> v.forEach(value -> b.header(k, value)));
    RequestSnapshot request = b.body(bytes(rnd), rnd.nextBoolean() ? null : "application/json; charset=utf-8")
        .timeout(rnd.nextBoolean() ? null : Duration.ofSeconds(rnd.nextInt(100), 1 + rnd.nextInt(999_999_999)))
        .build();
    int n = rnd.nextInt(4);
    List<AttemptRecord> attempts = new ArrayList<>();
    for (int k = 1; k <= n; k++) {
      attempts.add(new AttemptRecord(k, rnd.nextInt(5), instant(rnd), instant(rnd),
          pick(rnd, List.of(Classification.values())), rnd.nextBoolean() ? null : 100 + rnd.nextInt(500),
          nullable(rnd, texts), pick(rnd, texts), Duration.ofSeconds(rnd.nextInt(100_000), rnd.nextInt(1_000_000_000)),
          pick(rnd, texts)));
    }
    ResponseSnapshot response = rnd.nextBoolean() ? null
        : new ResponseSnapshot(100 + rnd.nextInt(500), headers(rnd, texts, names), bytes(rnd));
    return new OperationRecord(id, nullable(rnd, texts), new Fingerprint(HexFormat.of().formatHex(digest)), request,
        pick(rnd, List.of(OperationState.values())), nullable(rnd, texts), rnd.nextLong(), nullableInstant(rnd),
        nullableInstant(rnd), instant(rnd), instant(rnd), attempts, response, nullable(rnd, texts), rnd.nextBoolean(),
        nullableInstant(rnd));
  }

  private static Map<String, List<String>> headers(Random rnd, List<String> texts, List<String> names) {
    Map<String, List<String>> h = new LinkedHashMap<>();
    int n = rnd.nextInt(4);
    for (int k = 0; k < n; k++) {
      List<String> values = new ArrayList<>();
      for (int j = 0; j <= rnd.nextInt(3); j++) {
        values.add(pick(rnd, texts));
      }
      h.put(pick(rnd, names) + k, values);
    }
    return h;
  }

  private static byte[] bytes(Random rnd) {
    byte[] body = new byte[rnd.nextInt(4) == 0 ? 0 : rnd.nextInt(400)];
    rnd.nextBytes(body);
    return body;
  }

  private static String nullable(Random rnd, List<String> texts) {
    return rnd.nextInt(3) == 0 ? null : pick(rnd, texts);
  }

  private static Instant instant(Random rnd) {
    return Instant.ofEpochSecond(rnd.nextInt() * 10L, rnd.nextInt(1_000_000_000));
  }

  private static Instant nullableInstant(Random rnd) {
    return rnd.nextBoolean() ? null : instant(rnd);
  }

  private static <T> T pick(Random rnd, List<T> from) {
    return from.get(rnd.nextInt(from.size()));
  }
}
