package dev.idem.cli;

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
 * paragraph separators, and unpaired surrogates), {@code \}{@code U000e0001} beyond the Basic Multilingual Plane. That is
 * how bash's {@code $'...'} reads them, so an operator can paste an identity back into
 * {@code show --scope $'...'}. Ordinary text, accented and non-Latin letters and emoji included,
 * is printed as it is; a backslash too, so {@code \n} on the screen is an escape or two characters
 * typed as such, which only a store can tell apart.
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
      } else if (Character.isBmpCodePoint(cp)) {
        b.append(String.format("\\u%04x", cp));
      } else {
        b.append(String.format("\\U%08x", cp));
      }
    }
    return b.toString();
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
      default -> false;
    };
  }
}
