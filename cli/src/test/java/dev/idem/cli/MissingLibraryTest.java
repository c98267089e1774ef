package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import java.io.File;
import java.net.URI;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CLI run on a hand-made class path that lacks jackson-databind (the plain jar with its
 * dependencies copied by hand, one left behind) said it could not load SQLite's native library,
 * and told the operator to remount a temporary directory: the journal's open took every
 * {@link NoClassDefFoundError} for sqlite-jdbc's. The line must name the library that is missing.
 */
class MissingLibraryTest {
  @TempDir
  Path dir;

  @Test
  void withoutJacksonDatabindTheErrorNamesJacksonDatabindNotSqlite() throws Exception {
    Path journal = dir.resolve("journal");
    RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("http://svc/upload")).build();
    try (JdbcJournal j = JdbcJournal.embedded(journal).syncToDisk(false).open()) {
      j.begin(new NewOperation(new OperationId("t", "upload", IdempotencyKey.of("k-1")), null,
          Fingerprinter.defaults().fingerprint(snap), snap, Instant.parse("2026-01-01T00:00:00Z")));
    }
    List<String> full = Arrays.asList(System.getProperty("java.class.path").split(File.pathSeparator));
    List<String> trimmed = full.stream().filter(e -> !Path.of(e).getFileName().toString().startsWith("jackson-databind"))
        .collect(Collectors.toList());
    assertEquals(full.size() - 1, trimmed.size(), "one jackson-databind jar on the test class path: " + full);

    for (String[] args : List.of(new String[] {"journal", "stats", "--dir", journal.toString()},
        new String[] {"journal", "purge", "--dir", journal.toString(), "--older-than", "P1D", "--yes"})) {
      ChildCli run = ChildCli.runOn(String.join(File.pathSeparator, trimmed), dir, args);
      assertEquals(1, run.code(), run.err());
      assertTrue(run.err().startsWith(IdemCli.PREFIX) && run.err().indexOf('\n') == run.err().length() - 1,
          "one idem: line:\n" + run.err());
      assertTrue(run.err().contains("jackson-databind"), run.err());
      assertFalse(run.err().contains("native library") || run.err().contains("org.sqlite.tmpdir"), run.err());
    }
  }
}
