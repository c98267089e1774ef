package dev.idem.examples.exit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.testkit.IdempotentServer;
import dev.idem.testkit.support.HeapLimitedJvm;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 24, "outcomes the caller saw are forgotten": an app delivers 20 queued orders through
 * {@code resumePending}, confirms each in its resume handler, and its {@code main} returns without
 * closing anything. A restarted app resumes again. Counted at the reference server (effects per key,
 * requests) and at the handlers (confirmations per key): 0 re-sends and 0 repeated confirmations.
 * Before, the journal's deferred writes died with the first JVM, and the restart re-sent and
 * re-confirmed the orders.
 */
class ResumeExitTest {
  private static final int COUNT = 20;

  @TempDir
  Path tmp;

  @Test
  void twentyOrdersConfirmedBeforeAnUnclosedExitAreNeitherSentNorConfirmedAgainAfterARestart() throws Exception {
    Path journal = tmp.resolve("journal");
    try (IdempotentServer server = IdempotentServer.start()) {
      String base = server.url("/").toString();
      String first = HeapLimitedJvm.run(tmp, ResumeExitChild.class, journal.toString(), base, "first",
          Integer.toString(COUNT));
      Map<String, Integer> confirmations = confirmations(first, new TreeMap<>());
      List<IdempotencyKey> keys = ResumeExitChild.keys(COUNT);
      assertEquals(COUNT, confirmations.size(), first);
      for (IdempotencyKey key : keys) {
        assertEquals(1, server.effectCount(key.value()), "order " + key + " took effect once");
      }
      int requests = server.requestCount();
      assertEquals(COUNT, requests, "one request per order");

      String restart = HeapLimitedJvm.run(tmp, ResumeExitChild.class, journal.toString(), base, "restart",
          Integer.toString(COUNT));

      confirmations(restart, confirmations);
      assertTrue(confirmations.values().stream().allMatch(n -> n == 1),
          "0 repeated confirmations: " + confirmations + "\n" + restart);
      assertEquals(requests, server.requestCount(), "0 re-sends:\n" + restart);
      for (IdempotencyKey key : keys) {
        assertEquals(1, server.effectCount(key.value()));
      }
      assertTrue(restart.contains("SUMMARY ResumeSummary[examined=0"), restart);
    }
  }

  private static Map<String, Integer> confirmations(String output, Map<String, Integer> into) {
    for (String line : output.split("\n")) {
      if (line.startsWith("CONFIRMED ")) {
        into.merge(line.split(" ")[1], 1, Integer::sum);
      }
    }
    return into;
  }
}
