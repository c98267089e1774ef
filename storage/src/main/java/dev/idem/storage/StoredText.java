package dev.idem.storage;

/**
 * Free text (a failure's message, a decision, a reason) as Idem's stores keep it: each NUL
 * (U+0000) and each unpaired UTF-16 surrogate replaced with U+FFFD, then cut to the column's
 * length, never between the two halves of a surrogate pair. PostgreSQL's text types refuse a NUL,
 * and such text often quotes what a peer sent (a server's bytes in a transport failure, a webhook
 * payload in a handler's exception): left in, it failed the very write that records the failure.
 * No encoding stores an unpaired surrogate (the drivers write '?'), so a record returned with one
 * would differ from the record read back; a cut between a pair's halves would leave one. Both are
 * replaced on every dialect, though SQLite and H2 would store a NUL, so that a record reads back the
 * same whichever database holds it.
 *
 * <p>For free text only: an identity (a key, an event id, a caller) is refused when it holds a NUL,
 * never changed, since two different identities would then share one row. Thread-safe (stateless).
 */
public final class StoredText {
  private StoredText() {
  }

  /**
   * @param s the text, or null
   * @param max the column's length in characters, at least 1
   * @return {@code s} with each NUL and unpaired surrogate as U+FFFD, cut to at most {@code max}
   *     characters; null for null
   * @throws IllegalArgumentException if {@code max} is below 1
   */
  public static String of(String s, int max) {
    return of(s, max, "");
  }

  /**
   * @param s the text, or null
   * @param max the column's length in characters, longer than {@code marker}
   * @param marker appended where the text was cut (such as {@code "..."}), within {@code max}
   * @return {@code s} with each NUL and unpaired surrogate as U+FFFD, cut to at most {@code max}
   *     characters, the marker included; null for null
   * @throws IllegalArgumentException if {@code max} is not longer than {@code marker}
   */
  public static String of(String s, int max, String marker) {
    if (max <= marker.length()) {
      throw new IllegalArgumentException("max " + max + " leaves no room for the text beside the marker \"" + marker
          + "\"");
    }
    if (s == null) {
      return null;
    }
    String t = replaceUnstorable(s);
    if (t.length() <= max) {
      return t;
    }
    int end = max - marker.length();
    // Drop the whole pair rather than keep its high half, which the driver would mangle: the text
    // stays a prefix of what was given.
    if (Character.isHighSurrogate(t.charAt(end - 1))) {
      end--;
    }
    return t.substring(0, end) + marker;
  }

  /**
   * Whether {@code s} holds what no store keeps as given: a NUL (PostgreSQL refuses it) or an
   * unpaired surrogate (the drivers write '?'). An identity holding one is refused, and a look-up by
   * one finds nothing, since no stored identity holds one.
   *
   * @param s the text
   * @return whether it holds a NUL or an unpaired surrogate
   */
  public static boolean hasUnstorable(String s) {
    return replaceUnstorable(s) != s;
  }

  /** {@code s} with each NUL and each unpaired surrogate replaced with U+FFFD; {@code s} itself if it has none. */
  private static String replaceUnstorable(String s) {
    StringBuilder b = null;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      int width = Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))
          ? 2 : 1;
      boolean unstorable = c == '\0' || (width == 1 && Character.isSurrogate(c));
      if (unstorable && b == null) {
        b = new StringBuilder(s.length()).append(s, 0, i);
      }
      if (unstorable) {
        b.append('\uFFFD');
      } else if (b != null) {
        b.append(s, i, i + width);
      }
      i += width - 1;
    }
    return b == null ? s : b.toString();
  }
}
