package dev.idem.core.internal;

import static dev.idem.core.support.Props.qt;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The fingerprint's fast path ({@link CanonicalJsonCheck}: hash the body as it is when it is
 * already canonical) must hash exactly the bytes the slow path (canonicalize, or the raw bytes when
 * that refuses) hashes, for every input: generated JSON in many spellings, its canonical form, and
 * that form with one byte changed, inserted or removed.
 */
class CanonicalJsonCheckProperties {

  /** What the fingerprint hashes through the fast path. */
  private static byte[] fast(byte[] body) {
    return CanonicalJsonCheck.isCanonical(body) ? body : JsonCanonicalizer.canonicalize(body).orElse(body);
  }

  /** What it hashed before the fast path existed. */
  private static byte[] slow(byte[] body) {
    return JsonCanonicalizer.canonicalize(body).orElse(body);
  }

  @Test
  void fastPathHashesWhatTheSlowPathHashesOnGeneratedJson() {
    qt(3000).forAll(longs().all(), integers().between(0, 3)).checkAssert((seed, depth) -> {
      Random r = new Random(seed);
      byte[] text = GeneratedJson.value(r, depth).spell(r, r.nextBoolean()).getBytes(StandardCharsets.UTF_8);
      assertArrayEquals(slow(text), fast(text), () -> "spelling: " + show(text));
      byte[] canonical = slow(text);
      assertArrayEquals(slow(canonical), fast(canonical), () -> "canonical: " + show(canonical));
      byte[] mutated = mutate(canonical, r);
      assertArrayEquals(slow(mutated), fast(mutated), () -> "mutated: " + show(mutated));
    });
  }

  @Test
  void canonicalOutputWithPlainKeysTakesTheFastPath() {
    // Not a correctness property (false is always safe) but the point of the fast path: what a
    // compact serializer writes must not fall back to the parse-and-rewrite path.
    qt(2000).forAll(longs().all(), integers().between(0, 3)).checkAssert((seed, depth) -> {
      Random r = new Random(seed);
      GeneratedJson v = GeneratedJson.value(r, depth);
      byte[] canonical = JsonCanonicalizer.canonicalize(v.spell(r, false).getBytes(StandardCharsets.UTF_8))
          .orElse(null);
      if (canonical != null && v.plainKeys() && v.depth() <= CanonicalJsonCheck.MAX_DEPTH
          && !hasExactForm(canonical)) {
        assertTrue(CanonicalJsonCheck.isCanonical(canonical), () -> show(canonical));
      }
    });
  }

  /**
   * Whether a canonical text holds one of GeneratedJson's numbers that no double holds: written as
   * their own value, which the check leaves to the slow path (rare in requests; false is safe).
   */
  private static boolean hasExactForm(byte[] canonical) {
    String s = new String(canonical, StandardCharsets.UTF_8);
    return s.contains("9007199254740993") || s.contains("1.2e-399") || s.contains("333333333.33333329");
  }

  @ParameterizedTest
  @ValueSource(strings = {"{\"amount\":4200,\"currency\":\"EUR\",\"note\":\"x\\n\\u001f\\\"\"}", "[]", "{}",
      "[1,-2,0.5,1e+21,1e-7,-1.5,123456789012345,\"\u00e9\u4e2d\ud83d\ude00\",true,false,null]", "\"\"", "0"})
  void canonicalTextsAreRecognised(String json) {
    byte[] b = json.getBytes(StandardCharsets.UTF_8);
    assertArrayEquals(b, slow(b));
    assertTrue(CanonicalJsonCheck.isCanonical(b));
  }

  @ParameterizedTest
  @ValueSource(strings = {"{\"b\":1,\"a\":2}", "{\"a\":1,\"a\":1}", "{\"a\": 1}", " 1", "1 ", "-0", "1.0", "1E+21",
      "1e21", "100000000000000000000000", "9007199254740993", "\"\\u00e9\"", "\"\\/\"", "\"\\u000a\"", "\"\\u001F\"",
      "[1,]", "{\"a\":1}{}", "01", "1.", ".5", "+1", "\"\u0001\"", "nul", "[", "\"abc", "", "{\"a\":1,}",
      "\"\\ud83d\\ude00\"", "tru", "{\"\u00e9\":1,\"z\":2}"})
  void otherTextsAreLeftToTheSlowPath(String json) {
    byte[] b = json.getBytes(StandardCharsets.UTF_8);
    assertFalse(CanonicalJsonCheck.isCanonical(b), json);
    assertArrayEquals(slow(b), fast(b));
  }

  @Test
  void malformedUtf8IsLeftToTheSlowPath() {
    byte[][] bad = {
        {'"', (byte) 0xc0, (byte) 0x80, '"'}, // overlong NUL
        {'"', (byte) 0xed, (byte) 0xa0, (byte) 0x80, '"'}, // an encoded surrogate
        {'"', (byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80, '"'}, // beyond U+10FFFF
        {'"', (byte) 0xe4, (byte) 0xb8, '"'}, // truncated
        {'"', (byte) 0x80, '"'}, // a lone continuation byte
    };
    for (byte[] b : bad) {
      assertFalse(CanonicalJsonCheck.isCanonical(b), show(b));
      assertArrayEquals(slow(b), fast(b));
    }
  }

  @Test
  void deepNestingIsLeftToTheSlowPath() {
    String deep = "[".repeat(CanonicalJsonCheck.MAX_DEPTH + 1) + "]".repeat(CanonicalJsonCheck.MAX_DEPTH + 1);
    byte[] b = deep.getBytes(StandardCharsets.UTF_8);
    assertFalse(CanonicalJsonCheck.isCanonical(b));
    assertArrayEquals(slow(b), fast(b));
    String ok = "[".repeat(CanonicalJsonCheck.MAX_DEPTH) + "]".repeat(CanonicalJsonCheck.MAX_DEPTH);
    assertTrue(CanonicalJsonCheck.isCanonical(ok.getBytes(StandardCharsets.UTF_8)));
  }

  /** The text with one byte changed, inserted or removed; also used by the canonicalizer's equivalence test. */
  static byte[] mutate(byte[] b, Random r) {
    List<Byte> list = new ArrayList<>();
    for (byte x : b) {
      list.add(x);
    }
    byte[] interesting = {' ', '"', '\\', ',', ':', '{', '}', '[', ']', '0', '1', '-', '.', 'e', 'E', '+', 'a', 'u',
        (byte) 0xc3, (byte) 0xa9, (byte) 0x80, 0x1f};
    byte pick = interesting[r.nextInt(interesting.length)];
    int at = list.isEmpty() ? 0 : r.nextInt(list.size());
    switch (r.nextInt(3)) {
      case 0 -> list.add(at, pick);
      case 1 -> {
        if (!list.isEmpty()) {
          list.set(at, pick);
        }
      }
      default -> {
        if (!list.isEmpty()) {
          list.remove(at);
        }
      }
    }
    byte[] out = new byte[list.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = list.get(i);
    }
    return out;
  }

  private static String show(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }
}
