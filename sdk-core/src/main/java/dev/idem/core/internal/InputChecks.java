package dev.idem.core.internal;

import dev.idem.core.Operation;
import dev.idem.core.spi.RequestSnapshot;
import java.util.List;
import java.util.Map;

/**
 * Refuses, before anything is journaled or sent, input that a journal or the wire would change or
 * reject later: a header that cannot be sent (a CR/LF in a value would also split the request), and
 * names, scopes and references that do not survive a round trip through UTF-8 storage (an unpaired
 * surrogate is stored as {@code ?}, so the operation could no longer be found after a restart).
 * Stateless.
 */
public final class InputChecks {
  private InputChecks() {}

  /**
   * @throws IllegalArgumentException saying which part is invalid, where, and why
   */
  public static void check(Operation operation) {
    text(operation.id().scope(), "scope");
    text(operation.id().operation(), "operation name");
    operation.reference().ifPresent(r -> text(r, "reference"));
    RequestSnapshot request = operation.request();
    token(request.method(), "HTTP method");
    for (Map.Entry<String, List<String>> h : request.headers().entrySet()) {
      token(h.getKey(), "header name");
      for (String value : h.getValue()) {
        headerValue(h.getKey(), value);
      }
    }
  }

  /** Scopes, operation names and references: no control characters, no unpaired surrogates. */
  public static void text(String value, String what) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (Character.isISOControl(c)) {
        throw new IllegalArgumentException(what + " has a control character (U+" + hex(c) + ") at index " + i
            + "; it is refused so that it is stored and found again exactly as given");
      }
      if (Character.isHighSurrogate(c) && i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        throw new IllegalArgumentException(what + " has an unpaired surrogate (U+" + hex(c) + ") at index " + i
            + "; it cannot be stored as UTF-8, and the operation could not be found again after a restart");
      }
    }
  }

  /** RFC 9110 section 5.6.2: a token is one or more tchar. */
  private static void token(String value, String what) {
    if (value.isEmpty()) {
      throw new IllegalArgumentException(what + " is empty");
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      boolean tchar = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
      if (!tchar) {
        throw new IllegalArgumentException(what + " '" + printable(value) + "' has an invalid character (U+" + hex(c)
            + ") at index " + i + "; RFC 9110 allows letters, digits and !#$%&'*+-.^_`|~ only");
      }
    }
  }

  /** RFC 9110 section 5.5: no CR, LF, NUL or other control character but HTAB; no unpaired surrogate. */
  private static void headerValue(String name, String value) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if ((c < 0x20 && c != '\t') || c == 0x7f) {
        throw new IllegalArgumentException("value of header '" + name + "' has a control character (U+" + hex(c)
            + ") at index " + i + (c == '\r' || c == '\n' ? " (CR/LF would split the request)" : "")
            + "; nothing was journaled or sent");
      }
      if (Character.isSurrogate(c)) {
        throw new IllegalArgumentException("value of header '" + name + "' has a character outside Latin-1 (U+"
            + hex(c) + ") at index " + i + " that cannot be sent; nothing was journaled or sent");
      }
    }
  }

  private static String hex(char c) {
    return String.format("%04X", (int) c);
  }

  /** The name with its invalid characters shown as escapes, so the message itself stays one line. */
  private static String printable(String s) {
    StringBuilder b = new StringBuilder();
    s.chars().forEach(c -> b.append(c < 0x20 || c == 0x7f || Character.isSurrogate((char) c)
        ? "\\u" + hex((char) c) : String.valueOf((char) c)));
    return b.toString();
  }
}
