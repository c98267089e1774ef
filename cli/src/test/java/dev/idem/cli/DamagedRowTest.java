package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.Lease;
import dev.idem.core.spi.NewOperation;
import dev.idem.core.spi.RequestSnapshot;
import dev.idem.core.spi.Transition;
import dev.idem.jdbc.JdbcJournal;
import java.net.URI;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A finished row whose stored JSON cannot be decoded. A read-only open cannot quarantine it, and
 * every read skips it. Before: the dry run listed and counted 1, while purge --yes (which deletes by
 * state and age without reading) deleted 2, one a row the operator never saw; list said "1 of 2
 * shown; raise --limit", which no limit shows. Now purge --yes reads first, as the dry run does,
 * so the damaged row is quarantined and kept, and both say what they cannot read.
 *
 * <p>Found by a review on 2026-12-03; failed before the fix.
 */
class DamagedRowTest {
  @TempDir
  Path dir;

  @Test
  void theDryRunCountsWhatPurgeYesDeletes() throws Exception {
    Path journal = dir.resolve("journal");
    Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      for (String key : new String[] {"k-1", "k-2"}) {
        OperationId id = new OperationId("t", "charge-card", IdempotencyKey.of(key));
        RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/charges")).build();
        j.begin(new NewOperation(id, null, Fingerprinter.defaults().fingerprint(snap), snap, t0));
        Lease lease = j.claim(id, "test", t0, Duration.ofMinutes(1)).orElseThrow();
        j.recordAttempt(id, lease, new AttemptRecord(1, lease.generation(), t0, t0.plusMillis(5),
            Classification.PERMANENT, 402, null, "HTTP 402", Duration.ZERO, "permanent: no retry"));
        j.transition(id, lease, Transition.finish(OperationState.FAILED, t0.plusMillis(5), null, "HTTP 402"));
      }
    }
    // One row damaged (a stray write, a bad restore): its attempts are no longer a JSON array.
    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + journal.resolve("idem-journal.db"));
        Statement st = c.createStatement()) {
      assertEquals(1, st.executeUpdate("UPDATE idem_operation SET attempts_json = 'x' WHERE op_key = 'k-2'"));
    }

    CliRun list = CliRun.of("journal", "list", "--dir", journal.toString(), "--limit", "1000");
    CliRun dry = CliRun.of("journal", "purge", "--dir", journal.toString(), "--older-than", "P1D");
    assertEquals(0, dry.code(), dry.err());
    CliRun yes = CliRun.of("journal", "purge", "--dir", journal.toString(), "--older-than", "P1D", "--yes");
    assertEquals(0, yes.code(), yes.err());
    long wouldPurge = number(Pattern.compile("would purge (\\d+) "), dry.out());
    long purged = number(Pattern.compile("purged (\\d+) "), yes.out());
    assertEquals(wouldPurge, purged, "the dry run said:\n" + dry.out() + "the confirmed purge said:\n" + yes.out()
        + "list --limit 1000 said:\n" + list.out());
    assertEquals(1, purged);
    assertTrue(dry.out().contains("1 finished operation(s) cannot be read"), dry.out());
    assertTrue(list.out().contains("1 of 2 operation(s) shown; the other 1 cannot be read")
        && !list.out().contains("raise --limit"), "no --limit shows a row that cannot be read: " + list.out());
    assertTrue(yes.out().contains("1 finished operation(s) could not be read"), yes.out());
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      assertEquals(List.of("k-2"), j.findQuarantined(10).stream().map(q -> q.key()).toList(),
          "the damaged row is kept, set aside for inspection, not deleted unseen");
    }
  }

  private static long number(Pattern p, String text) {
    Matcher m = p.matcher(text);
    assertTrue(m.find(), text);
    return Long.parseLong(m.group(1));
  }
}
