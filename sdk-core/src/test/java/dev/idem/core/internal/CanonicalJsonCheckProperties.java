package dev.idem.core.internal;

import static dev.idem.core.support.Props.qt;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
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
      byte[] text = Json.value(r, depth).spell(r, r.nextBoolean()).getBytes(StandardCharsets.UTF_8);
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
      Json v = Json.value(r, depth);
      byte[] canonical = JsonCanonicalizer.canonicalize(v.spell(r, false).getBytes(StandardCharsets.UTF_8))
          .orElse(null);
      if (canonical != null && v.plainKeys() && v.depth() <= CanonicalJsonCheck.MAX_DEPTH) {
        assertTrue(CanonicalJsonCheck.isCanonical(canonical), () -> show(canonical));
      }
    });
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

  private static byte[] mutate(byte[] b, Random r) {
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

  /** A generated JSON value that can be spelled in many ways. */
  private interface Json {
    String spell(Random r, boolean sloppy);

    boolean plainKeys();

    int depth();

    String[] KEYS = {"a", "b", "B", "amount", "currency", "", "aa", "a b", "z\n", "\u00e9", "\u4e2d", "\ud83d\ude00",
        "\ue000", "\"", "a\\", "A", "_", "1"};
    String[] NUMBERS = {"0", "-0", "1", "-1", "4200", "1.0", "1e2", "1E+2", "0.1", "0.30000000000000004", "1e21",
        "1e+21", "1e-7", "0.000001", "123456789012345", "1234567890123456", "9007199254740993", "-1.5", "2e23",
        "5e-324", "1.7976931348623157e308", "12e-400", "100.000", "4.50", "-0.0", "1e400", "0e10", "333333333.33333329"};
    String CHARS = "aZ09 \"\\/\b\f\n\r\t\u0000\u001f\u007f\u00e9\u2028\u4e2d\ud83d\ude00\ue000";

    static Json value(Random r, int depth) {
      int kind = r.nextInt(depth > 0 ? 7 : 5);
      return switch (kind) {
        case 0 -> literal(NUMBERS[r.nextInt(NUMBERS.length)]);
        case 1 -> string(randomString(r));
        case 2 -> literal(r.nextBoolean() ? "true" : "false");
        case 3 -> literal("null");
        case 4 -> literal(NUMBERS[r.nextInt(NUMBERS.length)]);
        case 5 -> {
          List<Json> items = new ArrayList<>();
          for (int i = r.nextInt(4); i > 0; i--) {
            items.add(value(r, depth - 1));
          }
          yield array(items);
        }
        default -> {
          TreeMap<String, Json> members = new TreeMap<>();
          for (int i = r.nextInt(5); i > 0; i--) {
            members.put(r.nextInt(3) == 0 ? randomString(r) : KEYS[r.nextInt(KEYS.length)], value(r, depth - 1));
          }
          yield object(members, r.nextInt(10) == 0);
        }
      };
    }

    private static String randomString(Random r) {
      StringBuilder s = new StringBuilder();
      for (int i = r.nextInt(6); i > 0; i--) {
        int k = r.nextInt(CHARS.length());
        char c = CHARS.charAt(k);
        if (Character.isHighSurrogate(c)) {
          s.append(c).append(CHARS.charAt(k + 1));
        } else if (!Character.isLowSurrogate(c)) {
          s.append(c);
        }
      }
      return s.toString();
    }

    private static Json literal(String text) {
      return new Json() {
        public String spell(Random r, boolean sloppy) {
          return text;
        }

        public boolean plainKeys() {
          return true;
        }

        public int depth() {
          return 0;
        }
      };
    }

    private static Json string(String value) {
      return new Json() {
        public String spell(Random r, boolean sloppy) {
          return quote(value, r, sloppy);
        }

        public boolean plainKeys() {
          return true;
        }

        public int depth() {
          return 0;
        }
      };
    }

    private static Json array(List<Json> items) {
      return new Json() {
        public String spell(Random r, boolean sloppy) {
          StringBuilder s = new StringBuilder("[");
          for (int i = 0; i < items.size(); i++) {
            s.append(i > 0 ? "," : "").append(space(r, sloppy)).append(items.get(i).spell(r, sloppy))
                .append(space(r, sloppy));
          }
          return s.append(']').toString();
        }

        public boolean plainKeys() {
          return items.stream().allMatch(Json::plainKeys);
        }

        public int depth() {
          return 1 + items.stream().mapToInt(Json::depth).max().orElse(0);
        }
      };
    }

    private static Json object(TreeMap<String, Json> members, boolean duplicate) {
      return new Json() {
        public String spell(Random r, boolean sloppy) {
          List<String> keys = new ArrayList<>(members.keySet());
          if (sloppy || r.nextInt(4) == 0) {
            Collections.shuffle(keys, r);
          }
          if (duplicate && !keys.isEmpty()) {
            keys.add(keys.get(0));
          }
          StringBuilder s = new StringBuilder("{");
          for (int i = 0; i < keys.size(); i++) {
            s.append(i > 0 ? "," : "").append(space(r, sloppy)).append(quote(keys.get(i), r, sloppy))
                .append(space(r, sloppy)).append(':').append(space(r, sloppy))
                .append(members.get(keys.get(i)).spell(r, sloppy));
          }
          return s.append(space(r, sloppy)).append('}').toString();
        }

        public boolean plainKeys() {
          return members.keySet().stream().allMatch(k -> k.chars().allMatch(c -> c >= 0x20 && c < 0x7f
              && c != '"' && c != '\\')) && members.values().stream().allMatch(Json::plainKeys);
        }

        public int depth() {
          return 1 + members.values().stream().mapToInt(Json::depth).max().orElse(0);
        }
      };
    }

    private static String space(Random r, boolean sloppy) {
      return sloppy && r.nextInt(3) == 0 ? " \n\t\r".substring(r.nextInt(4), 4) : "";
    }

    /** Minimal escaping, or (sloppy) any valid escape for any character. */
    private static String quote(String value, Random r, boolean sloppy) {
      StringBuilder s = new StringBuilder("\"");
      for (int i = 0; i < value.length(); i++) {
        char c = value.charAt(i);
        if (sloppy && r.nextInt(4) == 0) {
          String hex = String.format("%04x", (int) c);
          s.append("\\u").append(r.nextBoolean() ? hex : hex.toUpperCase(java.util.Locale.ROOT));
          continue;
        }
        switch (c) {
          case '"' -> s.append("\\\"");
          case '\\' -> s.append("\\\\");
          case '/' -> s.append(sloppy && r.nextBoolean() ? "\\/" : "/");
          case '\b' -> s.append("\\b");
          case '\f' -> s.append("\\f");
          case '\n' -> s.append("\\n");
          case '\r' -> s.append("\\r");
          case '\t' -> s.append("\\t");
          default -> {
            if (c < 0x20) {
              s.append(String.format("\\u%04x", (int) c));
            } else {
              s.append(c);
            }
          }
        }
      }
      return s.append('"').toString();
    }
  }
}
