package dev.idem.jdbc.internal;

import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.io.SerializedString;

/**
 * JSON's standard escapes, and every UTF-16 surrogate written as a {@code \\uXXXX} escape. A
 * string in the JSON columns may hold an unpaired surrogate (a transport failure's message), which
 * no encoding stores (the drivers write '?'); as an escape it is plain ASCII, and reads back as
 * given, as a NUL does. Paired surrogates are escaped too: the escape cannot see the next
 * character, and a pair of escapes reads back as the pair. Stateless; thread-safe.
 */
final class SurrogateEscapes extends CharacterEscapes {
  private static final long serialVersionUID = 1L;

  private final int[] ascii = standardAsciiEscapesForJSON();

  @Override
  public int[] getEscapeCodesForAscii() {
    return ascii;
  }

  @Override
  public SerializableString getEscapeSequence(int ch) {
    return Character.isSurrogate((char) ch) ? new SerializedString(String.format("\\u%04X", ch)) : null;
  }
}
