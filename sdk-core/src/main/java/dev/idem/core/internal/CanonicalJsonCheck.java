package dev.idem.core.internal;

import java.util.Arrays;

/**
 * Tells, in one pass over the bytes and without building anything, whether a UTF-8 JSON text is
 * already in RFC 8785 canonical form, that is whether {@link JsonCanonicalizer#canonicalize} would
 * give back the same bytes. Most request bodies are written by a serializer that already emits
 * compact JSON, and for them the fingerprint can hash the bytes as they are instead of parsing
 * and re-writing them (that was 10% of a keyed call's CPU).
 *
 * <p>The check is conservative: {@code true} only when the text is certainly canonical. Anything
 * it does not handle itself answers {@code false} (whitespace, keys that need more than a byte
 * comparison to order, escapes other than the canonical ones, nesting deeper than
 * {@value #MAX_DEPTH}), and the caller then canonicalizes the slow way, so the fingerprint is the
 * same either way. When it answers {@code true} the slow way would return either these very bytes
 * or nothing (input it refuses), and in both cases the fingerprint hashes these bytes.
 *
 * <p>Stateless and thread-safe.
 */
public final class CanonicalJsonCheck {
  /** Deeper than this, the slow path decides (and the check needs no more stack than this). */
  static final int MAX_DEPTH = 64;
  /** Integers of at most this many digits are below 2^53, where a double holds them exactly. */
  private static final int EXACT_INTEGER_DIGITS = 15;
  /** The least code point that needs n continuation bytes: anything less is an overlong form. */
  private static final int[] SHORTEST = {0, 0x80, 0x800, 0x10000};

  private final byte[] b;
  private int i;

  private CanonicalJsonCheck(byte[] b) {
    this.b = b;
  }

  /**
   * Whether {@code json} is certainly one JSON value in RFC 8785 canonical form.
   *
   * @param json UTF-8 bytes
   * @return true if canonicalizing it would give the same bytes; false if it is not canonical,
   *     not JSON, or not something this check decides
   */
  public static boolean isCanonical(byte[] json) {
    if (json.length == 0) {
      return false;
    }
    CanonicalJsonCheck c = new CanonicalJsonCheck(json);
    return c.value(0) && c.i == json.length;
  }

  private boolean value(int depth) {
    if (i >= b.length) {
      return false;
    }
    return switch (b[i]) {
      case '{' -> depth < MAX_DEPTH && container(depth + 1, '}');
      case '[' -> depth < MAX_DEPTH && container(depth + 1, ']');
      case '"' -> string() >= 0;
      case 't' -> literal("true");
      case 'f' -> literal("false");
      case 'n' -> literal("null");
      default -> number();
    };
  }

  /** An object ({@code close} is '}': members, their keys in order) or an array (']': elements). */
  private boolean container(int depth, char close) {
    i++; // { or [
    if (skip(close)) {
      return true;
    }
    int previousStart = -1;
    int previousEnd = -1;
    while (true) {
      if (close == '}') {
        if (i >= b.length || b[i] != '"') {
          return false;
        }
        int start = i + 1;
        if (string() != 0) {
          // A key with an escape or a non-ASCII character: its UTF-16 order needs decoding.
          return false;
        }
        int end = i - 1; // the closing quote
        // For ASCII bytes (non-negative), byte order is the UTF-16 code unit order RFC 8785
        // section 3.2.3 sorts by. Out of order, or a duplicate (which the canonicalizer refuses):
        // the slow path decides.
        if (previousStart >= 0 && Arrays.compare(b, previousStart, previousEnd, b, start, end) >= 0) {
          return false;
        }
        previousStart = start;
        previousEnd = end;
        if (!skip(':')) {
          return false;
        }
      }
      if (!value(depth)) {
        return false;
      }
      if (skip(close)) {
        return true;
      }
      if (!skip(',')) {
        return false;
      }
    }
  }

  /** Steps over {@code c} if it comes next. */
  private boolean skip(char c) {
    if (i < b.length && b[i] == c) {
      i++;
      return true;
    }
    return false;
  }

  /** Steps over the ASCII digits that come next, and says how many there were. */
  private int digits() {
    int start = i;
    while (i < b.length && b[i] >= '0' && b[i] <= '9') {
      i++;
    }
    return i - start;
  }

