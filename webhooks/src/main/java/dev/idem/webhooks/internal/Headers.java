package dev.idem.webhooks.internal;

import dev.idem.webhooks.RejectionReason;
import dev.idem.webhooks.WebhookRejectedException;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Case-insensitive, read-only access to the request headers. A lookup scans the caller's map (a
 * delivery has a dozen headers and a verifier reads three or four), which costs less than copying
 * it into a sorted map on every delivery. Names that differ only in case read as one: the first
 * value of the first such name with values, in the map's order.
 */
public final class Headers {
  private final Map<String, ? extends List<String>> headers;

  private Headers(Map<String, ? extends List<String>> headers) {
    this.headers = headers;
  }

  /** @param headers names in any case; null values are not allowed */
  public static Headers of(Map<String, ? extends List<String>> headers) {
    return new Headers(Objects.requireNonNull(headers, "headers"));
  }

  /** The first value of {@code name}, trimmed; null when absent or blank. */
  public String first(String name) {
    for (Map.Entry<String, ? extends List<String>> e : headers.entrySet()) {
      List<String> values = e.getValue();
      if (name.equalsIgnoreCase(e.getKey()) && !values.isEmpty()) {
        String v = values.get(0).trim();
        return v.isEmpty() ? null : v;
      }
    }
    return null;
  }

  /** The first value of {@code name}, or a HEADER rejection naming it. */
  public String require(String name) throws WebhookRejectedException {
    String v = first(name);
    if (v == null) {
      throw new WebhookRejectedException(RejectionReason.HEADER, "missing header " + name);
    }
    return v;
  }
}
