package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.ChildJvm;
import dev.idem.server.spi.ClaimAttempt;
import dev.idem.server.spi.StoredRecord;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 of a busy guard on its embedded SQLite store (issue 26: the store now group-commits
 * claims and completions). A real child JVM ({@link GuardStoreKillChild}) claims and completes
 * keys on 8 threads and kills itself mid-stream. Then, in this JVM, the same file reopens, and
 * each completion it logged (a response could have left) is COMPLETED with exactly the response
 * stored: a commit shared by many callers must not acknowledge one of them before it is on disk.
 * A claim rides on the next commit (issue 28): one whose answer never left may be gone, and is
 * otherwise in flight with its lease ended at open; either way its retry runs at once, as it
 * would after a durable claim.
 *
 * <p>{@code -Didem.killRounds=N} repeats the kill N times on the same file (default 2).
 */
class GuardStoreKillTest {
  private static final int SIGKILLED = 137;
  private static final int ROUNDS = Integer.getInteger("idem.killRounds", 2);

  @TempDir
  Path tmp;

  @Test
  void everyClaimAndCompletionThatReturnedSurvivesAKill() throws Exception {
    Path db = tmp.resolve("idem.db");
    int claims = 0;
    int completions = 0;
    int lostClaims = 0;
    for (int round = 0; round < ROUNDS; round++) {
      Path log = tmp.resolve("log-" + round);
      ChildJvm.Result child = ChildJvm.run(tmp, GuardStoreKillChild.class, db.toString(), log.toString(), "8",
          Integer.toString(150 + round * 37));
      assertEquals(SIGKILLED, child.exitCode(), "the child was to die by SIGKILL:\n" + child.output());
      Set<String> claimed = new LinkedHashSet<>();
      Set<String> completed = new LinkedHashSet<>();
      for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
        if (line.startsWith("claimed ")) {
          claimed.add(line.substring(8));
        } else if (line.startsWith("completed ")) {
          completed.add(line.substring(10));
        }
      }
      assertTrue(completed.size() >= 150, "the child completed " + completed.size() + " keys before the kill");
      try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(db)) {
        java.time.Instant now = java.time.Instant.now();
        for (String key : claimed) {
          RecordId id = new RecordId("tenant", "POST /orders", key);
          StoredRecord r = store.find(id).orElse(null);
          if (completed.contains(key)) {
            assertTrue(r != null, "completion " + key + " returned before the kill, and is lost");
            assertEquals(RecordState.COMPLETED, r.state(), "completion " + key + " returned before the kill");
            assertArrayEquals(key.getBytes(StandardCharsets.UTF_8), r.response().orElseThrow().body());
            assertEquals(List.of(key), r.response().orElseThrow().headers().get("X-Key"));
          } else if (r == null || r.state() != RecordState.COMPLETED) {
            // A claim whose answer never left: gone (it rode on a commit the kill prevented) or in
            // flight with its lease ended at open. Either way the retry runs at once. (COMPLETED:
            // its completion committed, the kill came before the log line; a retry gets the replay.)
            lostClaims += r == null ? 1 : 0;
            assertTrue(store.claim(id, StoreContract.A, "retry", now, now.plusSeconds(30), now.plusSeconds(3600))
                instanceof ClaimAttempt.Claimed, "the retry of " + key + " after the restart runs at once");
          }
        }
        // Next round: fresh keys, since the child's keys restart at 0 (reclaiming a completed key
        // would replay it): move the finished records aside by purging everything.
        store.purgeExpired(java.time.Instant.now().plus(java.time.Duration.ofDays(2)));
      }
      claims += claimed.size();
      completions += completed.size();
    }
    System.out.printf("guard store kill test: %d kills (SIGKILL), %d claims and %d completions acknowledged,"
        + " every completion found after the restart, %d unanswered claims gone%n", ROUNDS, claims, completions,
        lostClaims);
  }
}
