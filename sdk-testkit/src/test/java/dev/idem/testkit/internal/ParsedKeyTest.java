package dev.idem.testkit.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class ParsedKeyTest {
  @Test
  void absentHeaderIsNeitherValidNorMalformed() {
    ParsedKey k = ParsedKey.parse(List.of());
    assertTrue(k.isAbsent());
    assertFalse(k.isValid());
  }

  @Test
  void bareAndQuotedSpellTheSameKey() {
    assertEquals("8e03978e-40d5-43e8-bc93-6894a57f9324", ParsedKey.parse(List.of("8e03978e-40d5-43e8-bc93-6894a57f9324")).key());
    assertEquals("8e03978e-40d5-43e8-bc93-6894a57f9324", ParsedKey.parse(List.of("\"8e03978e-40d5-43e8-bc93-6894a57f9324\"")).key());
  }

  @Test
  void quotedStringsUnescape() {
    assertEquals("a\"b\\c", ParsedKey.parse(List.of("\"a\\\"b\\\\c\"")).key());
  }

  @Test
  void malformedValuesAreRefusedWithAReason() {
    for (String bad : List.of("", "\"\"", "\"open", "\"a\\x\"", "\"a\"b\"", "é", "x".repeat(ParsedKey.MAX_LENGTH + 1))) {
      ParsedKey k = ParsedKey.parse(List.of(bad));
      assertFalse(k.isValid(), bad);
      assertFalse(k.isAbsent(), bad);
      assertNull(k.key());
    }
    assertFalse(ParsedKey.parse(List.of("a", "b")).isValid(), "two key headers are ambiguous");
  }
}
