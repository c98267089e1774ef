package dev.idem.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.idem.core.AttemptRecord;
import dev.idem.core.Classification;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentExecutor;
import dev.idem.core.OperationId;
import dev.idem.core.OperationState;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.resume.ResumeHandler;
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
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review (rdocs): docs/cli.md gives the re-drive as {@code idem journal redrive --dir DIR
 * --operation create-order --key K}, and docs/offline.md promises that an operation re-driven past
 * its age limit (after an attempt that may have reached the server) is not sent, "and the re-drive
 * logs a WARN naming the operation". Neither page says that the CLI cannot know the app's age limit:
 * it judges it by {@code --max-pending-age}, an option no page mentions, whose default is 18 h
 * ({@code RedriveCommand}). The app's limit is {@code maxPendingAge}, by default three quarters of
 * its {@code serverKeyRetention}. So, for an app with another retention, the command as documented
 * tells the operator the opposite of what the app then does:
 *
 * <ul>
 *   <li>longer retention (7 days: limit 5 d 6 h), operation 20 h old: the CLI warns "the app's next
 *       resume ends it UNCERTAIN again, unsent ... if its effect does not exist send it again as a
 *       new operation (a new key)", and the app's next resume SENDS it with the old key. An operator
 *       who follows the warning (its effect did not exist: the re-drive was for that) sends a
 *       second operation under a new key: two effects;</li>
 *   <li>shorter retention (4 h: limit 3 h), operation 10 h old: the CLI says "the app's next resume
 *       sends it with the same key" and no warning, and the resume ends it UNCERTAIN again, unsent:
 *       the operator believes a delivery that never happens.</li>
 * </ul>
 */
class RvRdocsRedriveAgeLimitOfTheAppTest {
  @TempDir
  Path dir;

  private final OperationId id = new OperationId(OperationId.DEFAULT_SCOPE, "create-order", IdempotencyKey.of("K"));

  @Test
  void anAppWithALongerRetentionSendsWhatTheCliSaidItWouldNot() throws Exception {
    Path journal = dir.resolve("journal");
    seedUncertain(journal, Instant.now().minus(Duration.ofHours(20)));

    // docs/cli.md's command, as written.
    CliRun redrive = CliRun.of("journal", "redrive", "--dir", journal.toString(), "--operation", "create-order",
        "--key", "K");
    assertEquals(0, redrive.code(), redrive.err());

    int sent = resumeAsTheApp(journal, Duration.ofDays(7));

    boolean toldNotSent = redrive.err().contains("UNCERTAIN again, unsent");
    assertFalse(toldNotSent && sent == 1, "the CLI told the operator that the app's next resume sends nothing and to"
        + " send the order again under a new key, but the app (serverKeyRetention 7 days, maxPendingAge 5 d 6 h)"
        + " sent it " + sent + " time(s) with its old key at its next resume: following the warning makes two"
        + " effects. CLI said: " + redrive.out() + redrive.err());
  }

  @Test
  void anAppWithAShorterRetentionNeverSendsWhatTheCliSaidItWould() throws Exception {
    Path journal = dir.resolve("journal");
    seedUncertain(journal, Instant.now().minus(Duration.ofHours(10)));

    CliRun redrive = CliRun.of("journal", "redrive", "--dir", journal.toString(), "--operation", "create-order",
        "--key", "K");
    assertEquals(0, redrive.code(), redrive.err());

    int sent = resumeAsTheApp(journal, Duration.ofHours(4));
    OperationState after;
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      after = j.find(id).orElseThrow().state();
    }
    assertEquals(0, sent, "precondition: past the app's 3 h age limit, its resume sends nothing");
    assertEquals(OperationState.UNCERTAIN, after);
    assertTrue(redrive.err().contains("warning"), "the CLI said \"" + redrive.out().strip() + "\" with no warning,"
        + " but the app (serverKeyRetention 4 h, maxPendingAge 3 h) ended the re-driven operation UNCERTAIN again,"
        + " unsent, at its next resume; docs/offline.md promises a WARN for a re-drive past the age limit");
  }

  /** An operation created at {@code created}, whose one attempt may have reached the server, UNCERTAIN. */
  private void seedUncertain(Path journal, Instant created) throws Exception {
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal)) {
      RequestSnapshot snap = RequestSnapshot.builder("POST", URI.create("https://api.example/orders"))
          .body("{\"sku\":\"A1\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8), "application/json")
          .build();
      j.begin(new NewOperation(id, null, Fingerprinter.defaults().fingerprint(snap), snap, created));
      Lease lease = j.claim(id, "app", created, Duration.ofMinutes(1)).orElseThrow();
      Instant end = created.plusSeconds(30);
      j.recordAttempt(id, lease, new AttemptRecord(1, lease.generation(), created, end,
          Classification.AMBIGUOUS, null, "java.net.SocketTimeoutException", "read timeout", Duration.ZERO,
          "give up"));
      j.transition(id, lease, Transition.finish(OperationState.UNCERTAIN, end, null, "timeout"));
    }
  }

  /** The app's next start: a resume of create-order; returns how many requests it sent. */
  private int resumeAsTheApp(Path journal, Duration serverKeyRetention) throws Exception {
    AtomicInteger sent = new AtomicInteger();
    try (JdbcJournal j = JdbcJournal.openEmbedded(journal);
        IdempotentExecutor app = IdempotentExecutor.builder().journal(j).serverKeyRetention(serverKeyRetention)
            .build()) {
      app.resumePending(Map.of("create-order", ResumeHandler.of((request, key) -> {
        sent.incrementAndGet();
        return new ResponseSnapshot(201, Map.of("Content-Type", List.of("application/json")), "{}".getBytes());
      }, outcome -> { }, failure -> { })));
    }
    return sent.get();
  }
}
