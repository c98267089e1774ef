package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What purge tells the operator about finished operations whose outcome the app's handler has not
 * received: the dry run does not list them as candidates and says they are kept, and purge --yes
 * deletes the others and says how many it kept, then takes them once their delivery is recorded.
 */
class PurgeKeepsOwedOutcomesTest {
  @TempDir
  Path dir;

  @Test
  void bothRunsCountOwedOutcomesApartAndALaterPurgeTakesThemOnceDelivered() throws Exception {
    Path journal = dir.resolve("journal");
    Instant t0 = Instant.now().minus(Duration.ofDays(3));
    OperationId owed = new OperationId("shop", "charge-card", IdempotencyKey.of("order-7"));
    OperationId inline = new OperationId("shop", "charge-card", IdempotencyKey.of("order-8"));
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      succeed(j, owed, t0, true);
      succeed(j, inline, t0, false);
    }

    CliRun dry = CliRun.of("journal", "purge", "--dir", journal.toString(), "--older-than", "P1D");
    assertEquals(0, dry.code(), dry.err());
    assertTrue(dry.out().contains("order-8") && !dry.out().contains("order-7"), dry.out());
    assertTrue(dry.out().contains("would purge 1 "), dry.out());
    assertTrue(dry.out().contains("1 more finished operation(s) that old are kept: their outcome is owed to the app's"
        + " handler"), dry.out());

    CliRun yes = CliRun.of("journal", "purge", "--dir", journal.toString(), "--older-than", "P1D", "--yes");
    assertEquals(0, yes.code(), yes.err());
    assertTrue(yes.out().contains("purged 1 ") && yes.out().contains("1 finished operation(s) that old were kept"),
        yes.out());

    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      assertTrue(j.find(owed).isPresent());
      assertFalse(j.find(inline).isPresent());
      assertTrue(j.recordOutcomeDelivered(owed, Instant.now()), "the app's resume handed it over");
    }
    CliRun after = CliRun.of("journal", "purge", "--dir", journal.toString(), "--older-than", "P1D", "--yes");
    assertEquals(0, after.code(), after.err());
    assertEquals("purged 1 finished operation(s) older than PT24H", after.out().trim());
  }

  private static void succeed(JdbcJournal j, OperationId id, Instant at, boolean queued) throws Exception {
    RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/charges")).build();
    j.begin(new NewOperation(id, null, Fingerprinter.defaults().fingerprint(snap), snap, at, queued));
    Lease lease = j.claim(id, "app", at, Duration.ofMinutes(1)).orElseThrow();
    j.transition(id, lease, Transition.finish(OperationState.SUCCEEDED, at.plusMillis(5),
        new ResponseSnapshot(201, Map.of(), new byte[0]), "HTTP 201"));
  }
}
