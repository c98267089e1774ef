package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.ChildProcesses;
import java.io.File;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code idem journal list --state failed > failed.txt} on a full disk: every write of the listing
 * fails, and the program still exits 0, so the script that re-drives what the file lists goes on
 * with an empty (or cut) list. The listing is printed through a PrintWriter, which swallows write
 * errors; nothing checks it before the exit status is chosen.
 */
class ReviewOutputWriteFailureTest {
  @TempDir
  Path dir;

  @Test
  void aListingThatCannotBeWrittenDoesNotExitZero() throws Exception {
    File full = new File("/dev/full");
    assumeTrue(full.exists(), "needs Linux's /dev/full, a file every write to fails with ENOSPC");
    Path journal = dir.resolve("journal");
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/orders")).build();
      for (int i = 0; i < 3; i++) {
        j.begin(new NewOperation(new OperationId("t", "create-order", IdempotencyKey.of("k-" + i)), null,
            Fingerprinter.defaults().fingerprint(snap), snap, Instant.parse("2026-01-01T00:00:00Z")));
      }
    }
    Path err = dir.resolve("err.txt");
    try (ChildProcesses children = new ChildProcesses()) { // a CLI that does not end is not left running
      Process p = children.add(new ProcessBuilder(List.of(
          Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          ChildCli.NATIVE_ACCESS, "-cp", System.getProperty("java.class.path"), IdemCli.class.getName(),
          "journal", "list", "--dir", journal.toString()))
          .redirectOutput(full)
          .redirectError(err.toFile())
          .start());
      assumeTrue(p.waitFor(60, TimeUnit.SECONDS), "the CLI did not end");
      int code = p.exitValue();
      assertNotEquals(0, code, "nothing of the listing was written (/dev/full), yet the exit status was 0; stderr: "
          + Files.readString(err, StandardCharsets.UTF_8));
    }
  }
}
