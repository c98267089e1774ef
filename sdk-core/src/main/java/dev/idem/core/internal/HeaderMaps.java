package dev.idem.core.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The one header representation snapshots share: lower-case names, sorted, values in order,
 * unmodifiable. Lower case because HTTP names are case-insensitive and two snapshots of the same
 * message must compare (and fingerprint) equal however the client spelled them.
 */
public final class HeaderMaps {
  private HeaderMaps() {}

  /** An unmodifiable copy with lower-case names; values of names that differ only in case are merged. */
  public static Map<String, List<String>> normalize(Map<String, ? extends List<String>> headers) {
    Map<String, List<String>> copy = new TreeMap<>();
    headers.forEach((k, v) -> copy.computeIfAbsent(k.toLowerCase(Locale.ROOT), x -> new ArrayList<>()).addAll(v));
    copy.replaceAll((k, v) -> List.copyOf(v));
    return Collections.unmodifiableMap(copy);
  }

  /** The first value of {@code name} (any case) in a normalized map. */
  public static Optional<String> first(Map<String, List<String>> normalized, String name) {
    List<String> values = normalized.get(name.toLowerCase(Locale.ROOT));
    return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
  }
}
