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

  /** Unicode 14.0.0's DerivedCoreProperties.txt, Default_Ignorable_Code_Point, ranges merged. */
  @Test
  void everyDefaultIgnorableCodePointIsEscapedAndItsNeighboursAreNot() {
    int[] ranges = {0x00AD, 0x00AD, 0x034F, 0x034F, 0x061C, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180F,
        0x200B, 0x200F, 0x202A, 0x202E, 0x2060, 0x206F, 0x3164, 0x3164, 0xFE00, 0xFE0F, 0xFEFF, 0xFEFF, 0xFFA0, 0xFFA0,
        0xFFF0, 0xFFF8, 0x1BCA0, 0x1BCA3, 0x1D173, 0x1D17A, 0xE0000, 0xE0FFF};
    for (int i = 0; i < ranges.length; i += 2) {
      for (int cp = ranges[i]; cp <= ranges[i + 1]; cp++) {
        String expected = Character.isBmpCodePoint(cp) ? String.format(java.util.Locale.ROOT, "a\\u%04x", cp)
            : String.format(java.util.Locale.ROOT, "a\\U%08x", cp);
        assertEquals(expected, TerminalText.safe("a" + Character.toString(cp)), Integer.toHexString(cp));
      }
    }
    // Letters and marks next to them that a terminal shows: printed as they are.
    for (int cp : new int[] {0x034E, 0x0350, 0x115E, 0x1161, 0x17B3, 0x17B6, 0x3163, 0x3165, 0xFE10, 0xFF9F, 0xFFA1,
        0x1D172, 0x1D17B}) {
      String s = "a" + Character.toString(cp);
      assertEquals(s, TerminalText.safe(s), Integer.toHexString(cp));
    }
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
