package dev.idem.cli;

import java.nio.charset.CharsetEncoder;
import java.util.Locale;

/**
 * Makes text read from a store safe to print on an operator's terminal. A scope, an operation
 * name, an app reference, a webhook's source, id and type, a handler's error, a guard record's
 * caller and route are whatever an app, a webhook sender or an HTTP client gave: printed raw, a
 * newline in one forges a row of a listing (a script counting lines counts an operation that does
 * not exist), an ANSI escape clears the screen or retitles the terminal, and a bidi override
 * shows a name reversed.
 *
 * <p>So every character that is not text you can see is printed as an escape: {@code \n},
 * {@code \r}, {@code \t}, and {@code \}{@code u001b} for the others (C0 controls, DEL, C1
 * controls, Unicode format characters such as bidi overrides and zero-width spaces, the line and
 * paragraph separators, unpaired surrogates, and every other default-ignorable code point: the
 * combining grapheme joiner, variation selectors, the Hangul fillers),
 * {@code \}{@code U000e0001} beyond the Basic Multilingual Plane. That is
 * how bash's {@code $'...'} reads them, so an operator can paste an identity back into
 * {@code show --scope $'...'}. Ordinary text, accented and non-Latin letters and emoji included,
 * is printed as it is (an emoji's variation selector U+FE0F, which only picks its look, as an
 * escape); a backslash too, so {@code \n} on the screen is an escape or two characters
 * typed as such, which only a store can tell apart. Where the output's charset cannot encode a
 * letter (US-ASCII in the POSIX locale), {@link EncodableWriter} escapes it the same way
 * ({@link #encodable}), rather than let the encoder print {@code ?}.
 *
 * <p>Stateless and thread-safe.
 */
final class TerminalText {
  private TerminalText() {}

  /**
   * {@code value} as {@link String#valueOf(Object)} gives it, with every character that is not
   * visible text escaped.
   *
   * @param value anything, or null (printed as {@code null})
   * @return the text, safe to print; the same string if nothing needed escaping
   */
  static String safe(Object value) {
    String s = String.valueOf(value);
    int i = 0;
    while (i < s.length() && !escaped(s.codePointAt(i))) {
      i += Character.charCount(s.codePointAt(i));
    }
    if (i == s.length()) {
      return s;
    }
    StringBuilder b = new StringBuilder(s.length() + 16).append(s, 0, i);
    while (i < s.length()) {
      int cp = s.codePointAt(i);
      i += Character.charCount(cp);
      if (!escaped(cp)) {
        b.appendCodePoint(cp);
      } else if (cp == '\n') {
        b.append("\\n");
      } else if (cp == '\r') {
        b.append("\\r");
      } else if (cp == '\t') {
        b.append("\\t");
      } else {
        appendEscape(b, cp);
      }
    }
    return b.toString();
  }

  /**
   * {@code text} with every character that {@code encoder} cannot encode escaped as {@link #safe}
   * escapes ({@code \}{@code u00e9}, {@code \}{@code U0001f600}). An encoder replaces such a
   * character with {@code ?}: in the POSIX locale (cron, systemd, an exec into an image without
   * {@code LANG}) the output charset is US-ASCII, and two scopes that differ in one accented letter
   * would print as the same row, neither of them as it is stored.
   *
   * @param text what is about to be written
   * @param encoder the output's encoder, used for {@link CharsetEncoder#canEncode} only; not
   *     thread-safe, so the caller's own
   * @return the text, every character of it encodable; the same text if it all was
   */
  static String encodable(CharSequence text, CharsetEncoder encoder) {
    StringBuilder b = null;
    int i = 0;
    while (i < text.length()) {
      int cp = Character.codePointAt(text, i);
      int next = i + Character.charCount(cp);
      // ASCII needs no look-up: every charset a JVM picks for a locale encodes it.
      if (cp < 0x80 || encoder.canEncode(text.subSequence(i, next))) {
        if (b != null) {
          b.appendCodePoint(cp);
        }
      } else {
        if (b == null) {
          b = new StringBuilder(text.length() + 16).append(text, 0, i);
        }
        appendEscape(b, cp);
      }
      i = next;
    }
    return b == null ? text.toString() : b.toString();
  }

  private static void appendEscape(StringBuilder b, int cp) {
    if (Character.isBmpCodePoint(cp)) {
      b.append(String.format(Locale.ROOT, "\\u%04x", cp));
    } else {
      b.append(String.format(Locale.ROOT, "\\U%08x", cp));
    }
  }

  /**
   * Whether a terminal or a reader could take {@code cp} for something other than a character of
   * the field: a control (it acts), a format character (invisible, or reorders what follows), a
   * line or paragraph separator (breaks the line in some viewers), or half of a surrogate pair
   * (an encoder prints it as {@code ?}, hiding which one it was).
   */
  private static boolean escaped(int cp) {
    return switch (Character.getType(cp)) {
      case Character.CONTROL, Character.FORMAT, Character.LINE_SEPARATOR, Character.PARAGRAPH_SEPARATOR,
          Character.SURROGATE -> true;
      default -> defaultIgnorable(cp);
    };
  }

  /**
   * Unicode's Default_Ignorable_Code_Point, as pairs of first and last code point, in order: what
   * a renderer shows as nothing when it has no glyph for it. Most are format characters (escaped
   * by category already), but not all: the combining grapheme joiner U+034F, the Khmer inherent
   * vowels, the Mongolian and the other variation selectors (nonspacing marks), the Hangul fillers
   * U+115F, U+1160, U+3164 and U+FFA0 (letters), and the unassigned ones kept for future such
   * characters. Printed raw, {@code acme} followed by U+034F lists as {@code acme}. Java has no query for the
   * property, hence the table: from DerivedCoreProperties.txt of Unicode 14.0.0, ranges merged.
   */
  private static final int[] DEFAULT_IGNORABLE = {
    0x00AD, 0x00AD, 0x034F, 0x034F, 0x061C, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180F,
    0x200B, 0x200F, 0x202A, 0x202E, 0x2060, 0x206F, 0x3164, 0x3164, 0xFE00, 0xFE0F, 0xFEFF, 0xFEFF,
    0xFFA0, 0xFFA0, 0xFFF0, 0xFFF8, 0x1BCA0, 0x1BCA3, 0x1D173, 0x1D17A, 0xE0000, 0xE0FFF,
  };

  private static boolean defaultIgnorable(int cp) {
    for (int i = 0; i < DEFAULT_IGNORABLE.length && DEFAULT_IGNORABLE[i] <= cp; i += 2) {
      if (cp <= DEFAULT_IGNORABLE[i + 1]) {
        return true;
      }
    }
    return false;
  }
}
