package dev.idem.spring.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.http.HttpHeaders;

/**
 * Reads and copies {@link HttpHeaders} with only the methods Spring Framework 6.2 and 7 share:
 * in 7, {@code HttpHeaders} is no longer a {@code MultiValueMap}, and {@code get(Object)},
 * {@code keySet()}, {@code remove(Object)} and {@code containsKey} are gone, so code compiled
 * against 6.2 that calls them fails on Boot 4 with {@link NoSuchMethodError}. Stateless.
 */
public final class SpringHeaders {
  private SpringHeaders() {}

  /** Every value of {@code name}, any case, in order; empty when absent. */
  public static List<String> values(HttpHeaders headers, String name) {
    List<String> out = new ArrayList<>();
    headers.forEach((n, v) -> {
      if (n.equalsIgnoreCase(name)) {
        out.addAll(v);
      }
    });
    return out;
  }

  /** The headers as a plain map, in order. */
  public static Map<String, List<String>> toMap(HttpHeaders headers) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    headers.forEach((n, v) -> out.computeIfAbsent(n, k -> new ArrayList<>()).addAll(v));
    return out;
  }

  /**
   * A copy of {@code headers} without {@code name} (any case), and with {@code name: value} if
   * {@code value} is not null.
   */
  public static HttpHeaders copyWith(HttpHeaders headers, String name, String value) {
    HttpHeaders copy = new HttpHeaders();
    headers.forEach((n, v) -> {
      if (!n.equalsIgnoreCase(name)) {
        copy.addAll(n, v);
      }
    });
    if (value != null) {
      copy.set(name, value);
    }
    return copy;
  }

  /** Replaces every header of {@code target} with those of {@code source}. */
  public static void replaceAll(HttpHeaders target, Map<String, List<String>> source) {
    target.clear();
    source.forEach(target::addAll);
  }
}
