package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class StoredTextTest {
  @Test
  void eachNulBecomesTheReplacementCharacter() {
    assertEquals("a\uFFFDb\uFFFD", StoredText.of("a\0b\0", 10));
    assertEquals("plain", StoredText.of("plain", 10));
    assertNull(StoredText.of(null, 10));
  }

  @Test
  void aLongTextIsCutToTheColumnAfterTheReplacement() {
    assertEquals("\uFFFD\uFFFD\uFFFD", StoredText.of("\0\0\0\0", 3));
    assertEquals("abcd...", StoredText.of("abcdefghij", 7, "..."));
    assertEquals("abcdefg", StoredText.of("abcdefg", 7, "..."));
  }

  @Test
  void aCutNeverSplitsASurrogatePair() {
    String face = "\uD83D\uDE00";
    assertEquals("ab", StoredText.of("ab" + face + "c", 3));
    assertEquals("ab" + face, StoredText.of("ab" + face + "c", 4));
    assertEquals("ab...", StoredText.of("ab" + face + "cdef", 6, "..."));
  }
}
