package dev.idem.server.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Stored response headers as text, one {@code name:value} line per value. A header value cannot
 * hold a line break on the wire, and a name cannot hold a colon, so no escaping is needed.
 */
public final class HeaderCodec {
  private HeaderCodec() {}

  /**
   * @param headers names to values
   * @return the text form
   */
  public static String encode(Map<String, List<String>> headers) {
    StringBuilder sb = new StringBuilder();
    headers.forEach((name, values) -> values.forEach(v -> sb.append(name).append(':').append(v).append('\n')));
    return sb.toString();
  }

  /**
   * @param text the text form, or null
   * @return names to values, in the order written
   */
  public static Map<String, List<String>> decode(String text) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    if (text == null) {
      return out;
    }
    for (String line : text.split("\n")) {
      int colon = line.indexOf(':');
      if (colon > 0) {
        out.computeIfAbsent(line.substring(0, colon), n -> new ArrayList<>()).add(line.substring(colon + 1));
      }
    }
    return out;
  }
}
