package dev.idem.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IdempotencyKeyTest {
  private static final Pattern UUID_V7 =
      Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  /** Randomness of all one bits, and of all zero bits: the version and variant must still be set. */
  private static final Random ONES = filledWith((byte) 0xff);
  private static final Random ZEROS = filledWith((byte) 0);
  private static final byte[] SECRET = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

  private static Random filledWith(byte b) {
    return new Random() {
      @Override
      public void nextBytes(byte[] bytes) {
        java.util.Arrays.fill(bytes, b);
      }
    };
  }

  @Test
  void generateIsUuidV7TextOfTheCurrentTimeAndUnique() {
    Set<String> seen = new HashSet<>();
    long before = System.currentTimeMillis();
    for (int i = 0; i < 20_000; i++) {
      String k = IdempotencyKey.generate().value();
      assertTrue(UUID_V7.matcher(k).matches(), k);
      UUID u = UUID.fromString(k);
      assertEquals(7, u.version());
      assertEquals(2, u.variant());
      assertTrue(seen.add(k), "duplicate key " + k);
    }
    long after = System.currentTimeMillis();
    long millis = Long.parseLong(IdempotencyKey.generate().value().replace("-", "").substring(0, 12), 16);
    assertTrue(millis >= before && millis <= after + 1000, "the key carries its creation time: " + millis);
  }

  @Test
  void aTimedKeyIsReproducibleCarriesItsClocksMillisecondsAndSortsAfterEarlierOnes() {
    Clock clock = Clock.fixed(Instant.parse("2026-11-30T10:00:00.123Z"), ZoneOffset.UTC);
    IdempotencyKey key = IdempotencyKey.generate(new Random(7), clock);
    assertEquals(key, IdempotencyKey.generate(new Random(7), clock));
    assertTrue(key.value().replace("-", "").startsWith(String.format("%012x", clock.millis())), key.value());
    String t = String.format("%012x", clock.millis());
    String high = t.substring(0, 8) + "-" + t.substring(8) + "-7fff-bfff-ffffffffffff";
    assertEquals(high, IdempotencyKey.generate(ONES, clock).value());
    assertEquals(t.substring(0, 8) + "-" + t.substring(8) + "-7000-8000-000000000000",
        IdempotencyKey.generate(ZEROS, clock).value());
    Clock later = Clock.offset(clock, Duration.ofMillis(1));
    assertTrue(IdempotencyKey.generate(ZEROS, later).value().compareTo(high) > 0,
        "a key of a later millisecond sorts after every key of an earlier one, whatever their random bits");
    assertThrows(IllegalArgumentException.class, () -> IdempotencyKey.generate(new Random(1),
        Clock.fixed(Instant.parse("1969-12-31T23:59:59Z"), ZoneOffset.UTC)));
  }

  /** The key text is written from the bytes directly; java.util.UUID is the reference it must match. */
  @Test
  void keysAreTheTextJavaUtilUuidWritesForTheSameBits() {
    Clock clock = Clock.fixed(Instant.parse("2026-11-02T10:00:00.123Z"), ZoneOffset.UTC);
    for (int seed = 0; seed < 2_000; seed++) {
      byte[] b = new byte[16];
      new Random(seed).nextBytes(b);
      b[6] = (byte) ((b[6] & 0x0f) | 0x40);
      b[8] = (byte) ((b[8] & 0x3f) | 0x80);
      assertEquals(new UUID(java.nio.ByteBuffer.wrap(b).getLong(), java.nio.ByteBuffer.wrap(b, 8, 8).getLong())
          .toString(), IdempotencyKey.generate(new Random(seed)).value());

      new Random(seed).nextBytes(b);
      java.nio.ByteBuffer.wrap(b).putShort((short) (clock.millis() >>> 32)).putInt((int) clock.millis());
      b[6] = (byte) ((b[6] & 0x0f) | 0x70);
      b[8] = (byte) ((b[8] & 0x3f) | 0x80);
      assertEquals(new UUID(java.nio.ByteBuffer.wrap(b).getLong(), java.nio.ByteBuffer.wrap(b, 8, 8).getLong())
          .toString(), IdempotencyKey.generate(new Random(seed), clock).value());
    }
  }

  @Test
  void generateFromAGivenSourceIsReproducibleAndStillV4() {
    assertEquals(IdempotencyKey.generate(new Random(7)), IdempotencyKey.generate(new Random(7)));
    // all-ones and all-zeros randomness still produce version 4, variant 10xx
    assertEquals("ffffffff-ffff-4fff-bfff-ffffffffffff", IdempotencyKey.generate(ONES).value());
    assertEquals("00000000-0000-4000-8000-000000000000", IdempotencyKey.generate(ZEROS).value());
  }

  @Test
  void ofAcceptsUpTo255VisibleAsciiCharactersButTheQuoteTheCommaAndTheBackslash() {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; sb.length() < 255; i++) {
      char c = (char) (0x21 + i % (0x7f - 0x21));
      if (c != '"' && c != ',' && c != '\\') {
        sb.append(c);
      }
    }
    String all = sb.toString();
    assertEquals(all, IdempotencyKey.of(all).value());
    assertEquals("a", IdempotencyKey.of("a").value());
    assertEquals(IdempotencyKey.of("k-1"), IdempotencyKey.of("k-1"));
    assertEquals("k-1", IdempotencyKey.of("k-1").toString());
  }

  @Test
  void ofRejectsEmptyAndTooLong() {
    IllegalArgumentException empty = assertThrows(IllegalArgumentException.class, () -> IdempotencyKey.of(""));
    assertTrue(empty.getMessage().contains("empty"), empty.getMessage());
    String tooLong = "k".repeat(256);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> IdempotencyKey.of(tooLong));
    assertTrue(e.getMessage().contains("256") && e.getMessage().contains("255"), e.getMessage());
    assertThrows(NullPointerException.class, () -> IdempotencyKey.of(null));
  }

  @ParameterizedTest
  @ValueSource(strings = {"order 42", "order\t42", "order\u000742", "ord\u00e9r-42", "order-\u20ac", "order\u007f42",
      "order-\ud83d\ude00", "order,42", "order\"42", "order\\42"})
  void ofRejectsCharactersOutsideItsSet(String value) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> IdempotencyKey.of(value));
    assertTrue(e.getMessage().contains("index"), e.getMessage());
    assertTrue(e.getMessage().contains("U+"), e.getMessage());
    assertFalse(e.getMessage().contains(value), "the message must not echo the value: " + e.getMessage());
  }

  @Test
  void deriveIsDeterministicAndOpaque() {
    String reference = "invoice-2026-000123-customer-jane.doe@example.com";
    IdempotencyKey a = IdempotencyKey.derive(SECRET, "tenant-1", "create-order", reference);
    IdempotencyKey b = IdempotencyKey.derive(SECRET.clone(), "tenant-1", "create-order", reference);
    assertEquals(a, b);
    assertEquals(43, a.value().length());
    assertTrue(a.value().matches("[A-Za-z0-9_-]{43}"), a.value());
    assertFalse(a.value().contains(reference));
    assertFalse(a.value().contains("invoice"));
    assertFalse(a.value().contains("2026-000123"));
    // it is a valid key for the wire
    assertEquals(a, IdempotencyKey.of(a.value()));
  }

  @Test
  void deriveDiffersPerScopeOperationReferenceAndSecret() {
    Set<IdempotencyKey> keys = new HashSet<>();
    keys.add(IdempotencyKey.derive(SECRET, "tenant-1", "create-order", "ref-1"));
    keys.add(IdempotencyKey.derive(SECRET, "tenant-2", "create-order", "ref-1"));
    keys.add(IdempotencyKey.derive(SECRET, "tenant-1", "refund-order", "ref-1"));
    keys.add(IdempotencyKey.derive(SECRET, "tenant-1", "create-order", "ref-2"));
    byte[] other = SECRET.clone();
    other[0] ^= 1;
    keys.add(IdempotencyKey.derive(other, "tenant-1", "create-order", "ref-1"));
    // the parts are length-prefixed: moving a boundary changes the key
    keys.add(IdempotencyKey.derive(SECRET, "ab", "c", "ref"));
    keys.add(IdempotencyKey.derive(SECRET, "a", "bc", "ref"));
    assertEquals(7, keys.size());
  }

  @Test
  void deriveRejectsShortSecretsAndEmptyParts() {
    assertThrows(IllegalArgumentException.class, () -> IdempotencyKey.derive(new byte[15], "s", "o", "r"));
    assertNotEquals(null, IdempotencyKey.derive(new byte[16], "s", "o", "r"));
    assertThrows(IllegalArgumentException.class, () -> IdempotencyKey.derive(SECRET, "", "o", "r"));
    assertThrows(IllegalArgumentException.class, () -> IdempotencyKey.derive(SECRET, "s", "", "r"));
    assertThrows(IllegalArgumentException.class, () -> IdempotencyKey.derive(SECRET, "s", "o", ""));
    assertThrows(NullPointerException.class, () -> IdempotencyKey.derive(null, "s", "o", "r"));
  }
}
