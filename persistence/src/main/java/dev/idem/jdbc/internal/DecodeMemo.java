package dev.idem.jdbc.internal;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Decoded values of a JSON column, by their text, so that a write that returns its row (claim,
 * transition) does not parse again the request, attempts or response it parsed or encoded a
 * moment before. Parsing them was about a third of the calling thread's CPU in the journal. Keyed
 * by the text, not by row: decoding is a function of the text alone, so a value found here must be
 * the value a parse would give. Requests and attempts put when encoding are the objects the text
 * was encoded from (those encodings are lossless: the journal contract and the H2 model test
 * compare records across the round trip); a response is put as decoded from the tree it was
 * serialized from, since its stored form drops excluded headers and over-long bodies.
 *
 * <p>Bounded by the length of the texts it holds: it empties itself when they pass
 * {@code maxChars}, and does not keep a text longer than {@code maxChars / 64}. Values must be
 * immutable. Thread-safe.
 */
final class DecodeMemo<T> {
  private final long maxChars;
  private final ConcurrentHashMap<String, T> values = new ConcurrentHashMap<>();
  private final AtomicLong chars = new AtomicLong();

  DecodeMemo(long maxChars) {
    this.maxChars = maxChars;
  }

  /** The value decoded from or encoded to {@code json}, or null if not held. */
  T get(String json) {
    return json == null ? null : values.get(json);
  }

  /** Whether {@link #put} would keep a value of this text: not when the text is too long. */
  boolean keeps(String json) {
    return json != null && json.length() <= maxChars / 64;
  }

  void put(String json, T value) {
    if (!keeps(json) || value == null) {
      return;
    }
    if (chars.addAndGet(json.length()) > maxChars) {
      // Emptied, not evicted one by one: entries are useful for milliseconds (between an
      // operation's writes), so an LRU's bookkeeping would cost more than the re-parses it saves.
      values.clear();
      chars.set(json.length());
    }
    values.put(json, value);
  }
}
