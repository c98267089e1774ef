package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.ResponseSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code journal list} says it fetches "a page at a time so that a journal of millions of rows is
 * never held in memory" and that its memory is "bounded whatever --limit says". A page is 500
 * whole records, each with its request body (up to the journal's 512 KiB default) and stored
 * response, though the listing prints neither: a journal of operations with large bodies (one
 * app's ordinary uploads) does not list in a 64 MiB heap: the CLI dies with a raw
 * OutOfMemoryError stack trace, exit 1, and no "idem: " line. {@code purge} reads finished
 * operations the same way, for its dry run and before it deletes.
 *
 * <p>50 operations (about 35 MB written): 30 were already enough to exhaust the heap before the
 * fix, and 20 were not.
 */
class ReviewListHeapTest {
  private static final int OPS = 50;
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  @TempDir
  Path dir;

  @Test
  void listOfOperationsWithLargeBodiesFitsASmallHeap() throws Exception {
    Path journal = dir.resolve("journal");
    try (JdbcJournal j = setUp(journal)) {
      for (int i = 0; i < OPS; i++) {
        j.begin(upload(i));
      }
    }

    ChildCli list = ChildCli.run(dir, "journal", "list", "--dir", journal.toString());
    assertEquals(0, list.code(), "journal list of " + OPS + " operations in a 64 MiB heap exited " + list.code()
        + ": " + list.firstErrLine());
    assertTrue(list.out().contains(OPS + " operation(s)"), list.out());
  }

  @Test
  void purgeOfFinishedOperationsWithLargeBodiesFitsASmallHeap() throws Exception {
    Path journal = dir.resolve("journal");
    try (JdbcJournal j = setUp(journal)) {
      for (int i = 0; i < OPS; i++) {
        NewOperation op = upload(i);
        j.begin(op);
        Lease lease = j.claim(op.id(), "app", T0, Duration.ofMinutes(1)).orElseThrow();
        j.transition(op.id(), lease, Transition.finish(OperationState.SUCCEEDED, T0.plusMillis(5),
            new ResponseSnapshot(201, Map.of(), new byte[JdbcJournal.DEFAULT_MAX_STORED_RESPONSE_BODY]), "HTTP 201"));
      }
    }

    ChildCli dry = ChildCli.run(dir, "journal", "purge", "--dir", journal.toString(), "--older-than", "P1D");
    assertEquals(0, dry.code(), "purge's dry run of " + OPS + " finished operations in a 64 MiB heap exited "
        + dry.code() + ": " + dry.firstErrLine());
    assertTrue(dry.out().contains("would purge " + OPS + " "), dry.out());
    ChildCli yes = ChildCli.run(dir, "journal", "purge", "--dir", journal.toString(), "--older-than", "P1D", "--yes");
    assertEquals(0, yes.code(), "purge --yes of " + OPS + " finished operations in a 64 MiB heap exited "
        + yes.code() + ": " + yes.firstErrLine());
    assertTrue(yes.out().contains("purged " + OPS + " "), yes.out());
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      assertEquals(0, j.count(OperationState.SUCCEEDED), "the journal after purge --yes");
    }
  }

  /** Not synced to disk: this JVM never crashes between the writes and the CLI's reads. */
  private static JdbcJournal setUp(Path journal) throws Exception {
    return JdbcJournal.embedded(journal).syncToDisk(false).open();
  }

  /** An operation with a request body of the journal's default maximum. */
  private static NewOperation upload(int i) {
    byte[] body = new byte[JdbcJournal.DEFAULT_MAX_REQUEST_BODY];
    Arrays.fill(body, (byte) 'a');
    RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("http://svc/upload"))
        .body(body, "application/octet-stream").build();
    return new NewOperation(new OperationId("t", "upload", IdempotencyKey.of("k-" + i)), null,
        Fingerprinter.defaults().fingerprint(snap), snap, T0);
  }
}
