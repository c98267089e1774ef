package dev.idem.core.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * RFC 8785 (JSON Canonicalization Scheme): sorted property names by UTF-16 code units, no
 * whitespace, numbers in ECMAScript form, minimal string escaping. Two JSON texts with the same
 * data canonicalize to the same bytes, whatever their key order, number spelling or escapes.
 *
 * <p>Numbers go through IEEE 754 doubles, as the RFC requires, with one deliberate exception. A
 * number whose value its double's text does not have (an integer beyond 2^53 such as
 * {@code 9007199254740993}, whose double is {@code 9007199254740992}; {@code 0.10000000000000001},
 * whose double is {@code 0.1}) is written as its own exact value instead: an app that reads it into
 * a {@code long} or a {@code BigDecimal} sees another payload, so its fingerprint must differ, or a
 * key reused with it is answered with the other payload's stored result. That value is laid out as
 * the RFC lays out a double (significant digits, no trailing zeros, an exponent outside
 * 1e-6..1e21), and no double's text can equal it: were it some double's text, the number would read
 * back as that double and have its text's value, so it would have been written as that text. Every
 * number whose value its double's text has ({@code 0.1},
 * {@code 4.50}, {@code 1e2}, {@code 2^53}) is written exactly as the RFC writes it, so fingerprints
 * stored before this exception, on the server and by the client, still match. A number no double
 * holds ({@code 1e400}) is refused, as before.
 *
 * <p>The digits of a double are found here rather than taken from
 * {@link Double#toString(double)}, which on JDK 17 is not always the shortest round-trip form
 * (JDK-4511638) and changed in JDK 19: fingerprints are stored in the journal, so they must not
 * depend on the JVM version that computed them. Its text is used only where any JVM's must be the
 * one shortest decimal (see {@code appendNumber}).
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
  /** Integers of smaller magnitude than this are exact as doubles. */
  private static final long EXACT_LONG = 1L << 53;
  /** Beyond this decimal point position the exact form is refused; a double's is within 310. */
  private static final long MAX_POINT = 1_000_000_000L;

  private JsonCanonicalizer() {}

  /**
   * Canonicalizes a UTF-8 JSON text.
   *
   * @return the canonical bytes, or empty when the input is not a single valid JSON value (with
   *     no duplicate property names), so that the caller can fall back to the raw bytes
   */
  public static Optional<byte[]> canonicalize(byte[] json) {
    // From the parser's tokens into a small tree of this class's own (members sorted, scalars as
    // their canonical text), then written once. Not through Jackson's JsonNode tree: its nodes and
    // the databind context per call were about half of canonicalizing a small body. Nor by writing
    // each member's value apart and copying it into its parent: a deep value is then copied once
    // per level, and a hostile 1 MiB body 400 levels deep took half a second (the guard
    // canonicalizes what any client sends). The output is the JsonNode version's, byte for byte
    // (JsonCanonicalizerEquivalenceProperties).
    try (JsonParser parser = MAPPER.createParser(json)) {
      JsonToken first = parser.nextToken();
      if (first == null) {
        return Optional.empty();
      }
      Object root = read(parser, first);
      if (parser.nextToken() != null) {
        return Optional.empty();
      }
      StringBuilder out = new StringBuilder(json.length);
      write(root, out);
      return Optional.of(out.toString().getBytes(StandardCharsets.UTF_8));
    } catch (IOException | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /** An object, its members sorted by name as read. */
  private record Members(List<Member> sorted) {}

  private record Member(String name, Object value) {}

  /** A string value, escaped when written. */
  private record Text(String value) {}

  /**
   * Reads the value that starts at {@code token}, leaving the parser on its last token: a
   * {@link Members}, a {@code List} of items, a {@link Text}, or the canonical text of a number or
   * literal as a {@code String}.
   */
  private static Object read(JsonParser p, JsonToken token) throws IOException {
    switch (token) {
      case START_OBJECT -> {
        List<Member> members = new ArrayList<>();
        for (JsonToken t = next(p); t != JsonToken.END_OBJECT; t = next(p)) {
          String name = p.currentName();
          members.add(new Member(name, read(p, next(p))));
        }
        // String.compareTo orders by UTF-16 code units, which is what RFC 8785 section 3.2.3 asks.
        members.sort(Comparator.comparing(Member::name));
        return new Members(members);
      }
      case START_ARRAY -> {
        List<Object> items = new ArrayList<>();
        for (JsonToken t = next(p); t != JsonToken.END_ARRAY; t = next(p)) {
          items.add(read(p, t));
        }
        return items;
      }
      case VALUE_STRING -> {
        return new Text(p.getText());
      }
      case VALUE_NUMBER_INT -> {
        StringBuilder number = new StringBuilder(24);
        return writeInteger(p, number) ? number.toString() : exactly(p, number.toString());
      }
      case VALUE_NUMBER_FLOAT -> {
        // As a tree reads it: a double (Jackson's own parse of the text), then the exactness check.
        StringBuilder number = new StringBuilder(24);
        appendNumber(p.getDoubleValue(), number);
        return exactly(p, number.toString());
      }
      case VALUE_TRUE -> {
        return "true";
      }
      case VALUE_FALSE -> {
        return "false";
      }
      case VALUE_NULL -> {
        return "null";
      }
      default -> throw new IllegalArgumentException("unexpected JSON token " + token);
    }
  }

  private static void write(Object value, StringBuilder out) {
    if (value instanceof String canonical) {
      out.append(canonical);
    } else if (value instanceof Text text) {
      writeString(text.value(), out);
    } else if (value instanceof Members members) {
      out.append('{');
      List<Member> sorted = members.sorted();
      for (int i = 0; i < sorted.size(); i++) {
        if (i > 0) {
          out.append(',');
        }
        writeString(sorted.get(i).name(), out);
        out.append(':');
        write(sorted.get(i).value(), out);
      }
      out.append('}');
    } else {
      out.append('[');
      List<?> items = (List<?>) value;
      for (int i = 0; i < items.size(); i++) {
        if (i > 0) {
          out.append(',');
        }
        write(items.get(i), out);
      }
      out.append(']');
    }
  }

  /** The next token; the parser itself refuses a text that ends inside a value. */
  private static JsonToken next(JsonParser p) throws IOException {
    JsonToken t = p.nextToken();
    if (t == null) {
      throw new IllegalArgumentException("JSON ends inside a value");
    }
    return t;
  }

  /**
   * An integer as a tree would hold it (an int, a long or a BigInteger) and then read it as a
   * double, which RFC 8785 requires.
   *
   * @return true when the double is certainly exact (an int or long below 2^53 in magnitude, the
   *     usual integer), so that the token need not be compared with what was written
   */
  private static boolean writeInteger(JsonParser p, StringBuilder out) throws IOException {
    if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
      appendNumber(p.getBigIntegerValue().doubleValue(), out);
      return false;
    }
    long v = p.getLongValue();
    appendNumber((double) v, out);
    return v > -EXACT_LONG && v < EXACT_LONG;
  }

  /**
   * The number token the parser is on, as {@code canonical} (its double's text) when that text has
   * the token's value, and as the token's own exact value when it does not (see the class comment).
   */
  private static String exactly(JsonParser p, String canonical) throws IOException {
    char[] text = p.getTextCharacters();
    int offset = p.getTextOffset();
    int length = p.getTextLength();
    if (canonical.length() == length && canonical.contentEquals(java.nio.CharBuffer.wrap(text, offset, length))) {
      return canonical; // written canonically already: the usual case, nothing to parse
    }
    Decimal token = Decimal.parse(text, offset, length);
    if (token.equals(Decimal.parse(canonical.toCharArray(), 0, canonical.length()))) {
      return canonical;
    }
    if (Math.abs(token.point()) > MAX_POINT) {
      // Its double is 0 (a double so big is infinite, refused already); its exact value would be
      // written with an exponent no real request has.
      throw new IllegalArgumentException("JSON number beyond any exponent written here");
    }
    StringBuilder out = new StringBuilder(token.digits().length() + 8);
    if (token.negative()) {
      out.append('-');
    }
    layout(token.digits(), (int) token.point(), out);
    return out.toString();
  }

  /**
   * A JSON number's value as {@code 0.digits × 10^point}: digits without leading or trailing zeros
   * (empty for zero, whose sign then does not count), so two spellings of one value are equal.
   */
  private record Decimal(boolean negative, String digits, long point) {
    private static final Decimal ZERO = new Decimal(false, "", 0);

    /** Parses a number the parser (or this class) has already checked is valid JSON. */
    static Decimal parse(char[] c, int offset, int length) {
      int end = offset + length;
      int i = offset;
      boolean negative = c[i] == '-';
      if (negative) {
        i++;
      }
      StringBuilder digits = new StringBuilder(length);
      long point = 0;
      boolean fraction = false;
      for (; i < end && c[i] != 'e' && c[i] != 'E'; i++) {
        if (c[i] == '.') {
          fraction = true;
        } else if (digits.length() == 0 && c[i] == '0') {
          if (fraction) {
            point--; // a leading zero after the point moves it
          }
        } else {
          digits.append(c[i]);
          if (!fraction) {
            point++;
          }
        }
      }
      if (i < end) {
        point += exponent(c, i + 1, end);
      }
      int kept = digits.length();
      while (kept > 0 && digits.charAt(kept - 1) == '0') {
        kept--;
      }
      return kept == 0 ? ZERO : new Decimal(negative, digits.substring(0, kept), point);
    }

    /** The exponent, saturated far beyond {@link #MAX_POINT} so that a long never overflows. */
    private static long exponent(char[] c, int i, int end) {
      boolean negative = c[i] == '-';
      if (c[i] == '-' || c[i] == '+') {
        i++;
      }
      long e = 0;
      for (; i < end; i++) {
        e = Math.min(e * 10 + (c[i] - '0'), 1L << 40);
      }
      return negative ? -e : e;
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
      if (c >= 0x20 && c != '"' && c != '\\') {
        // Nearly every character: nothing to look up.
        out.append(c);
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
    StringBuilder sb = new StringBuilder(24);
    appendNumber(d, sb);
    return sb.toString();
  }

  /**
   * Appends {@link #formatNumber}'s text, with two shortcuts to the decimal search (BigDecimal
   * arithmetic, about a third of canonicalizing a small body with one decimal amount in it):
   * <ul>
   *   <li>An integer below 2^53 in magnitude, the usual number in a request (amounts in minor
   *       units, counts, ids), is its own shortest decimal and has at most 16 digits, so
   *       ECMAScript writes its digits as they are: {@code Long.toString}'s text.
   *   <li>A normal double whose {@code Double.toString} has at most 15 significant digits (19.99,
   *       0.1): two different decimals of at most 15 digits are further apart than a double's
   *       spacing (10^-15 of their magnitude against at most 2^-52), so no other decimal of that
   *       length or shorter reads back as the same double, and that text is the shortest and
   *       the only one of its length. {@code Double.toString} always reads back; where it has
   *       more digits than needed (JDK-4511638) it has 16 or 17, and the search decides.
   * </ul>
   */
  private static void appendNumber(double d, StringBuilder out) {
    if (Math.abs(d) < 0x1p53 && d == Math.rint(d) && d != 0) {
      out.append((long) d);
      return;
    }
    out.append(format(d, true));
  }

  /** {@link #formatNumber} without its shortcuts; package-private so tests can compare the two. */
  static String formatNumberGeneral(double d) {
    return format(d, false);
  }

  private static String format(double d, boolean shortcut) {
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
    BigDecimal bd;
    if (d < 0x1p53 && d == Math.rint(d)) {
      // An integer: below 2^53 no other decimal reads back as it.
      bd = BigDecimal.valueOf((long) d).stripTrailingZeros();
    } else {
      // Parsed once: the shortcut's answer when it applies, the search's starting length when not.
      BigDecimal text = new BigDecimal(Double.toString(d)).stripTrailingZeros();
      boolean known = shortcut && d >= Double.MIN_NORMAL && text.precision() <= 15;
      bd = known ? text : shortest(d, text.precision()).stripTrailingZeros();
    }
    String digits = bd.unscaledValue().toString();
    layout(digits, digits.length() - bd.scale(), sb); // d = 0.digits * 10^n
    return sb.toString();
  }

  /**
   * Writes {@code 0.digits × 10^n} as ECMA-262 section 7.1.12.1 lays out a number's digits: plain
   * from 1e-6 to below 1e21, else with an exponent.
   */
  private static void layout(String digits, int n, StringBuilder sb) {
    int k = digits.length();
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
  }

  /**
   * The decimal with the fewest significant digits that reads back as {@code d}, and of those the
   * closest to {@code d} (the even one on a tie): ECMA-262 section 7.1.12.1, step 5. For a positive
   * finite double that is not an integer below 2^53; 17 digits always suffice.
   *
   * @param textDigits the significant digits of {@code Double.toString(d)}, trailing zeros dropped
   */
  private static BigDecimal shortest(double d, int textDigits) {
    BigDecimal exact = new BigDecimal(d);
    // Truncating once to 25 digits keeps the search on short numbers: for p < 25, the p-digit
    // floor of the truncation is the p-digit floor of the exact value.
    BigDecimal truncated = exact.round(new MathContext(25, RoundingMode.DOWN));
    boolean inexact = truncated.compareTo(exact) != 0;
    // Double.toString reads back, so the answer has at most its digit count; and whatever reads
    // back with p digits also does with p + 1, so search downwards from there until nothing does.
    int p = textDigits;
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
