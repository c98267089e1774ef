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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code journal list} says it fetches "a page at a time so that a journal of millions of rows is
 * never held in memory" and that its memory is "bounded whatever --limit says". A page is 500
 * whole records, each with its request body (up to the journal's 512 KiB default) and stored
 * response, though the listing prints neither: a journal of 100 operations with large bodies
 * (one app's ordinary uploads) does not list in a 64 MiB heap: the CLI dies with a raw
 * OutOfMemoryError stack trace, exit 1, and no "idem: " line.
 */
class ReviewListHeapTest {
  private static final int OPS = 100;

  @TempDir
  Path dir;

  @Test
  void listOfOperationsWithLargeBodiesFitsASmallHeap() throws Exception {
    Path journal = dir.resolve("journal");
    byte[] body = new byte[JdbcJournal.DEFAULT_MAX_REQUEST_BODY];
    java.util.Arrays.fill(body, (byte) 'a');
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      for (int i = 0; i < OPS; i++) {
        RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("http://svc/upload"))
            .body(body, "application/octet-stream").build();
        j.begin(new NewOperation(new OperationId("t", "upload", IdempotencyKey.of("k-" + i)), null,
            Fingerprinter.defaults().fingerprint(snap), snap, Instant.parse("2026-01-01T00:00:00Z")));
      }
    }

    Run list = cli(List.of("journal", "list", "--dir", journal.toString()));
    assertEquals(0, list.code, "journal list of " + OPS + " operations in a 64 MiB heap exited " + list.code + ": "
        + firstLine(list.err));
    assertTrue(list.out.contains(OPS + " operation(s)"), list.out);
  }

  private static String firstLine(String s) {
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }

  private record Run(int code, String out, String err) {}

  private Run cli(List<String> args) throws Exception {
    List<String> cmd = new java.util.ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx64m", "-cp", System.getProperty("java.class.path"), IdemCli.class.getName()));
    cmd.addAll(args);
    Path out = Files.createTempFile(dir, "out", ".txt");
    Path err = Files.createTempFile(dir, "err", ".txt");
    Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the CLI did not finish in 120 s");
    return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
  }
}
