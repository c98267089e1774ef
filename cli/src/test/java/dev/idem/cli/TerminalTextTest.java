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

  @Test
  void whatTheOutputCharsetCannotEncodeIsEscapedAndTheRestKept() {
    var ascii = java.nio.charset.StandardCharsets.US_ASCII.newEncoder();
    assertEquals("caf\\u00e9 caf\\u00e8 \\U0001f600 a\\b", TerminalText.encodable("caf\u00e9 caf\u00e8 \ud83d\ude00 a\\b", ascii));
    assertEquals("caf\u00e9", TerminalText.encodable("caf\u00e9", java.nio.charset.StandardCharsets.ISO_8859_1.newEncoder()));
    String plain = "caf plain";
    assertSame(plain, TerminalText.encodable(plain, ascii));
  }

  @Test
  void aSurrogatePairSplitAcrossTwoWritesIsEscapedWhole() throws Exception {
    var bytes = new java.io.ByteArrayOutputStream();
    try (java.io.Writer w = EncodableWriter.of(bytes, java.nio.charset.StandardCharsets.US_ASCII)) {
      w.write("x\ud83d");
      w.write("\ude00y\u00e9");
    }
    assertEquals("x\\U0001f600y\\u00e9", bytes.toString(java.nio.charset.StandardCharsets.US_ASCII));
  }
}
