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
   * The first part of this id that no store keeps as given, or null if there is none: a NUL, which
   * PostgreSQL refuses on every write, or an unpaired surrogate, which the drivers write as '?'.
   * Such an id is refused, never changed: changed, it would share a record with another caller's.
   *
   * @return {@code "caller"}, {@code "route"}, {@code "key"} or null
   */
  String unstorablePart() {
    return StoredText.hasUnstorable(caller) ? "caller" : StoredText.hasUnstorable(route) ? "route"
        : StoredText.hasUnstorable(key) ? "key" : null;
  }

  /**
   * This id, if a store can keep it as given; the stores' own check, for a caller of the SPI other
   * than the guard, which refuses such a request before it reaches its store.
   *
   * @throws IllegalArgumentException if a part holds a NUL or an unpaired surrogate
   */
  RecordId requireStorable() {
    String part = unstorablePart();
    if (part != null) {
      // The value stays out of the message: it is the caller's, and the log line would carry it.
      throw new IllegalArgumentException("the " + part + " of this operation holds a NUL or an unpaired surrogate,"
          + " which no idempotency store keeps as given; refused, never changed, so that it shares no record with"
          + " another");
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
