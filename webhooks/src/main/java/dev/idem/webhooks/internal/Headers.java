package dev.idem.webhooks.internal;

import dev.idem.core.internal.HeaderMaps;
import java.util.List;
import java.util.Map;

/** Case-insensitive, read-only request headers, normalized once per delivery. */
public final class Headers {
  private final Map<String, List<String>> normalized;

  private Headers(Map<String, List<String>> normalized) {
    this.normalized = normalized;
  }

  /** @param headers names in any case; null values are not allowed */
  public static Headers of(Map<String, ? extends List<String>> headers) {
    return new Headers(HeaderMaps.normalize(headers));
  }

  /** The first value of {@code name}, trimmed; null when absent or blank. */
  public String first(String name) {
    String v = HeaderMaps.first(normalized, name).orElse(null);
    if (v == null) {
      return null;
    }
    v = v.trim();
    return v.isEmpty() ? null : v;
  }

  /** The first value of {@code name}, or a HEADER rejection naming it. */
  public String require(String name) throws dev.idem.webhooks.WebhookRejectedException {
    String v = first(name);
    if (v == null) {
      throw new dev.idem.webhooks.WebhookRejectedException(dev.idem.webhooks.RejectionReason.HEADER,
          "missing header " + name);
    }
    return v;
  }
}
