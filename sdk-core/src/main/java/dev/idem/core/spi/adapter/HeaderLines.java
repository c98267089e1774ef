package dev.idem.core.spi.adapter;

import dev.idem.core.internal.HeaderMaps;
import java.util.List;
import java.util.Map;

/**
 * Builds a header map, one received line at a time, in the form {@code RequestSnapshot} and
 * {@code ResponseSnapshot} keep (names in lower case, sorted; the values of names that differ only
 * in case merged in the order received), so that a snapshot takes it as it is instead of copying
 * it into that form again. For adapters that read headers line by line from their client.
 *
 * <p>Not thread-safe; use one per message, and not after {@link #build()}.
 */
public final class HeaderLines {
  private final HeaderMaps.Builder builder = new HeaderMaps.Builder();

  /** An empty builder. */
  public HeaderLines() {
  }

  /**
   * Adds one header line.
   *
   * @param name the name, any case
   * @param value the value
   * @return this builder
   * @throws NullPointerException if either is null
   */
  public HeaderLines add(String name, String value) {
    builder.add(name, value);
    return this;
  }

  /**
   * The map; this builder must not be used after.
   *
   * @return an unmodifiable map by lower-case name, sorted, values in the order added
   */
  public Map<String, List<String>> build() {
    return builder.build();
  }
}
