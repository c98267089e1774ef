package dev.idem.core.internal;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiConsumer;

/**
 * The one header representation snapshots share: lower-case names, sorted, values in order,
 * unmodifiable. Lower case because HTTP names are case-insensitive and two snapshots of the same
 * message must compare (and fingerprint) equal however the client spelled them.
 */
public final class HeaderMaps {
  private HeaderMaps() {}

  /**
   * An unmodifiable copy with lower-case names; values of names that differ only in case are merged.
   * A map this class made ({@link #normalize} or {@link Builder}) is returned as it is: it is
   * already in this form and nobody can change it.
   */
  public static Map<String, List<String>> normalize(Map<String, ? extends List<String>> headers) {
    if (headers instanceof Normalized n) {
      return n;
    }
    TreeMap<String, List<String>> copy = new TreeMap<>();
    headers.forEach((k, v) -> {
      // List.copyOf returns an unmodifiable list as it is: a snapshot of a snapshot, or an
      // adapter's List.of per name, costs no list copy.
      List<String> values = List.copyOf(v);
      List<String> before = copy.putIfAbsent(lowerCase(k), values);
      if (before != null) {
        List<String> merged = new ArrayList<>(before);
        merged.addAll(values);
        copy.put(lowerCase(k), List.copyOf(merged));
      }
    });
    return new Normalized(copy);
  }

  /**
   * The first value of {@code name} (any case) in a normalized map. A name given in lower case
   * (as the callers with a constant or configured name pass it) is looked up without a copy.
   */
  public static Optional<String> first(Map<String, List<String>> normalized, String name) {
    List<String> values = normalized.get(name.toLowerCase(Locale.ROOT));
    return values == null || values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
  }

  /**
   * Builds a normalized map from header lines in the order received, for an adapter that reads a
   * response's headers: the snapshot then takes the map as it is, where a map of the adapter's own
   * was copied once more into this form. Not thread-safe; one map per builder.
   */
  public static final class Builder {
    private final TreeMap<String, List<String>> map = new TreeMap<>();
    /** Whether some name got a second value, held in a mutable list until {@link #build}. */
    private boolean merged;

    /**
     * Adds one header line.
     *
     * @param name the name, any case
     * @param value the value
     * @return this builder
     * @throws NullPointerException if either is null
     */
    public Builder add(String name, String value) {
      String key = lowerCase(name);
      List<String> one = List.of(value);
      List<String> before = map.putIfAbsent(key, one);
      if (before != null) {
        if (!(before instanceof ArrayList)) {
          before = new ArrayList<>(before);
          map.put(key, before);
        }
        before.add(value);
        merged = true;
      }
      return this;
    }

    /**
     * The normalized map; the builder must not be used after.
     *
     * @return an unmodifiable map by lower-case name, sorted, values in the order added
     */
    public Map<String, List<String>> build() {
      if (merged) {
        map.replaceAll((k, v) -> List.copyOf(v));
      }
      return new Normalized(map);
    }
  }

  /**
   * Header names most messages carry (the responses of most servers, and the key header of every
   * keyed request), as they are spelled, to their lower-case names: every snapshot lower-cases each
   * of its names, and a name with a capital letter would otherwise be copied each time, on every
   * call. A fixed table, not a cache of what arrives, so it stays this size whatever is received.
   */
  private static final Map<String, String> COMMON_NAMES = common("Cache-Control", "Connection", "Content-Encoding",
      "Content-Length", "Content-Type", "Date", "ETag", "Expires", "Idempotency-Key", "Keep-Alive", "Last-Modified",
      "Location", "Request-Id", "Retry-After", "Server", "Set-Cookie", "Transfer-Encoding", "Vary", "X-Request-Id");

  private static Map<String, String> common(String... names) {
    Map<String, String> table = new HashMap<>();
    for (String name : names) {
      String lower = name.toLowerCase(Locale.ROOT);
      table.put(name, lower);
      // Also as the JDK's HttpServer and some others spell them: only the first letter capital.
      table.put(name.charAt(0) + lower.substring(1), lower);
      table.put(name.toUpperCase(Locale.ROOT), lower);
    }
    return Map.copyOf(table);
  }

  /** The lower-case names of the fixed table of common header names. */
  static Set<String> commonLowerCaseNames() {
    return Set.copyOf(COMMON_NAMES.values());
  }

  /** {@code name} in lower case; a common name's without a copy. */
  static String lowerCase(String name) {
    String known = COMMON_NAMES.get(name);
    return known != null ? known : name.toLowerCase(Locale.ROOT);
  }

  /**
   * A normalized map: read-only, over a sorted map that no one else holds. Its own class only so
   * that {@link #normalize} can tell it from a map someone could still change. Every change is
   * refused: {@link AbstractMap}'s {@code put} throws, and the entries are those of an
   * unmodifiable view.
   */
  private static final class Normalized extends AbstractMap<String, List<String>> {
    private final Map<String, List<String>> view;

    Normalized(TreeMap<String, List<String>> sorted) {
      this.view = Collections.unmodifiableMap(sorted);
    }

    @Override
    public Set<Entry<String, List<String>>> entrySet() {
      return view.entrySet();
    }

    @Override
    public int size() {
      return view.size();
    }

    @Override
    public boolean containsKey(Object key) {
      return view.containsKey(key);
    }

    @Override
    public List<String> get(Object key) {
      return view.get(key);
    }

    @Override
    public Set<String> keySet() {
      return view.keySet();
    }

    @Override
    public Collection<List<String>> values() {
      return view.values();
    }

    /** The sorted map's own walk: the entry set's iteration wraps each entry in an object. */
    @Override
    public void forEach(BiConsumer<? super String, ? super List<String>> action) {
      view.forEach(action);
    }
  }
}
