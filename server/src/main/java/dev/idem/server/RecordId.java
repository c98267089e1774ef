package dev.idem.server;

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
}
