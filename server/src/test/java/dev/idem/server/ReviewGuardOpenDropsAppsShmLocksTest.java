package dev.idem.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.idem.jdbc.support.ChildJvm;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/**
 * The guard store may live in the app's own SQLite file (transactional mode), which the app's
 * connections in the same JVM keep open. SQLite's WAL locks are POSIX locks on the {@code -shm}
 * file, which the kernel drops for the whole process as soon as the process closes any descriptor
 * of that file. The store's embedded open reads the {@code -shm} index with a FileChannel of its
 * own (WalCheck / WalIndex.committedFrames) and closes it: every lock the app's connections held on
 * the {@code -shm} file is gone. Another process that opens the database (a second instance, a cron
 * job, the CLI's writing commands) then gets the DMS lock exclusively, takes itself for the first
 * connection, truncates and rebuilds the index under this process's mapped, live one, and ignores
 * its read marks (a checkpoint may overwrite pages its readers still use): SQLite's "how to
 * corrupt" §2.2.
 */
class ReviewGuardOpenDropsAppsShmLocksTest {
  @TempDir
  Path tmp;

  @Test
  void openingTheGuardStoreInTheAppsFileKeepsTheAppsSqliteLocks() throws Exception {
    Path db = tmp.resolve("app.db");
    SQLiteDataSource app = new SQLiteDataSource();
    app.setUrl("jdbc:sqlite:" + db);
    try (Connection c = app.getConnection(); Statement st = c.createStatement()) {
      st.execute("PRAGMA journal_mode=WAL");
      st.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT)");
      st.execute("INSERT INTO orders (item) VALUES ('a')");
      Path shm = tmp.resolve("app.db-shm");

      ChildJvm.Result before = ChildJvm.run(tmp, ShmDmsLockProbeChild.class, shm.toString());
      assertEquals(0, before.exitCode(), "precondition: the app's connection holds the -shm lock: "
          + before.output());

      try (JdbcIdempotencyStore store = JdbcIdempotencyStore.sqlite(db)) {
        st.execute("INSERT INTO orders (item) VALUES ('b')"); // the app goes on using its connection

        ChildJvm.Result after = ChildJvm.run(tmp, ShmDmsLockProbeChild.class, shm.toString());

        assertEquals(0, after.exitCode(), "the guard store's open dropped the -shm locks of the app's connection"
            + " (and its own): another process can now reset the live WAL index: " + after.output());
      }
    }
  }
}
