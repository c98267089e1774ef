package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.function.Executable;

/**
 * The CLI never creates a database: for {@code --jdbc-url jdbc:h2:...} it adds H2's
 * {@code ;IFEXISTS=TRUE}, unless the URL already has an {@code IFEXISTS=} setting, which it looked
 * for in upper case only. H2 reads its URL settings in any case, so an operator who pastes the
 * app's URL gets, for {@code ;IFEXISTS=FALSE}, an empty database created where the typo pointed
 * (then "not an Idem journal", the new file left behind), and for {@code ;ifexists=false} H2's
 * "Duplicate property" (90066), as "a database error", even when the journal is there.
 *
 * <p>Found by a review on 2026-12-05.
 */
class H2UrlIfExistsTest {
  @TempDir
  Path dir;

  @Test
  void noIfExistsSettingInAnyCaseLetsTheCliCreateADatabase() throws Exception {
    List<Executable> checks = new ArrayList<>();
    String[] settings = {";IFEXISTS=FALSE", ";ifexists=false", ";IfExists=False", ";ifexists=true"};
    for (int i = 0; i < settings.length; i++) {
      String name = "nothing-" + i;
      String setting = settings[i];
      CliRun stats = CliRun.of("journal", "stats", "--jdbc-url", "jdbc:h2:file:" + dir.resolve(name) + setting);
      boolean created;
      try (var files = Files.list(dir)) {
        created = files.anyMatch(f -> f.getFileName().toString().startsWith(name));
      }
      checks.add(() -> assertEquals(1, stats.code(), setting + ": " + stats.out() + stats.err()));
      checks.add(() -> assertTrue(stats.err().contains("H2 database does not exist"), setting + ": " + stats.err()));
      checks.add(() -> assertFalse(created, setting + ": a database was created"));
    }
    assertAll(checks);
  }

  @Test
  void theAppsUrlWithItsOwnIfExistsSettingOpensTheJournal() throws Exception {
    String base = "jdbc:h2:file:" + dir.resolve("app");
    JdbcDataSource ds = new JdbcDataSource();
    ds.setURL(base);
    try (JdbcJournal app = JdbcJournal.dataSource(ds).closeOnShutdown(false).open()) {
      RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/orders")).build();
      app.begin(new NewOperation(new OperationId("t", "create-order", IdempotencyKey.of("k-1")), null,
          Fingerprinter.defaults().fingerprint(snap), snap, Instant.parse("2026-01-01T00:00:00Z")));
    }

    for (String setting : new String[] {";ifexists=false", ";IfExists=TRUE"}) {
      CliRun stats = CliRun.of("journal", "stats", "--jdbc-url", base + setting);
      assertEquals(0, stats.code(), setting + ": " + stats.err());
      assertTrue(stats.out().contains("PENDING    1"), stats.out());
    }
  }
}
