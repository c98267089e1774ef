package dev.idem.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A writable embedded store runs with a 16 MiB page cache, not SQLite's 2 MB: with 2 MB a resume
 * of tens of thousands of journaled operations read most pages back from the OS (issue 28, P4).
 */
class PageCacheTest {
  @TempDir
  Path tmp;

  @Test
  void aWritableEmbeddedStoreKeepsSixteenMebibytesOfPages() throws Exception {
    Layout own = new Layout(tmp.resolve("own"), "t.db", "t", "test store", "PageCacheTest", true);
    try (Store store = WalSyncTest.open(own)) {
      long cacheSize = store.read(null, s -> {
        try (Statement st = s.connection().createStatement(); ResultSet rs = st.executeQuery("PRAGMA cache_size")) {
          rs.next();
          return rs.getLong(1);
        }
      });
      // Negative: a size in KiB, as SQLite reports a cache set by size rather than by pages.
      assertEquals(-16 * 1024, cacheSize);
    }
  }
}
