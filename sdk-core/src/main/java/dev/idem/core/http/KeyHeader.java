package dev.idem.core.http;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.internal.KeySyntax;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The idempotency key read from a request's key header: absent, a key, or malformed. The one
 * parser of the key header, used by the client's adapters (a key header the app put on a request)
 * and by the server guard, so that the two can never read one header as two different keys, or
 * one accept what the other refuses.
 *
 * <p><b>The syntax.</b> A key is 1 to {@value IdempotencyKey#MAX_LENGTH} characters of visible
 * ASCII (0x21 to 0x7E) other than the double quote {@code "}, the comma {@code ,} and the
 * backslash {@code \}. The header has exactly one field line, whose value (spaces and tabs around
 * it ignored) is the key either bare ({@code abc-123}) or as an RFC 8941 string
 * ({@code "abc-123"}, the IETF draft's spelling); both spell the same key. Everything else is
 * malformed, and nothing is repaired or guessed.
 *
 * <p><b>Why these characters.</b>
 * <ul>
 *   <li>No space and no control character: HTTP strips or folds them on the way, and the client
 *       never could send a key with a space, so a server that accepted one accepted keys no Idem
 *       client makes. Visible ASCII survives every proxy and charset guess unchanged.</li>
 *   <li>No comma: an intermediary may join two field lines of one header into one, separated by a
 *       comma (RFC 9110, section 5.3). If a key could hold a comma, {@code k3, k4} or {@code k3,k4}
 *       could not be told from one key, and two operations would run, or be refused, under a key
 *       neither client sent. So a comma, like a second field line, is refused.</li>
 *   <li>No double quote and no backslash: then the characters between the quotes of the quoted
 *       spelling are the key itself, and no key needs an escape. RFC 8941 defines {@code \"} and
 *       {@code \\} only, and both would yield a character that is not a key's, so a backslash in
 *       the header is always refused. (The client used to read {@code "a\b"} as the key {@code ab}
 *       while the server refused it.)</li>
 * </ul>
 *
 * <p>Immutable and thread-safe.
 */
public final class KeyHeader {
  private static final KeyHeader ABSENT = new KeyHeader(null, null);

  private final IdempotencyKey key;
  private final String problem;

  private KeyHeader(IdempotencyKey key, String problem) {
    this.key = key;
    this.problem = problem;
  }

  /**
   * Reads a request's key header.
   *
   * @param fieldValues the value of each field line of the header, in order, as the HTTP library
   *     hands them over (none: the header is absent); a library that joins repeated lines itself
   *     hands over one value with a comma, which is refused all the same
   * @return the result; never null
   * @throws NullPointerException if {@code fieldValues} or one of its values is null
   */
  public static KeyHeader parse(List<String> fieldValues) {
    Objects.requireNonNull(fieldValues, "fieldValues");
    if (fieldValues.isEmpty()) {
      return ABSENT;
    }
    if (fieldValues.size() > 1) {
      fieldValues.forEach(v -> Objects.requireNonNull(v, "a key header value"));
      return malformed("more than one field line (one key per request)");
    }
    String value = trim(Objects.requireNonNull(fieldValues.get(0), "a key header value"));
    if (value.indexOf(',') >= 0) {
      return malformed("a comma: several keys joined into one (by an intermediary?), and a key has no comma");
    }
    if (!value.isEmpty() && value.charAt(0) == '"') {
      if (value.length() < 2 || value.charAt(value.length() - 1) != '"') {
        return malformed("an unterminated quoted string");
      }
      value = value.substring(1, value.length() - 1);
      if (value.indexOf('\\') >= 0) {
        return malformed("an escape in the quoted string; no key needs one, and a key has no backslash");
      }
      if (value.indexOf('"') >= 0) {
        return malformed("a double quote inside the quoted string");
      }
    }
    String why = KeySyntax.problem(value);
    return why != null ? malformed(why) : new KeyHeader(IdempotencyKey.of(value), null);
  }

  /**
   * Whether the request had no key header.
   *
   * @return true if there was no field line
   */
  public boolean isAbsent() {
    return key == null && problem == null;
  }

  /**
   * The key, if the header held a valid one.
   *
   * @return the key; empty if the header was absent or malformed
   */
  public Optional<IdempotencyKey> key() {
    return Optional.ofNullable(key);
  }

  /**
   * Why the header was refused, as a phrase that follows "the header has" (such as "a comma:
   * several keys joined into one..."); it never repeats the value.
   *
   * @return the reason; empty if the header was absent or valid
   */
  public Optional<String> problem() {
    return Optional.ofNullable(problem);
  }

  @Override
  public String toString() {
    if (isAbsent()) {
      return "KeyHeader{absent}";
    }
    return key != null ? "KeyHeader{" + key + "}" : "KeyHeader{malformed: " + problem + "}";
  }

  /** HTTP's optional whitespace around a field value: spaces and tabs, and nothing else. */
  private static String trim(String v) {
    int start = 0;
    int end = v.length();
    while (start < end && (v.charAt(start) == ' ' || v.charAt(start) == '\t')) {
      start++;
    }
    while (end > start && (v.charAt(end - 1) == ' ' || v.charAt(end - 1) == '\t')) {
      end--;
    }
    return v.substring(start, end);
  }

  private static KeyHeader malformed(String why) {
    return new KeyHeader(null, why);
  }
}
