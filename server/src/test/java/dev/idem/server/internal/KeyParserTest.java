package dev.idem.server.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class KeyParserTest {
  @Test
  void absentHeaderIsNeitherValidNorMalformed() {
    KeyParser k = KeyParser.parse(List.of());
    assertTrue(k.isAbsent());
    assertFalse(k.isValid());
  }

  @Test
  void bareAndQuotedSpellTheSameKey() {
    assertEquals("8e03978e-40d5", KeyParser.parse(List.of("8e03978e-40d5")).key());
    assertEquals("8e03978e-40d5", KeyParser.parse(List.of("\"8e03978e-40d5\"")).key());
    assertEquals("a\"b\\c", KeyParser.parse(List.of("\"a\\\"b\\\\c\"")).key());
  }

  @Test
  void malformedValuesAreRefusedWithAReason() {
    for (String bad : List.of("", "\"\"", "\"open", "\"a\\x\"", "\"a\"b\"", "é", "x".repeat(KeyParser.MAX_LENGTH + 1))) {
      KeyParser k = KeyParser.parse(List.of(bad));
      assertFalse(k.isValid(), bad);
      assertFalse(k.isAbsent(), bad);
      assertNull(k.key());
      assertTrue(k.problem() != null && !k.problem().isEmpty());
    }
    assertFalse(KeyParser.parse(List.of("a", "b")).isValid(), "two key headers are ambiguous");
  }
}
