package dev.idem.testkit.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** A body cut at the byte limit is recorded up to its last whole character. */
class Utf8CutTest {
  private static int whole(String text, int cut) {
    return IdempotencyDispatcher.wholeCharacters(Arrays.copyOf(text.getBytes(StandardCharsets.UTF_8), cut));
  }

  @Test
  void aCutInsideACharacterBacksUpToItsStart() {
    String text = "aü€😀";   // 1, 2, 3 and 4 bytes: starts at 0, 1, 3, 6; 10 in all
    assertEquals(1, whole(text, 2), "inside ü");
    assertEquals(3, whole(text, 4), "after 1 of 3 bytes of €");
    assertEquals(3, whole(text, 5), "after 2 of 3 bytes of €");
    assertEquals(6, whole(text, 7), "after 1 of 4 bytes of the emoji");
    assertEquals(6, whole(text, 9), "after 3 of 4 bytes of the emoji");
  }

  @Test
  void aCutBetweenCharactersKeepsEveryByte() {
    String text = "aü€😀";
    for (int cut : new int[] {0, 1, 3, 6, 10}) {
      assertEquals(cut, whole(text, cut));
    }
  }

  @Test
  void bytesThatAreNotUtf8AreLeftAsTheyAre() {
    assertEquals(3, IdempotencyDispatcher.wholeCharacters(new byte[] {'a', (byte) 0x80, (byte) 0x80}),
        "stray continuation bytes: no character was cut");
    assertEquals(2, IdempotencyDispatcher.wholeCharacters(new byte[] {'a', (byte) 0xFF}), "not a lead byte");
  }
}
