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
    headers.forEach((k, v) -> {
      // List.copyOf returns an unmodifiable list as it is: a snapshot of a snapshot, or an
      // adapter's List.of per name, costs no list copy.
      List<String> values = List.copyOf(v);
      List<String> before = copy.putIfAbsent(k.toLowerCase(Locale.ROOT), values);
      if (before != null) {
        List<String> merged = new ArrayList<>(before);
        merged.addAll(values);
        copy.put(k.toLowerCase(Locale.ROOT), List.copyOf(merged));
      }
    });
    return Collections.unmodifiableMap(copy);
  }

  /** The first value of {@code name} (any case) in a normalized map. */
  public static Optional<String> first(Map<String, List<String>> normalized, String name) {
    List<String> values = normalized.get(name.toLowerCase(Locale.ROOT));
    return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
  }
}
