package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.jdbc.support.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * The guard store's single-owner locks are POSIX locks, which the kernel drops for the whole
 * process when the process closes any descriptor of the lock file. A second open of the same store
 * in this JVM (embedded, or through a DataSource on its file, by its own name or through a symbolic
 * link) used to open the lock file, be refused,
 * and close it: the live store lost its lock, and another process could open the store and end
 * the leases of this one's in-flight claims, running their requests twice. The refusal now opens
 * no descriptor of the lock file.
 */
class RefusedSecondStoreOpenKeepsTheLockTest {
  @TempDir
  Path tmp;

  @Test
  void aRefusedSecondOpenInThisJvmByAnyNameStillKeepsAnotherProcessOut() throws Exception {
    Path db = tmp.resolve("guard.db");
    try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(db)) {
      Path link = Files.createSymbolicLink(tmp.resolve("linked.db"), db);
      // The embedded open holds two locks: guard.db.lock, which a second embedded open
      // tries first, and the database file's, which any open through a SQLite DataSource tries.
      for (Path name : new Path[] {db, link}) {
        IdempotencyStoreException refused = assertThrows(IdempotencyStoreException.class,
            () -> JdbcIdempotencyStore.sqlite(name));
        assertTrue(refused.getMessage().contains("already open in this JVM"), refused.getMessage());
        SQLiteDataSource file = new SQLiteDataSource();
        file.setUrl("jdbc:sqlite:" + name);
        IdempotencyStoreException refusedToo = assertThrows(IdempotencyStoreException.class,
            () -> JdbcIdempotencyStore.postgres(file));
        assertTrue(refusedToo.getMessage().contains("already open in this JVM"), refusedToo.getMessage());
      }

      ChildJvm.Result other = ChildJvm.run(tmp, OpenGuardStoreChild.class, db.toString());

      assertEquals(0, other.exitCode(), "another process opened the store this JVM has open: " + other.output());
      assertTrue(other.output().contains("open in another process"), other.output());
    }
  }
}
