package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * JdbcIdempotencyStore.close() is not idempotent: each call runs StoreOpener.Opened.close, whose
 * store close is a no-op the second time but which then marks a clean close again
 * (EmbeddedFiles.markClosed deletes {@code <file>.open}). A close called twice (the app's own
 * close, then Spring's inferred destroy method on the AutoCloseable bean; a try-with-resources
 * around a store also closed inside) after another open took the file over deletes that open's
 * crash marker: the live store now looks cleanly closed, and if it is then killed, the next open
 * takes the crash for a clean close (and no longer refuses a missing -wal file that held its
 * acknowledged commits). The lock is handled right (a stale Held is a no-op); the marker is not.
 */
class ReviewSecondCloseDeletesNextOpensMarkerTest {
  @TempDir
  Path tmp;

  @Test
  void aSecondCloseOfAClosedStoreLeavesTheNextOpensCrashMarkerAlone() throws Exception {
    Path db = tmp.resolve("guard.db");
    Path marker = tmp.resolve("guard.db.open");
    JdbcIdempotencyStore first = JdbcIdempotencyStore.sqlite(db);
    first.close();
    try (JdbcIdempotencyStore second = JdbcIdempotencyStore.sqlite(db)) {
      assertTrue(Files.exists(marker), "precondition: the open store is marked open");

      first.close(); // closed twice

      assertTrue(Files.exists(marker), "the closed store's second close removed the crash marker of the store"
          + " open now: a kill of it will look like a clean close");
    }
  }
}
