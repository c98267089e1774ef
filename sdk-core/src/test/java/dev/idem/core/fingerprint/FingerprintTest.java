package dev.idem.core.fingerprint;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class FingerprintTest {
  private static final String VALID = "0123456789abcdef".repeat(4);

  @Test
  void acceptsSixtyFourLowerCaseHexDigits() {
    assertEquals(VALID, new Fingerprint(VALID).hex());
  }

  /** A valid fingerprint with its 41st character replaced by {@code bad}. */
  @ParameterizedTest
  @ValueSource(strings = {"A", "F", "g", "/", ":", "`", "G", " ", "\u0660", "\uff10"})
  void rejectsAnyOtherCharacter(String bad) {
    String hex = VALID.substring(0, 40) + bad + VALID.substring(41);
    assertThrows(IllegalArgumentException.class, () -> new Fingerprint(hex));
  }

  @ParameterizedTest
  @ValueSource(ints = {0, 1, 63, 65, 128})
  void rejectsOtherLengths(int length) {
    String hex = "a".repeat(length);
    assertThrows(IllegalArgumentException.class, () -> new Fingerprint(hex));
  }

  @Test
  void rejectsNull() {
    assertThrows(NullPointerException.class, () -> new Fingerprint(null));
  }
}
