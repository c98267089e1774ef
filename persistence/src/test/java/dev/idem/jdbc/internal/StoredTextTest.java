package dev.idem.jdbc.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * Free text cut to its column never ends in half a surrogate pair, whichever character straddles
 * the cut: a lone surrogate is stored as '?', so the record returned would differ from the record
 * stored. A cut that would split a pair drops the whole pair.
 */
class StoredTextTest {
  @Test
  void aReasonCutAtItsColumnNeverSplitsASurrogatePair() {
    for (int at = 1990; at <= 2001; at++) {
      String reason = "x".repeat(at) + "\uD83D\uDE00" + "y".repeat(100);
      String stored = OperationTable.storedReason(reason);
      assertTrue(stored.length() <= OperationTable.MAX_REASON, "longer than the column: " + stored.length());
      assertTrue(stored.endsWith("..."), "a cut reason ends with ...");
      assertEquals(-1, unpairedSurrogateAt(stored), "an unpaired surrogate with the pair at " + at);
      String kept = stored.substring(0, stored.length() - 3);
      assertTrue(reason.startsWith(kept), "the kept part is not the reason's beginning (pair at " + at + ")");
      assertTrue(kept.length() >= OperationTable.MAX_REASON - 4, "more than the pair was dropped: " + kept.length());
    }
  }

  @Test
  void aQuarantineReasonCutAtItsColumnNeverSplitsASurrogatePair() {
    int max = OperationTable.MAX_QUARANTINE_REASON;
    String reason = "x".repeat(max - 4) + "\uD83D\uDE00" + "y".repeat(10);
    assertEquals("x".repeat(max - 4) + "...", OperationTable.storedText(reason, max));
  }

  @Test
  void aCutAfterAnUnpairedSurrogateKeepsItsReplacement() {
    String reason = "x".repeat(OperationTable.MAX_REASON - 4) + "\uD83D" + "y".repeat(10);
    assertEquals("x".repeat(OperationTable.MAX_REASON - 4) + "\uFFFD...", OperationTable.storedReason(reason));
  }

  @Test
  void aReasonThatFitsIsKeptWithAPairAtItsEnd() {
    String reason = "x".repeat(OperationTable.MAX_REASON - 2) + "\uD83D\uDE00";
    assertEquals(reason, OperationTable.storedReason(reason));
  }

  private static int unpairedSurrogateAt(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return i;
      }
    }
    return -1;
  }
}
