package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

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
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A scope (a tenant id), an operation name and an app reference are any text the app gives: the
 * journal takes control characters in them. {@code list} prints them raw, so a tenant named with a
 * newline forges a row of the listing (a script reading it counts two operations, one of them
 * FAILED that does not exist), and an ANSI escape in a reference clears the operator's screen or
 * retitles their terminal.
 */
class ReviewTerminalOutputTest {
  @TempDir
  Path dir;

  @Test
  void listPrintsOneLinePerOperationAndNoTerminalEscapes() throws Exception {
    Path journal = dir.resolve("journal");
    Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
    OperationId id = new OperationId("acme\nFAILED     acme", "charge-card", IdempotencyKey.of("k-1"));
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/charges")).build();
      j.begin(new NewOperation(id, "order-7\u001b[2J\u001b]0;owned\u0007", Fingerprinter.defaults().fingerprint(snap),
          snap, t0));
      Lease lease = j.claim(id, "app", t0, Duration.ofMinutes(1)).orElseThrow();
      j.recordAttempt(id, lease, new AttemptRecord(1, lease.generation(), t0, t0.plusMillis(5),
          Classification.PERMANENT, 402, null, "HTTP 402", Duration.ZERO, "permanent"));
      j.transition(id, lease, Transition.finish(OperationState.FAILED, t0.plusMillis(5), null, "HTTP 402"));
    }

    CliRun r = CliRun.of("journal", "list", "--dir", journal.toString());
    assertEquals(0, r.code(), r.err());
    List<String> lines = r.out().lines().toList();
    assertEquals(2, lines.size(), "one line for the one operation and the count, but got:\n" + r.out());
    assertFalse(r.out().contains("\u001b"), "an ESC from the journal reached the terminal:\n"
        + r.out().replace("\u001b", "<ESC>"));
  }
}
