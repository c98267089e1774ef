package dev.idem.webhooks.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Case-insensitive, read-only request headers, normalized once per delivery. */
public final class Headers {
  private final Map<String, List<String>> normalized;

  private Headers(Map<String, List<String>> normalized) {
    this.normalized = normalized;
  }

  /** @param headers names in any case; null values are not allowed */
  public static Headers of(Map<String, ? extends List<String>> headers) {
    // Its own small map rather than core's internal HeaderMaps: internals are for their own module.
    Map<String, List<String>> copy = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    headers.forEach((k, v) -> copy.computeIfAbsent(k, x -> new ArrayList<>()).addAll(v));
    copy.replaceAll((k, v) -> List.copyOf(v));
    return new Headers(Collections.unmodifiableMap(copy));
  }

  /** The first value of {@code name}, trimmed; null when absent or blank. */
  public String first(String name) {
    List<String> values = normalized.get(name);
    if (values == null || values.isEmpty()) {
      return null;
    }
    String v = values.get(0).trim();
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
