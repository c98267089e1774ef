package dev.idem.jdbc.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.jdbc.JdbcJournal;
import dev.idem.jdbc.support.ChildJvm;
import dev.idem.jdbc.support.Ops;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A resume's memory follows the request bodies of a whole page, not of the operations it sends:
 * {@code JdbcJournal.findDue} reads a page of 100 due operations with every {@code request_json}
 * (about 683 KB of text for a body at the default 512 KiB limit) and decodes them all into records
 * (the 512 KiB body each) before the resumer sends the first one. So 80 pending operations with
 * bodies under the journal's own default limit cannot be resumed in a 64 MiB heap (OutOfMemoryError
 * before the first send), although each is sent alone and needs about 1.2 MB. An app with a modest
 * heap that stops with such a backlog (an outage of the target, a batch of large documents) fails in
 * its startup {@code resumePending} and again at every restart, since the same page is read first:
 * it can never start. The CLI's listing had the same fault and was fixed (docs/cli.md: "50 operations
 * with 512 KiB bodies list and purge in a 64 MiB heap, where whole records ran out of it at 30");
 * the resume path, which must send them, still reads whole pages.
 */
class RvRsqliteResumeHeapFollowsBodiesTest {
  @TempDir
  Path tmp;

  @Test
  void eightyPendingOperationsWithBodiesUnderTheDefaultLimitResumeInA64MiBHeap() throws Exception {
    resumesInA64MiBHeap(80);
  }

  /**
   * Once a page was read in parts but still returned whole (100 records, each with its decoded
   * body: a resume holds two pages, about 100 MB), 200 ran out of the heap after the first page:
   * a page is now cut short at the journal's read budget, a few such records.
   */
  @Test
  void twoHundredPendingOperationsWithBodiesUnderTheDefaultLimitResumeInA64MiBHeap() throws Exception {
    resumesInA64MiBHeap(200);
  }

  private void resumesInA64MiBHeap(int n) throws Exception {
    Path dir = tmp.resolve("journal");
    Ops ops = new Ops(64);
    String pad = "x".repeat(500_000); // with the JSON around it, under DEFAULT_MAX_REQUEST_BODY (512 KiB)
    try (JdbcJournal j = JdbcJournal.embedded(dir).closeOnShutdown(false).open()) {
      for (int i = 0; i < n; i++) {
        RequestSnapshot r = Ops.request("{\"n\":" + i + ",\"doc\":\"" + pad + "\"}");
        // Begun now (the child resumes them within their age limit).
        j.begin(new NewOperation(ops.id("create-order"), null, Fingerprinter.defaults().fingerprint(r), r,
            Instant.now()));
      }
    }
    ChildJvm.Result child = ChildJvm.run(tmp, List.of("-Xmx64m"), RvRsqliteResumeHeapChild.class, dir.toString());
    assertEquals(0, child.exitCode(), child.output());
    assertTrue(child.output().contains("sent " + n), child.output());
  }
}
