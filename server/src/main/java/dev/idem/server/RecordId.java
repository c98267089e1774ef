package dev.idem.server;

import dev.idem.storage.StoredText;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;

/**
 * The identity of one logical operation on the server: who asked, which route, which key. The
 * guard fills the parts its {@link KeyScope} leaves out with {@code "*"}, so two callers (or two
 * routes) share a key only when the scope says they should.
 *
 * @param caller the caller scope (an account or tenant id, never a credential), or {@code "*"}
 * @param route the route, such as {@code POST /orders}, or {@code "*"}
 * @param key the idempotency key, unquoted, at most 255 characters
 */
public record RecordId(String caller, String route, String key) {
  /**
   * The longest caller a store keeps, in UTF-8 bytes: 1024. With {@link #MAX_ROUTE_BYTES} and the
   * 255-byte key, an id fits one PostgreSQL btree entry (at most 2704 bytes), which the record's
   * primary key (caller, route, key) needs; a longer one failed every claim there, a 503 on every
   * retry. Longer is refused on every store alike.
   */
  public static final int MAX_CALLER_BYTES = 1024;

  /**
   * The longest route a store keeps ({@code "POST /orders/..."}), in UTF-8 bytes: 1024; see
   * {@link #MAX_CALLER_BYTES}.
   */
  public static final int MAX_ROUTE_BYTES = 1024;

  /** The longest key a store keeps, in UTF-8 bytes: the guard's 255 visible ASCII characters. */
  private static final int MAX_KEY_BYTES = 255;

  /**
   * Makes the record.
   *
   * @param caller the caller scope (an account or tenant id, never a credential), or {@code "*"}
   * @param route the route, such as {@code POST /orders}, or {@code "*"}
   * @param key the idempotency key, unquoted, at most 255 characters
   * @throws NullPointerException if any component is null
   */
  public RecordId {
    Objects.requireNonNull(caller, "caller");
    Objects.requireNonNull(route, "route");
    Objects.requireNonNull(key, "key");
  }

  /**
   * Why no store keeps this id as given, or null if one does: the first part that holds a NUL,
   * which PostgreSQL refuses on every write, or an unpaired surrogate, which the drivers write as
   * '?'; or a caller or route longer than {@link #MAX_CALLER_BYTES} or {@link #MAX_ROUTE_BYTES}, or
   * a key longer than 255 bytes, in UTF-8, which PostgreSQL's primary-key index refuses. Such an id
   * is refused, never changed: changed (or cut), it would share a record with another caller's.
   *
   * @return such as {@code "caller holds a NUL or an unpaired surrogate"}, naming the part but never
   *     holding its value; or null
   */
  String unstorable() {
    String[][] parts = {{"caller", caller}, {"route", route}, {"key", key}};
    int[] limits = {MAX_CALLER_BYTES, MAX_ROUTE_BYTES, MAX_KEY_BYTES};
    for (int i = 0; i < parts.length; i++) {
      String value = parts[i][1];
      if (StoredText.hasUnstorable(value)) {
        return parts[i][0] + " holds a NUL or an unpaired surrogate";
      }
      if (utf8Length(value) > limits[i]) {
        return parts[i][0] + " is longer than " + limits[i] + " bytes in UTF-8";
      }
    }
    return null;
  }

  /** The UTF-8 length of {@code s}, without encoding it; an unpaired surrogate counts 3 (it is refused anyway). */
  private static long utf8Length(String s) {
    long n = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n++;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4;
        i++;
      } else {
        n += 3;
      }
    }
    return n;
  }

  /**
   * This id, if a store can keep it as given; the stores' own check, for a caller of the SPI other
   * than the guard, which refuses such a request before it reaches its store.
   *
   * @throws IllegalArgumentException if a part holds a NUL or an unpaired surrogate, or is longer
   *     than its limit
   */
  RecordId requireStorable() {
    String why = unstorable();
    if (why != null) {
      // The value stays out of the message: it is the caller's, and the log line would carry it.
      throw new IllegalArgumentException("the " + why + ", which no idempotency store keeps as given; refused,"
          + " never changed, so that it shares no record with another");
    }
    return this;
  }

  /**
   * A stable, opaque id for this operation, for a route that answers 202 with an operation
   * resource ({@code Location: /operations/{id}}): {@code op_} and 32 hex digits of a SHA-256 over
   * caller, route and key. Every request with the key gets the same id, even one that runs the
   * handler again after a crash, so the work it names can be keyed by it (an {@code INSERT ... ON
   * CONFLICT DO NOTHING} on the job table) and never start twice. The key cannot be read back from
   * it.
   *
   * @return the operation id
   */
  public String operationId() {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      // Lengths first, so that no two (caller, route, key) triples share an input.
      for (String part : new String[] {caller, route, key}) {
        byte[] b = part.getBytes(StandardCharsets.UTF_8);
        sha.update(Integer.toString(b.length).getBytes(StandardCharsets.US_ASCII));
        sha.update((byte) ':');
        sha.update(b);
      }
      return "op_" + HexFormat.of().formatHex(sha.digest(), 0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }
}
