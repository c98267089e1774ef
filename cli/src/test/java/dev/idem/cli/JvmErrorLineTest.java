package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link IdemCli#main} promises one line on standard error, starting {@code idem: }, for an error;
 * picocli's handler takes exceptions only, so an {@link Error} (the JVM out of memory, a class
 * missing from a hand-made class path) escaped it as a raw stack trace of some 30 lines. The error
 * here is real: {@code show} of a row whose stored request is 40 million characters (damaged, or
 * written by something other than the journal, which refuses requests over 1 million) cannot be
 * read into a 64 MiB heap.
 */
class JvmErrorLineTest {
  @TempDir
  Path dir;

  @Test
  void anOutOfMemoryErrorIsOneIdemLineNamingItAndExitsNonZero() throws Exception {
    Path journal = dir.resolve("journal");
    RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("http://svc/upload")).build();
    try (JdbcJournal j = JdbcJournal.embedded(journal).syncToDisk(false).open()) {
      j.begin(new NewOperation(new OperationId("t", "upload", IdempotencyKey.of("k-1")), null,
          Fingerprinter.defaults().fingerprint(snap), snap, Instant.parse("2026-01-01T00:00:00Z")));
    }
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + journal.resolve("idem-journal.db"));
        Statement st = c.createStatement()) {
      assertEquals(1, st.executeUpdate("UPDATE idem_operation SET request_json = replace(hex(zeroblob(20000000)),"
          + " '0', 'x') WHERE op_key = 'k-1'"));
    }

    ChildCli show = ChildCli.run(dir, "journal", "show", "--dir", journal.toString(), "--scope", "t",
        "--operation", "upload", "--key", "k-1");
    assertTrue(show.code() != 0, "exit status " + show.code());
    assertTrue(show.err().startsWith(IdemCli.PREFIX) && show.err().indexOf('\n') == show.err().length() - 1
        && show.err().contains("java.lang.OutOfMemoryError"), "standard error:\n" + show.err());
    assertEquals("", show.out());
  }
}
