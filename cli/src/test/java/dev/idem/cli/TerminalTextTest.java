package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

/** What {@link TerminalText#safe} escapes, and what it leaves as it is. */
class TerminalTextTest {
  @Test
  void ordinaryTextIsPrintedAsItIs() {
    for (String text : new String[] {"acme", "create-order", "Zoë Müller", "東京の注文", "مرحبا", "party 🎉",
        "C:\\orders\\n1", "100% done", " spaced  out "}) {
      assertSame(text, TerminalText.safe(text), text);
    }
    assertEquals("null", TerminalText.safe(null));
  }

  @Test
  void lineBreaksAndTabsAreEscapedAsBashReadsThem() {
    assertEquals("a\\nb\\r\\nc\\td", TerminalText.safe("a\nb\r\nc\td"));
  }

  @Test
  void everyOtherControlCharacterIsAUnicodeEscape() {
    assertEquals("\\u0000\\u0007\\u001b[2J\\u007f", TerminalText.safe("\u0000\u0007\u001b[2J\u007f"), "C0 and DEL");
    assertEquals("\\u0085\\u009b2J", TerminalText.safe("\u0085\u009b2J"), "C1: NEL, and CSI that some terminals act on");
  }

  @Test
  void invisibleFormatCharactersAndSeparatorsAreEscaped() {
    assertEquals("evil\\u202etxt.exe", TerminalText.safe("evil\u202etxt.exe"), "right-to-left override");
    assertEquals("\\u2066x\\u2069\\u200fy\\u061c", TerminalText.safe("\u2066x\u2069\u200fy\u061c"), "isolates, marks");
    assertEquals("ac\\u200bme\\ufeff", TerminalText.safe("ac\u200bme\ufeff"), "zero-width space, BOM");
    assertEquals("a\\u2028b\\u2029", TerminalText.safe("a\u2028b\u2029"), "line and paragraph separators");
    assertEquals("tag\\U000e0041", TerminalText.safe("tag\udb40\udc41"), "a tag character, beyond the BMP");
  }

  @Test
  void anUnpairedSurrogateIsEscapedNotPrintedAsAQuestionMark() {
    assertEquals("x\\ud800y", TerminalText.safe("x\ud800y"));
  }

  @Test
  void anythingIsPrintedByItsStringForm() {
    assertEquals("[a\\nb]", TerminalText.safe(java.util.List.of("a\nb")));
  }
}
