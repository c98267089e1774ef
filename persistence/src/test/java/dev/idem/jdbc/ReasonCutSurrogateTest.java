package dev.idem.jdbc;

import static dev.idem.jdbc.support.Ops.T0;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
import dev.idem.core.OperationState;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reason longer than the column is cut to 2,000 characters (1,997 and "..."), counted in UTF-16
 * units: a character outside the BMP (an emoji, a CJK extension character, in a server's error
 * body) that straddles the cut leaves its high surrogate alone at the end. No encoding stores an
 * unpaired surrogate; the driver writes '?'. The record returned to the caller says "as stored"
 * (JdbcJournal's Javadoc), but holds the lone surrogate; what find reads after a restart differs.
 */
class ReasonCutSurrogateTest {
  @TempDir
  Path tmp;

  @Test
  void theRecordReturnedEqualsTheRecordReadBackWhenTheCutSplitsASurrogatePair() throws Exception {
    OperationId id = new OperationId("tenant-a", "charge", IdempotencyKey.of("order-cut-1"));
    // index 1996 is the high surrogate of U+1F600: the cut keeps [0, 1997)
    String reason = "x".repeat(1996) + "\uD83D\uDE00" + "y".repeat(100);
    OperationRecord returned;
    try (JdbcJournal j = JdbcJournal.embedded(tmp).closeOnShutdown(false).open()) {
      j.begin(Ops.op(id, "{\"amount\":5}"));
      Lease lease = j.claim(id, "node", T0, Duration.ofSeconds(30)).orElseThrow();
      returned = j.transition(id, lease, Transition.finish(OperationState.UNCERTAIN, T0.plusSeconds(1), null, reason));
    }
    try (JdbcJournal j = JdbcJournal.embedded(tmp).closeOnShutdown(false).open()) {
      String stored = j.find(id).orElseThrow().reason();
      assertTrue(returned.reason().equals(stored), "the reason returned by transition is not the one find reads after a"
          + " restart (returned ends with U+" + Integer.toHexString(returned.reason().charAt(1996)) + ", stored U+"
          + Integer.toHexString(stored.charAt(1996)) + ")");
      assertEquals(-1, firstUnpairedSurrogate(returned.reason()), "the returned reason holds an unpaired surrogate");
    }
  }

  private static int firstUnpairedSurrogate(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c)) {
        if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
          i++;
          continue;
        }
        return i;
      }
      if (Character.isLowSurrogate(c)) {
        return i;
      }
    }
    return -1;
  }
}
