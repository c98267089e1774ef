package dev.idem.core.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * RFC 8785 (JSON Canonicalization Scheme): sorted property names by UTF-16 code units, no
 * whitespace, numbers in ECMAScript form, minimal string escaping. Two JSON texts with the same
 * data canonicalize to the same bytes, whatever their key order, number spelling or escapes.
 *
 * <p>Numbers go through IEEE 754 doubles, as the RFC requires; integers beyond 2^53 therefore lose
 * precision here exactly as they would in any JCS implementation. Their digits are found here
 * rather than taken from {@link Double#toString(double)}, which on JDK 17 is not always the
 * shortest round-trip form (JDK-4511638) and changed in JDK 19: fingerprints are stored in the
 * journal, so they must not depend on the JVM version that computed them.
 *
 * <p>Thread-safe.
 */
public final class JsonCanonicalizer {
  private static final ObjectMapper MAPPER = JsonMapper.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
      .build();

  /** The characters written as a backslash and a letter (RFC 8785 section 3.2.2.2), and those letters. */
  private static final String ESCAPED = "\"\\\b\f\n\r\t";
  static final String SHORT_ESCAPES = "\"\\bfnrt";

  private JsonCanonicalizer() {}

  /**
   * Canonicalizes a UTF-8 JSON text.
   *
   * @return the canonical bytes, or empty when the input is not a single valid JSON value (with
   *     no duplicate property names), so that the caller can fall back to the raw bytes
   */
  public static Optional<byte[]> canonicalize(byte[] json) {
    try (JsonParser parser = MAPPER.createParser(json)) {
      JsonNode node = MAPPER.readTree(parser);
      if (node == null || parser.nextToken() != null) {
        return Optional.empty();
      }
      StringBuilder out = new StringBuilder(json.length);
      write(node, out);
      return Optional.of(out.toString().getBytes(StandardCharsets.UTF_8));
    } catch (IOException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  private static void write(JsonNode node, StringBuilder out) {
    switch (node.getNodeType()) {
      case OBJECT -> {
        List<Map.Entry<String, JsonNode>> fields = new ArrayList<>(node.properties());
        // String.compareTo orders by UTF-16 code units, which is what RFC 8785 section 3.2.3 asks.
        fields.sort(Map.Entry.comparingByKey());
        out.append('{');
        for (int i = 0; i < fields.size(); i++) {
          if (i > 0) {
            out.append(',');
          }
          writeString(fields.get(i).getKey(), out);
          out.append(':');
          write(fields.get(i).getValue(), out);
        }
        out.append('}');
      }
      case ARRAY -> {
        out.append('[');
        for (int i = 0; i < node.size(); i++) {
          if (i > 0) {
            out.append(',');
          }
          write(node.get(i), out);
        }
        out.append(']');
      }
      case STRING -> writeString(node.textValue(), out);
      case NUMBER -> out.append(formatNumber(node.doubleValue()));
      case BOOLEAN -> out.append(node.booleanValue());
      case NULL -> out.append("null");
      default -> throw new IllegalArgumentException("unexpected JSON node " + node.getNodeType());
    }
  }

  private static void writeString(String s, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isSurrogate(c)) {
        boolean paired = Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
        if (!paired) {
          throw new IllegalArgumentException("lone surrogate in JSON string");
        }
        out.append(c).append(s.charAt(++i));
        continue;
      }
      int escaped = ESCAPED.indexOf(c);
      if (escaped >= 0) {
        out.append('\\').append(SHORT_ESCAPES.charAt(escaped));
      } else if (c < 0x20) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    out.append('"');
  }

  /** ECMAScript Number.prototype.toString for finite doubles (ECMA-262 section 7.1.12.1). */
  static String formatNumber(double d) {
    if (Double.isNaN(d) || Double.isInfinite(d)) {
      throw new IllegalArgumentException("JSON has no NaN or Infinity");
    }
    if (d == 0) {
      return "0"; // also for -0, as the spec says
    }
    StringBuilder sb = new StringBuilder();
    if (d < 0) {
      sb.append('-');
      d = -d;
    }
    BigDecimal bd = shortest(d).stripTrailingZeros();
    String digits = bd.unscaledValue().toString();
    int k = digits.length();
    int n = k - bd.scale(); // d = 0.digits * 10^n
    if (k <= n && n <= 21) {
      sb.append(digits).append("0".repeat(n - k));
    } else if (0 < n && n <= 21) {
      sb.append(digits, 0, n).append('.').append(digits, n, k);
    } else if (-6 < n && n <= 0) {
      sb.append("0.").append("0".repeat(-n)).append(digits);
    } else {
      sb.append(digits.charAt(0));
      if (k > 1) {
        sb.append('.').append(digits, 1, k);
      }
      int exp = n - 1;
      sb.append('e').append(exp < 0 ? '-' : '+').append(Math.abs(exp));
    }
    return sb.toString();
  }

  /**
   * The decimal with the fewest significant digits that reads back as {@code d}, and of those the
   * closest to {@code d} (the even one on a tie): ECMA-262 section 7.1.12.1, step 5. For a positive
   * finite double; 17 digits always suffice.
   */
  private static BigDecimal shortest(double d) {
    if (d < 0x1p53 && d == Math.rint(d)) {
      // The common case, an integer: below 2^53 no other decimal reads back as it.
      return BigDecimal.valueOf((long) d);
    }
    BigDecimal exact = new BigDecimal(d);
    // Truncating once to 25 digits keeps the search on short numbers: for p < 25, the p-digit
    // floor of the truncation is the p-digit floor of the exact value.
    BigDecimal truncated = exact.round(new MathContext(25, RoundingMode.DOWN));
    boolean inexact = truncated.compareTo(exact) != 0;
    // Double.toString reads back, so the answer has at most its digit count; and whatever reads
    // back with p digits also does with p + 1, so search downwards from there until nothing does.
    int p = new BigDecimal(Double.toString(d)).stripTrailingZeros().precision();
    BigDecimal best = closestReadingBack(d, exact, truncated, inexact, p);
    while (p > 1) {
      BigDecimal shorter = closestReadingBack(d, exact, truncated, inexact, p - 1);
      if (shorter == null) {
        break;
      }
      best = shorter;
      p--;
    }
    return best;
  }

  /** Of the two p-digit decimals around d, the one that reads back as d (the closer if both do), or null. */
  private static BigDecimal closestReadingBack(double d, BigDecimal exact, BigDecimal truncated, boolean inexact,
      int p) {
    BigDecimal lo = truncated.round(new MathContext(p, RoundingMode.FLOOR));
    BigDecimal hi = !inexact && lo.compareTo(truncated) == 0 ? lo : lo.add(lo.ulp());
    boolean loReadsBack = lo.doubleValue() == d;
    boolean hiReadsBack = hi.doubleValue() == d;
    if (loReadsBack && hiReadsBack) {
      int c = exact.subtract(lo).compareTo(hi.subtract(exact));
      return c < 0 || (c == 0 && !lo.unscaledValue().testBit(0)) ? lo : hi;
    }
    return loReadsBack ? lo : hiReadsBack ? hi : null;
  }
}
