package dev.idem.core.internal;

import static dev.idem.core.support.Props.qt;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Random;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link JsonCanonicalizer} reads the parser's tokens and takes two shortcuts to its decimal
 * search; what it writes must stay byte for byte what the tree-based version wrote
 * ({@link TreeCanonicalizer}), because a fingerprint stored in a journal before the change must
 * match the same request's fingerprint after it. Refusals too: a text either refused the same way.
 */
class JsonCanonicalizerEquivalenceProperties {

  @Test
  void generatedJsonCanonicalizesAsTheTreeDid() {
    qt(4000).forAll(longs().all(), integers().between(0, 4)).checkAssert((seed, depth) -> {
      Random r = new Random(seed);
      byte[] text = GeneratedJson.value(r, depth).spell(r, r.nextBoolean()).getBytes(StandardCharsets.UTF_8);
      assertCanonicalizesAsTheTree(text);
      assertCanonicalizesAsTheTree(CanonicalJsonCheckProperties.mutate(text, r));
      assertCanonicalizesAsTheTree(CanonicalJsonCheckProperties.mutate(CanonicalJsonCheckProperties.mutate(text, r), r));
    });
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "[", "]", "{", "{\"a\":", "{\"a\"}", "[1,2", "[1 2]", "{\"a\":1}x", "1 2", "-0", "-0.0",
      "[-0,0,-0e5]", "12345678901234567890", "-12345678901234567890", "9007199254740993", "-9007199254740993",
      "9007199254740992", "4503599627370497.5", "1e400", "-1e400", "1e-400", "5e-324", "2.2250738585072014e-308",
      "2.225073858507201e-308", "1.7976931348623157e308", "123456789012345680000", "1e21", "1e20", "0.000001",
      "0.0000001", "[19.99,0.1,0.2,0.30000000000000004,100.5,4200.00]", "{\"b\":[{\"d\":1,\"c\":2}],\"a\":null}",
      "{\"a\":1,\"a\":2}", "{\"a\":{\"x\":1,\"x\":1}}", "\"\\ud800\"", "\"\\udc00x\"", "[\"\\u0000\\u001f\\u007f\"]",
      "{\"\\ud83d\\ude00\":1,\"\\ue000\":2}", "true", "nul", "NaN", "Infinity", "[1,]", "01", "'a'"})
  void edgeTextsCanonicalizeAsTheTreeDid(String json) {
    assertCanonicalizesAsTheTree(json.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void deepNestingIsHandledAsTheTreeHandledIt() {
    for (int depth : new int[] {100, 499, 500, 501, 999, 1000, 1001, 5000}) {
      assertCanonicalizesAsTheTree(("[".repeat(depth) + "]".repeat(depth)).getBytes(StandardCharsets.UTF_8));
      assertCanonicalizesAsTheTree(("{\"a\":".repeat(depth) + "1" + "}".repeat(depth)).getBytes(StandardCharsets.UTF_8));
    }
  }

  @Test
  void numberShortcutsGiveWhatTheDecimalSearchGives() {
    SplittableRandom r = new SplittableRandom(8785);
    for (int i = 0; i < 60_000; i++) {
      double d = switch (i % 6) {
        case 0 -> Double.longBitsToDouble(r.nextLong()); // any exponent, subnormals included
        case 1 -> r.nextLong(-1_000_000_000L, 1_000_000_000L) / 100.0; // amounts in major units
        case 2 -> (r.nextDouble() - 0.5) * Math.pow(10, r.nextInt(-12, 22));
        case 3 -> (double) r.nextLong(-(1L << 54), 1L << 54); // integers across 2^53
        case 4 -> Math.nextUp(Double.MIN_NORMAL) * r.nextInt(1, 4) * (r.nextBoolean() ? 1 : -1); // the normal edge
        default -> r.nextInt(-100_000, 100_000) / Math.pow(10, r.nextInt(0, 8)); // short decimals
      };
      if (Double.isNaN(d) || Double.isInfinite(d)) {
        continue;
      }
      double x = d;
      assertEquals(JsonCanonicalizer.formatNumberGeneral(d), JsonCanonicalizer.formatNumber(d),
          () -> "bits " + Long.toHexString(Double.doubleToRawLongBits(x)));
    }
  }

  private static void assertCanonicalizesAsTheTree(byte[] text) {
    Optional<byte[]> expected = TreeCanonicalizer.canonicalize(text);
    Optional<byte[]> actual = JsonCanonicalizer.canonicalize(text);
    String shown = new String(text, StandardCharsets.UTF_8);
    assertEquals(expected.isPresent(), actual.isPresent(), () -> "refused by one only: " + shown);
    expected.ifPresent(e -> assertArrayEquals(e, actual.get(), () -> "different bytes for: " + shown));
  }
}
