package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationRecord;
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
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An outbox submission that succeeded at the server just before the app stopped has its outcome
 * owed to the app's handler (docs/journal.md, "Outcomes handed over once": the next resumePending
 * hands it over). The app is down over a weekend; the operator, told to stop the app for purge
 * --yes, purges finished operations older than a day. The dry run lists the operation as one more
 * finished row, and purge --yes deletes it: the handler never learns that the order was charged.
 */
class ReviewPurgeOwedOutcomeTest {
  @TempDir
  Path dir;

  @Test
  void purgeYesKeepsAFinishedOperationWhoseOutcomeTheAppsHandlerHasNotReceived() throws Exception {
    Path journal = dir.resolve("journal");
    Instant t0 = Instant.now().minus(Duration.ofDays(3));
    OperationId id = new OperationId("shop", "charge-card", IdempotencyKey.of("order-7"));
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/charges")).build();
      j.begin(new NewOperation(id, null, Fingerprinter.defaults().fingerprint(snap), snap, t0, true));
      Lease lease = j.claim(id, "app", t0, Duration.ofMinutes(1)).orElseThrow();
      j.recordAttempt(id, lease, new AttemptRecord(1, lease.generation(), t0, t0.plusMillis(5),
          Classification.SUCCESS, 201, null, "HTTP 201", Duration.ZERO, "done"));
      j.transition(id, lease, Transition.finish(OperationState.SUCCEEDED, t0.plusMillis(5),
          new ResponseSnapshot(201, Map.of(), new byte[0]), "HTTP 201"));
      // The app stopped before its handler was given the outcome: it is owed.
      assertEquals(List.of(id), j.findUndelivered(null, 10).stream().map(OperationRecord::id).toList());
    }

    CliRun purge = CliRun.of("journal", "purge", "--dir", journal.toString(), "--older-than", "P1D", "--yes");
    assertEquals(0, purge.code(), purge.err());

    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      assertTrue(j.find(id).isPresent(), "purge --yes deleted an outcome still owed to the app's handler ("
          + purge.out().trim() + "); the app's next resumePending cannot hand it over");
    }
  }
}