  /**
   * Reads a string whose every character and escape is as the canonicalizer writes it.
   *
   * @return -1 if it is not, 0 if it is and holds only printable ASCII without escapes, 1 if it
   *     is and holds an escape or a non-ASCII character
   */
  private int string() {
    i++; // opening quote
    int kind = 0;
    while (i < b.length) {
      int c = b[i] & 0xff;
      if (c == '"') {
        i++;
        return kind;
      }
      if (c < 0x20) {
        return -1; // a raw control character is not JSON
      }
      if (c == '\\') {
        if (!escape()) {
          return -1;
        }
        kind = 1;
      } else if (c >= 0x80) {
        if (!utf8(c)) {
          return -1;
        }
        kind = 1;
      } else {
        i++;
      }
    }
    return -1;
  }

  /**
   * The canonicalizer writes {@code \" \\ \b \f \n \r \t} as such, other characters below U+0020 as
   * a six-character escape (backslash, u, 00, two lower-case hex digits), and every other character as itself.
   */
  private boolean escape() {
    if (i + 1 < b.length && JsonCanonicalizer.SHORT_ESCAPES.indexOf(b[i + 1]) >= 0) {
      i += 2;
      return true;
    }
    if (i + 5 >= b.length || b[i + 1] != 'u' || b[i + 2] != '0' || b[i + 3] != '0') {
      return false;
    }
    int hi = b[i + 4];
    int lo = b[i + 5];
    int low = lo >= '0' && lo <= '9' ? lo - '0' : lo >= 'a' && lo <= 'f' ? lo - 'a' + 10 : -1;
    if ((hi != '0' && hi != '1') || low < 0) {
      return false;
    }
    int code = (hi - '0') * 16 + low;
    if (code == '\b' || code == '\t' || code == '\n' || code == '\f' || code == '\r') {
      return false; // these have a short escape
    }
    i += 6;
    return true;
  }


  /** One well-formed UTF-8 sequence (RFC 3629: shortest form, no surrogates, at most U+10FFFF). */
  private boolean utf8(int c) {
    if (c < 0xc2 || c > 0xf4) {
      return false;
    }
    // A lead byte C2-DF, E0-EF or F0-F4 starts 1, 2 or 3 continuation bytes and carries 5, 4 or
    // 3 bits of the code point.
    int n = c < 0xe0 ? 1 : c < 0xf0 ? 2 : 3;
    int cp = c & (0x3f >> n);
    if (i + n >= b.length) {
      return false;
    }
    for (int k = 1; k <= n; k++) {
      int cc = b[i + k] & 0xff;
      if ((cc & 0xc0) != 0x80) {
        return false;
      }
      cp = (cp << 6) | (cc & 0x3f);
    }
    if (cp < SHORTEST[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    i += n + 1;
    return true;
  }

  private boolean literal(String word) {
    int n = word.length();
    if (i + n > b.length) {
      return false;
    }
    for (int k = 0; k < n; k++) {
      if (b[i + k] != word.charAt(k)) {
        return false;
      }
    }
    i += n;
    return true;
  }

  /**
   * A number as ECMAScript writes it. Short integers are checked by their digits (below 2^53 a
   * double holds them exactly, and the canonical form of an integer is its plain digits); any other
   * number is read as a double and formatted as the canonicalizer would, then compared.
   */
  private boolean number() {
    int start = i;
    skip('-');
    int intStart = i;
    int intDigits = digits();
    if (intDigits == 0 || (intDigits > 1 && b[intStart] == '0')) {
      return false;
    }
    boolean plainInteger = true;
    if (skip('.')) {
      plainInteger = false;
      if (digits() == 0) {
        return false;
      }
    }
    if (skip('e') || skip('E')) {
      plainInteger = false;
      if (!skip('+')) {
        skip('-');
      }
      if (digits() == 0) {
        return false;
      }
    }
    if (plainInteger && intDigits <= EXACT_INTEGER_DIGITS) {
      // "-0" is written "0".
      return !(b[intStart] == '0' && intStart > start);
    }
    String token = new String(b, start, i - start, java.nio.charset.StandardCharsets.US_ASCII);
    double d = Double.parseDouble(token);
    if (Double.isNaN(d) || Double.isInfinite(d)) {
      return false;
    }
    return JsonCanonicalizer.formatNumber(d).equals(token);
  }
}
